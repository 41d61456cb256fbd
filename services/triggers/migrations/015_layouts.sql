-- Novu's v2 email layouts: what an email step's body is placed into at the layout's `content`
-- variable. `email_body` and `email_editor_type` are both set or both unset (content cleared).
CREATE TABLE layouts (
  id                     text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text NOT NULL,
  identifier             text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 255),
  name                   text NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
  is_default             boolean NOT NULL DEFAULT false,
  is_translation_enabled boolean NOT NULL DEFAULT false,
  email_body             text,
  email_editor_type      text CHECK (email_editor_type IN ('block', 'html')),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  CHECK ((email_body IS NULL) = (email_editor_type IS NULL)),
  UNIQUE (environment_id, identifier)
);

-- One default per environment: creating the first layout and a concurrent second one cannot both make theirs the default.
CREATE UNIQUE INDEX layouts_default_idx ON layouts (environment_id) WHERE is_default;
