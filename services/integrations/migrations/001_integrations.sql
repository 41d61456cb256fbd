-- Environments this service has set up (their default in-app integration exists from then on).
-- Environments are created by the gateway; a row here appears on an environment's first call.
CREATE TABLE environments (
  environment_id  text PRIMARY KEY,
  organization_id text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE integrations (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  provider_id     text NOT NULL CHECK (length(provider_id) BETWEEN 1 AND 255),
  channel         text NOT NULL CHECK (channel IN ('in_app', 'email', 'sms', 'chat', 'push')),
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  identifier      text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 255),
  -- The credential and configuration fields that are not secret, as the public JSON names them.
  credentials     jsonb NOT NULL DEFAULT '{}',
  configurations  jsonb NOT NULL DEFAULT '{}',
  -- The secret fields of both, sealed with AES-256-GCM (version byte, IV, tag, ciphertext); the
  -- integration id is the associated data, so a sealed value cannot be moved to another row.
  secrets         bytea,
  conditions      jsonb NOT NULL DEFAULT '[]',
  active          boolean NOT NULL DEFAULT false,
  is_primary      boolean NOT NULL DEFAULT false,
  priority        integer NOT NULL DEFAULT 0,
  deleted         boolean NOT NULL DEFAULT false,
  deleted_at      timestamptz,
  deleted_by      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- A primary is the channel's unconditional default.
  CHECK (NOT is_primary OR (active AND channel IN ('email', 'sms') AND conditions = '[]'::jsonb))
);

CREATE UNIQUE INDEX integrations_identifier_key ON integrations (environment_id, identifier) WHERE NOT deleted;
-- At most one primary per channel of an environment, whatever the concurrency.
CREATE UNIQUE INDEX integrations_primary_key ON integrations (environment_id, channel) WHERE is_primary AND NOT deleted;
-- One Novu in-app provider per environment, as Novu allows.
CREATE UNIQUE INDEX integrations_novu_in_app_key ON integrations (environment_id)
  WHERE provider_id = 'novu' AND channel = 'in_app' AND NOT deleted;
CREATE INDEX integrations_environment_channel_idx ON integrations (environment_id, channel, created_at) WHERE NOT deleted;
CREATE INDEX integrations_environment_provider_idx ON integrations (environment_id, provider_id, created_at) WHERE active AND NOT deleted;
CREATE INDEX integrations_organization_active_idx ON integrations (organization_id, created_at) WHERE active AND NOT deleted;
