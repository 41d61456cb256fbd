CREATE TABLE topics (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  key             text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  name            text CHECK (length(name) <= 255),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, key)
);

-- Offset paging in creation order.
CREATE INDEX topics_environment_id_idx ON topics (environment_id, id);

-- A subscriber's membership of a topic. Subscribers live in the subscribers service: both their
-- internal id (stable, what fan-out pages by) and their external subscriberId (what clients name)
-- are recorded.
CREATE TABLE subscriptions (
  id                     text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text NOT NULL,
  topic_id               text NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
  internal_subscriber_id text NOT NULL,
  external_subscriber_id text NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (topic_id, internal_subscriber_id)
);

-- Membership checks by external id, and cursor paging in joining order.
CREATE INDEX subscriptions_topic_external_idx ON subscriptions (topic_id, external_subscriber_id);
CREATE INDEX subscriptions_topic_id_idx ON subscriptions (topic_id, id);
-- Removing every membership of a deleted subscriber.
CREATE INDEX subscriptions_environment_subscriber_idx ON subscriptions (environment_id, internal_subscriber_id);
