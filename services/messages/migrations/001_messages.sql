-- Ids and the columns every lookup starts with use the "C" collation: byte-order comparisons are
-- cheaper than the database's locale-aware ones, and mark-all walks ids in that order.

-- One per transaction and subscriber; the messages of its steps point at it.
CREATE TABLE notifications (
  id                     text COLLATE "C" PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text COLLATE "C" NOT NULL,
  transaction_id         text COLLATE "C" NOT NULL,
  subscriber_id          text COLLATE "C" NOT NULL,
  external_subscriber_id text NOT NULL,
  template_id            text NOT NULL,
  template_identifier    text,
  payload                jsonb,
  created_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, transaction_id, subscriber_id)
);

CREATE TABLE messages (
  id                     text COLLATE "C" PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text COLLATE "C" NOT NULL,
  notification_id        text COLLATE "C" NOT NULL REFERENCES notifications (id),
  -- Internal subscriber id (_subscriberId) and the caller's subscriberId.
  subscriber_id          text COLLATE "C" NOT NULL,
  external_subscriber_id text NOT NULL,
  template_id            text NOT NULL,
  template_identifier    text,
  message_template_id    text NOT NULL,
  step_id                text COLLATE "C" NOT NULL,
  job_id                 text,
  transaction_id         text COLLATE "C" NOT NULL,
  channel                text COLLATE "C" NOT NULL CHECK (channel IN ('in_app', 'email', 'sms', 'chat', 'push')),
  -- A string, or an array of email blocks.
  content                jsonb CHECK (content IS NULL OR jsonb_typeof(content) IN ('string', 'array')),
  subject                text,
  title                  text,
  email                  text,
  phone                  text,
  direct_webhook_url     text,
  provider_id            text,
  device_tokens          text[] NOT NULL DEFAULT '{}',
  cta                    jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(cta) = 'object'),
  -- The feed's _id, and its identifier so feed filters need no lookup in the triggers service.
  feed_id                text,
  feed_identifier        text COLLATE "C",
  status                 text NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'error', 'warning')),
  error_id               text,
  error_text             text,
  read                   boolean NOT NULL DEFAULT false,
  seen                   boolean NOT NULL DEFAULT false,
  last_seen_date         timestamptz,
  last_read_date         timestamptz,
  delivered_at           timestamptz[] NOT NULL DEFAULT '{}',
  snoozed_until          timestamptz,
  payload                jsonb,
  overrides              jsonb,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  -- Every transition keeps this: reading a message also sees it; "unseen" also unreads it.
  CONSTRAINT messages_read_implies_seen CHECK (seen OR NOT read)
);

-- The worker's writes are idempotent on this key (a redelivered job creates nothing new); it also
-- serves deletes and lists by transaction.
CREATE UNIQUE INDEX messages_idempotency_key ON messages (environment_id, transaction_id, subscriber_id, step_id, channel);

-- The in-app feed, newest first.
CREATE INDEX messages_feed_idx ON messages (environment_id, subscriber_id, created_at DESC, id DESC) WHERE channel = 'in_app';

-- Bounded counts of one seen state, and mark-all's chunks: each is a range of exactly the rows in
-- one state, walked by id, so neither ever reads rows it does not need.
CREATE INDEX messages_seen_idx ON messages (environment_id, subscriber_id, seen, id) WHERE channel = 'in_app';
CREATE INDEX messages_read_idx ON messages (environment_id, subscriber_id, read, id) WHERE channel = 'in_app';

-- The environment's messages, newest first (GET /v1/messages).
CREATE INDEX messages_environment_created_idx ON messages (environment_id, created_at DESC, id DESC);
