-- When a digest's run first read its events. Canceling a trigger takes its events out of a digest
-- that came due only until then: the steps of the run that follow read the same events.
ALTER TABLE digests ADD COLUMN read_at timestamptz;
