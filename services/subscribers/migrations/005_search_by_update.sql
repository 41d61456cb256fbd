-- notify:no-transaction
-- The v2 search ordered by last update (orderBy=updatedAt) walks this index, as its default order
-- walks (environment_id, id). Built concurrently so writes go on while it builds; a build stopped
-- half-way leaves an invalid index, dropped when this runs again.
DROP INDEX CONCURRENTLY IF EXISTS subscribers_environment_updated_idx;
CREATE INDEX CONCURRENTLY subscribers_environment_updated_idx ON subscribers (environment_id, updated_at, id);
