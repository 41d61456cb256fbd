-- Digest steps: a subscriber's events of one key gathered until the digest's window ends, then
-- the rest of the workflow runs once for all of them.

-- One row per digest key. Its lock serializes the events of a key, and it remembers when the
-- key's last event arrived, which a backoff digest needs even when nothing was digested.
CREATE TABLE digest_keys (
  environment_id text NOT NULL,
  workflow_id    text NOT NULL,
  -- Internal subscriber id.
  subscriber_id  text NOT NULL,
  step_id        text NOT NULL,
  -- The value at the step's digestKey path, JSON-encoded; '' when the payload has none.
  digest_key     text NOT NULL,
  last_event_at  timestamptz,
  PRIMARY KEY (environment_id, workflow_id, subscriber_id, step_id, digest_key)
);

CREATE TABLE digests (
  id             bigserial PRIMARY KEY,
  environment_id text NOT NULL,
  workflow_id    text NOT NULL,
  subscriber_id  text NOT NULL,
  step_id        text NOT NULL,
  digest_key     text NOT NULL,
  -- The trigger whose event opened it: its job resumes the run, and canceling it drops the digest.
  trigger_id     text NOT NULL,
  run_at         timestamptz NOT NULL,
  -- Set when its schedule moves into the outbox (or its trigger is canceled): later events open a new one.
  closed_at      timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
-- At most one open digest per key: the index, not a prior read, decides which of two racing events opens it.
CREATE UNIQUE INDEX digests_open_key ON digests (environment_id, workflow_id, subscriber_id, step_id, digest_key) WHERE closed_at IS NULL;
CREATE INDEX digests_trigger_idx ON digests (environment_id, trigger_id) WHERE closed_at IS NULL;

-- Every event that reached a digest step, once per (subscriber, step, transaction), so a
-- redelivered job is not counted twice: digested (digest_id, payload) or run at once (backoff).
-- The id is the arrival order.
CREATE TABLE digest_events (
  id             bigserial PRIMARY KEY,
  environment_id text NOT NULL,
  subscriber_id  text NOT NULL,
  step_id        text NOT NULL,
  transaction_id text NOT NULL,
  digest_id      bigint REFERENCES digests (id) ON DELETE CASCADE,
  payload        jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, subscriber_id, step_id, transaction_id)
);
CREATE INDEX digest_events_digest_idx ON digest_events (digest_id, id) WHERE digest_id IS NOT NULL;
CREATE INDEX digest_events_transaction_idx ON digest_events (environment_id, transaction_id);

-- A schedule that ends digests names them: moving it into the outbox closes them in the same statement.
ALTER TABLE schedules ADD COLUMN digest_ids bigint[];
