-- A held schedule waits for a send, not for a time: the rest of a run after a step that stops on
-- failure, kept when the step's messages are handed over and released (made due) by the first of
-- its sends that succeeds. Held rows have no run_at until then; those never released go once
-- their trigger's record would.
ALTER TABLE schedules ALTER COLUMN run_at DROP NOT NULL;
CREATE INDEX schedules_held_idx ON schedules (created_at) WHERE run_at IS NULL;

-- A released hold's key stays taken after its schedule ran: a job run again (redelivered,
-- replayed) that holds it anew holds nothing, and a later send releases nothing, so the rest
-- runs once.
CREATE TABLE released_holds (
  environment_id text NOT NULL,
  dedupe_key     text NOT NULL,
  released_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (environment_id, dedupe_key)
);
CREATE INDEX released_holds_released_at_idx ON released_holds (released_at);
