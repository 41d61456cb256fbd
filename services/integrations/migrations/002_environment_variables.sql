-- Novu's environment variables: keys of an organization, each with a value per environment,
-- which v2 templates read as `{{ env.KEY }}`.
CREATE TABLE environment_variables (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  key             text NOT NULL CHECK (key ~ '^[A-Za-z][A-Za-z0-9_]*$' AND length(key) <= 256),
  type            text NOT NULL DEFAULT 'string' CHECK (type = 'string'),
  is_secret       boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, key)
);

-- Every value is sealed (AES-256-GCM, as integration secrets are), secret or not: a variable can
-- become secret later, and its stored values must not have been plain text. The associated data
-- is `<variable id>/<environment id>`, so a sealed value cannot be moved to another row.
CREATE TABLE environment_variable_values (
  variable_id     text NOT NULL REFERENCES environment_variables (id) ON DELETE CASCADE,
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  value           bytea NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (variable_id, environment_id)
);

CREATE INDEX environment_variable_values_environment_idx ON environment_variable_values (environment_id);
