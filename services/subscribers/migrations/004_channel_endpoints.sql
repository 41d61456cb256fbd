-- A subscriber's chat destinations beyond their channel credentials (Novu's channel endpoints):
-- each bound to an integration by its identifier and scoped to exactly the contexts it was made
-- for (keys "type:id", sorted; none for every trigger without contexts). An endpoint goes with
-- its subscriber. The identifier is the environment's name for it.
CREATE TABLE channel_endpoints (
  id                     text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text NOT NULL,
  identifier             text NOT NULL,
  subscriber_id          text NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  integration_identifier text NOT NULL,
  provider_id            text NOT NULL,
  channel                text NOT NULL,
  connection_identifier  text,
  context_keys           text[] NOT NULL DEFAULT '{}',
  type                   text NOT NULL,
  endpoint               jsonb NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, identifier)
);

-- Listing pages (by id, which follows creation) and the worker's per-page read by subscriber.
CREATE INDEX channel_endpoints_environment_id_idx ON channel_endpoints (environment_id, id);
CREATE INDEX channel_endpoints_subscriber_idx ON channel_endpoints (subscriber_id, channel);
