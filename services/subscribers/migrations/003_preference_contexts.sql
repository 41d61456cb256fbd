-- notify:no-transaction
-- Preferences per context scope (Novu's contexts): the keys ("type:id", sorted) of the contexts a
-- row was chosen in. An Inbox session with contexts reads and writes the rows of exactly its
-- scope, and a trigger with contexts is decided by them; every row made before (none) stays the
-- scope without contexts. The unique key becomes (subscriber, scope, workflow), built concurrently
-- so preference writes go on while it builds; a build stopped half-way leaves an invalid index,
-- dropped when this runs again.
ALTER TABLE subscriber_preferences ADD COLUMN IF NOT EXISTS context_keys text[] NOT NULL DEFAULT '{}';
DROP INDEX CONCURRENTLY IF EXISTS subscriber_preferences_scope_key;
CREATE UNIQUE INDEX CONCURRENTLY subscriber_preferences_scope_key ON subscriber_preferences (subscriber_id, context_keys, workflow_id) NULLS NOT DISTINCT;
ALTER TABLE subscriber_preferences DROP CONSTRAINT IF EXISTS subscriber_preferences_key;
