-- The canceled trigger a digest was passed on from: a cancel made again (its first answer lost
-- on the way) answers the digests it passed, so their next events' jobs are shown waiting again.
ALTER TABLE digests ADD COLUMN passed_from text;
CREATE INDEX digests_passed_from_idx ON digests (environment_id, passed_from) WHERE passed_from IS NOT NULL;
