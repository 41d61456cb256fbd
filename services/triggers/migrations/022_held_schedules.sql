-- A held schedule waits for a send, not for a time: the rest of a run after a step that stops on
-- failure, kept when the step's messages are handed over and released (made due) by the first of
-- its sends that succeeds. Held rows have no run_at until then; those never released go with
-- the other step state once old.
ALTER TABLE schedules ALTER COLUMN run_at DROP NOT NULL;
CREATE INDEX schedules_held_idx ON schedules (created_at) WHERE run_at IS NULL;
