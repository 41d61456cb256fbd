-- The Inbox: each environment gets a public identifier (the applicationIdentifier browsers send),
-- a secret that subscriber session tokens are signed with (mixed with GATEWAY_ENCRYPTION_KEY, so
-- this column alone cannot forge a session) and the browser origins its Inbox may be used from.
-- Both columns are filled from gen_random_uuid(), the strong random source Postgres has without
-- an extension: the identifier from 12 random bytes (base64url), the secret from two UUIDs.
ALTER TABLE environments
  ADD COLUMN identifier text NOT NULL UNIQUE
    DEFAULT translate(encode(substring(uuid_send(gen_random_uuid()) FROM 1 FOR 6) || substring(uuid_send(gen_random_uuid()) FROM 1 FOR 6), 'base64'), '+/', '-_'),
  ADD COLUMN session_secret bytea NOT NULL DEFAULT uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()),
  -- NULL: any origin.
  ADD COLUMN inbox_origins text[];

-- The key itself, sealed with GATEWAY_ENCRYPTION_KEY (AES-256-GCM, the key hash as context), so a
-- subscriberHash can be checked against it. Keys stored before this column have none and cannot
-- verify a subscriberHash: create a new key (`pnpm notify keys create`) to use HMAC.
ALTER TABLE api_keys ADD COLUMN key_sealed bytea;
CREATE INDEX api_keys_environment_idx ON api_keys (environment_id) WHERE revoked_at IS NULL;
