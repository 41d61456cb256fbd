CREATE TABLE organizations (
  id         text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  name       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE environments (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, name)
);

-- Keys are stored only as SHA-256 hashes; the prefix lets an operator name a key without knowing it.
CREATE TABLE api_keys (
  id             text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  environment_id text NOT NULL REFERENCES environments (id),
  key_hash       text NOT NULL UNIQUE,
  prefix         text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz,
  revoked_at     timestamptz
);
CREATE INDEX api_keys_prefix_idx ON api_keys (prefix);
