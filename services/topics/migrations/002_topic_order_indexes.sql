-- GET /v2/topics also pages by creation and by update time (ties by id); by id and by key it
-- walks the index and the unique key of 001.
CREATE INDEX topics_environment_created_idx ON topics (environment_id, created_at, id);
CREATE INDEX topics_environment_updated_idx ON topics (environment_id, updated_at, id);
