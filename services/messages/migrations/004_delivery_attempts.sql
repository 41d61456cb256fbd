-- Every try at handing a message to its provider, served as the notification's execution details.
CREATE TABLE delivery_attempts (
  id                     text COLLATE "C" PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text COLLATE "C" NOT NULL,
  message_id             text COLLATE "C" NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  notification_id        text COLLATE "C" NOT NULL,
  external_subscriber_id text NOT NULL,
  attempt                integer NOT NULL CHECK (attempt > 0),
  provider_id            text NOT NULL,
  status                 text NOT NULL CHECK (status IN ('success', 'failed')),
  error_id               text,
  error_text             text,
  provider_message_id    text,
  detail                 text NOT NULL,
  started_at             timestamptz NOT NULL,
  duration_ms            integer NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  -- A repeated record of the same try (the worker retrying its RPC) changes nothing.
  UNIQUE (message_id, attempt)
);

CREATE INDEX delivery_attempts_notification_idx ON delivery_attempts (environment_id, notification_id, external_subscriber_id, created_at);

-- What the provider called the message it accepted.
ALTER TABLE messages ADD COLUMN provider_message_id text;
