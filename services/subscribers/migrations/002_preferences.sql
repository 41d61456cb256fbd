-- A subscriber's notification preferences: one global row (workflow_id NULL) and one row per
-- workflow the subscriber has made a choice for. A NULL channel means "not set here", so the
-- layer below decides. Only the global row carries a schedule.
CREATE TABLE subscriber_preferences (
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  subscriber_id   text NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  workflow_id     text CHECK (workflow_id ~ '^[0-9a-f]{24}$'),
  email           boolean,
  sms             boolean,
  in_app          boolean,
  chat            boolean,
  push            boolean,
  schedule        jsonb CHECK (schedule IS NULL OR workflow_id IS NULL),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- Internal subscriber ids are unique across environments; NULLS NOT DISTINCT makes the global
  -- row unique too. Also serves the subscriber's lookups and the cascade from subscribers.
  CONSTRAINT subscriber_preferences_key UNIQUE NULLS NOT DISTINCT (subscriber_id, workflow_id)
);
