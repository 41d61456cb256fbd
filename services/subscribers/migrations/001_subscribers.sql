CREATE TABLE subscribers (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  subscriber_id   text NOT NULL CHECK (length(subscriber_id) BETWEEN 1 AND 255),
  first_name      text,
  last_name       text,
  email           text,
  phone           text,
  avatar          text,
  locale          text,
  timezone        text,
  data            jsonb,
  channels        jsonb NOT NULL DEFAULT '[]',
  is_online       boolean,
  last_online_at  timestamptz,
  version         integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, subscriber_id)
);

-- Keyset paging (v2 cursors are ids) and offset paging in creation order.
CREATE INDEX subscribers_environment_id_idx ON subscribers (environment_id, id);
CREATE INDEX subscribers_environment_email_idx ON subscribers (environment_id, email) WHERE email IS NOT NULL;
CREATE INDEX subscribers_environment_phone_idx ON subscribers (environment_id, phone) WHERE phone IS NOT NULL;
