-- Accepted triggers and the outbox the relay publishes from.

-- One row per accepted (processed) trigger: the unique key is what makes a repeated
-- transactionId create nothing, whichever replica or request gets there first.
CREATE TABLE trigger_records (
  id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id text NOT NULL,
  environment_id  text NOT NULL,
  transaction_id  text NOT NULL CHECK (length(transaction_id) BETWEEN 1 AND 255),
  workflow_id     text NOT NULL,
  status          text NOT NULL,
  canceled_at     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, transaction_id)
);
CREATE INDEX trigger_records_created_idx ON trigger_records (created_at);

-- Jobs written with their trigger record, deleted once JetStream has acknowledged them.
CREATE TABLE outbox (
  id             bigserial PRIMARY KEY,
  environment_id text NOT NULL,
  trigger_id     text NOT NULL,
  subject        text NOT NULL,
  job            bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_trigger_idx ON outbox (environment_id, trigger_id);
