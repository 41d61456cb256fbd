-- Novu's older layouts (/v1/layouts), which the email steps of v1 workflows are sent in:
-- handlebars HTML holding {{{body}}}. Kept apart from the v2 layouts: they render in another
-- language, have another default and other rules.
CREATE TABLE legacy_layouts (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  identifier      text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 255),
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  description     text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
  content         text NOT NULL,
  -- [{name, type, required, defaultValue?}]
  variables       jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(variables) = 'array'),
  is_default      boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, identifier)
);

CREATE UNIQUE INDEX legacy_layouts_default_idx ON legacy_layouts (environment_id) WHERE is_default;
