-- What providers reported through their webhooks of messages they accepted (delivered, opened,
-- bounced, ...): served with the send attempts as the messages' execution details.
CREATE TABLE provider_events (
  id                     text COLLATE "C" PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text COLLATE "C" NOT NULL,
  message_id             text COLLATE "C" NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  notification_id        text COLLATE "C" NOT NULL,
  external_subscriber_id text NOT NULL,
  provider_id            text NOT NULL,
  provider_message_id    text NOT NULL,
  status                 text NOT NULL,
  occurred_at            timestamptz NOT NULL,
  external_id            text,
  attempts               integer,
  response               text,
  raw                    text NOT NULL,
  -- A provider posts its events again when it saw no answer: the same event text changes nothing.
  event_key              bytea NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (message_id, event_key)
);

CREATE INDEX provider_events_notification_idx ON provider_events (environment_id, notification_id, external_subscriber_id, created_at);
