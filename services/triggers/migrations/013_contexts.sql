-- Novu's contexts: metadata a trigger or an Inbox session names by type and id ("tenant" and
-- "acme" are the key "tenant:acme"), created on first mention and reused. `position` orders the
-- list (creation order) and is its cursor.
CREATE TABLE contexts (
  environment_id  text COLLATE "C" NOT NULL,
  organization_id text NOT NULL,
  type            text COLLATE "C" NOT NULL CHECK (type ~ '^[a-zA-Z0-9_-]{1,100}$'),
  id              text COLLATE "C" NOT NULL CHECK (id ~ '^[a-zA-Z0-9_-]{1,100}$'),
  data            jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
  position        bigint GENERATED ALWAYS AS IDENTITY,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (environment_id, type, id)
);

CREATE UNIQUE INDEX contexts_environment_position_idx ON contexts (environment_id, position);
