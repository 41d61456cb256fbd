-- Novu's channel connections: the OAuth grant of a chat workspace through one integration of an
-- environment, held by a subscriber or shared by the contexts it is scoped to.
CREATE TABLE channel_connections (
  id                     text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text NOT NULL,
  identifier             text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 255),
  -- Integrations are only ever soft-deleted; deleting one deletes its connections (the service
  -- does, in the same transaction), and renaming it renames them.
  integration_id         text NOT NULL REFERENCES integrations (id),
  integration_identifier text NOT NULL,
  -- Copied from the integration when the connection is made.
  provider_id            text NOT NULL,
  channel                text NOT NULL,
  -- The external subscriberId; null for a shared connection.
  subscriber_id          text,
  -- "type:id", sorted and distinct, so equal sets are equal arrays.
  context_keys           text[] NOT NULL DEFAULT '{}',
  -- {id, name?, botUserId?}
  workspace              jsonb NOT NULL,
  -- The grant's parts that are not secret: {expiresAt?, refreshTokenExpiresAt?}.
  auth                   jsonb NOT NULL DEFAULT '{}',
  -- {accessToken, refreshToken?} sealed (AES-256-GCM, as integration secrets are) with
  -- `channel-connection/<id>/<environment id>` as associated data, so it opens in this row only.
  auth_secrets           bytea NOT NULL,
  -- Whether the sealed part holds a refresh token, so answers mask it without opening the seal.
  has_refresh_token      boolean NOT NULL DEFAULT false,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT channel_connections_identifier_key UNIQUE (environment_id, identifier)
);

-- One connection per integration, subscriber (or none: shared) and exact set of contexts.
CREATE UNIQUE INDEX channel_connections_scope_key
  ON channel_connections (environment_id, integration_id, subscriber_id, context_keys) NULLS NOT DISTINCT;
-- The public list's orders (the cursor's id breaks ties).
CREATE INDEX channel_connections_created_idx ON channel_connections (environment_id, created_at, id);
CREATE INDEX channel_connections_updated_idx ON channel_connections (environment_id, updated_at, id);
