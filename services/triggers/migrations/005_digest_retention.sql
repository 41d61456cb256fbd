-- What the relay's purge walks: digest state older than the retention period, oldest first.
CREATE INDEX digests_closed_idx ON digests (closed_at) WHERE closed_at IS NOT NULL;
CREATE INDEX digest_events_lone_idx ON digest_events (created_at) WHERE digest_id IS NULL;
CREATE INDEX digest_keys_last_event_idx ON digest_keys (last_event_at);
