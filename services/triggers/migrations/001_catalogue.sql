-- The workflow catalogue: notification groups, feeds, workflows, and tenants.

CREATE TABLE notification_groups (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  parent_id       text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- Also what makes the lazily created "General" group exist exactly once per environment.
  UNIQUE (environment_id, name)
);

CREATE TABLE feeds (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  identifier      text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 255),
  deleted         boolean NOT NULL DEFAULT false,
  deleted_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A deleted feed frees its identifier; messages keep pointing at the deleted feed's id.
CREATE UNIQUE INDEX feeds_identifier_key ON feeds (environment_id, identifier) WHERE NOT deleted;
CREATE INDEX feeds_environment_id_idx ON feeds (environment_id, id) WHERE NOT deleted;

CREATE TABLE workflows (
  id                    text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id       text NOT NULL,
  environment_id        text NOT NULL,
  creator_id            text NOT NULL,
  name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  description           text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
  trigger_identifier    text NOT NULL CHECK (length(trigger_identifier) BETWEEN 1 AND 255),
  active                boolean NOT NULL,
  draft                 boolean NOT NULL,
  critical              boolean NOT NULL,
  tags                  text[] NOT NULL DEFAULT '{}',
  -- All five channels, each true or false.
  preference_settings   jsonb NOT NULL,
  -- The steps as the service's proto JSON (Step messages), ids included.
  steps                 jsonb NOT NULL CHECK (jsonb_typeof(steps) = 'array' AND jsonb_array_length(steps) <= 50),
  -- Derived from steps at every write, so lookups that need them do not read the steps.
  active_channels       text[] NOT NULL DEFAULT '{}',
  variables             text[] NOT NULL DEFAULT '{}',
  subscriber_variables  text[] NOT NULL DEFAULT '{}',
  notification_group_id text NOT NULL REFERENCES notification_groups (id),
  data                  jsonb,
  deleted               boolean NOT NULL DEFAULT false,
  deleted_at            timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

-- Trigger identifiers are unique among live workflows; a deleted one frees its identifier.
CREATE UNIQUE INDEX workflows_trigger_identifier_key ON workflows (environment_id, trigger_identifier) WHERE NOT deleted;
CREATE INDEX workflows_environment_id_idx ON workflows (environment_id, id) WHERE NOT deleted;
CREATE INDEX workflows_active_idx ON workflows (environment_id, id) WHERE active AND NOT deleted;
CREATE INDEX workflows_notification_group_idx ON workflows (notification_group_id);

CREATE TABLE tenants (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  identifier      text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 255),
  name            text CHECK (length(name) <= 255),
  data            jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, identifier)
);

CREATE INDEX tenants_environment_id_idx ON tenants (environment_id, id);
