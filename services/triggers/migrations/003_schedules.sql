-- Jobs to publish later: the rest of a workflow after a delay step. When due, a schedule moves
-- into the outbox and the relay publishes it like any job.
CREATE TABLE schedules (
  id             bigserial PRIMARY KEY,
  environment_id text NOT NULL,
  trigger_id     text NOT NULL,
  -- The same resumption scheduled twice (a redelivered job) is kept once.
  dedupe_key     text NOT NULL,
  subject        text NOT NULL,
  job            bytea NOT NULL,
  run_at         timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, dedupe_key)
);
CREATE INDEX schedules_run_at_idx ON schedules (run_at);
CREATE INDEX schedules_trigger_idx ON schedules (environment_id, trigger_id);

-- Resumptions share their trigger's id, so the outbox carries the JetStream message id apart.
ALTER TABLE outbox ADD COLUMN message_id text;
