-- Canceling the trigger that opened a digest hands the digest to the trigger of its next event, as
-- Novu makes the next merged job the main one: the digest's run then goes on under that trigger's
-- job, payload and transactionId. So each digested event names its trigger and the step its run
-- would go on from, and the job of each trigger whose events joined a digest is kept while one
-- of those digests is open.
ALTER TABLE digest_events ADD COLUMN trigger_id text, ADD COLUMN from_step int;

CREATE TABLE digest_jobs (
  environment_id text NOT NULL,
  trigger_id     text NOT NULL,
  -- What the relay's purge looks for in open digests (digest_events_transaction_idx).
  transaction_id text NOT NULL,
  -- A TriggerJob without its recipients (a resumption names its subscribers) nor resumption.
  job            bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (environment_id, trigger_id)
);
CREATE INDEX digest_jobs_created_idx ON digest_jobs (created_at);
