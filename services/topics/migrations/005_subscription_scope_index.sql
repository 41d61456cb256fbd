-- notify:no-transaction
-- A subscriber holds one subscription per topic and context scope, and fan-out walks a topic's
-- members of one scope in subscriber order: the unique key becomes (topic, scope, subscriber).
-- Built concurrently, so subscriptions keep being made while it builds on a large table; a build
-- stopped half-way leaves an invalid index, dropped when this runs again.
DROP INDEX CONCURRENTLY IF EXISTS subscriptions_topic_scope_subscriber_idx;
CREATE UNIQUE INDEX CONCURRENTLY subscriptions_topic_scope_subscriber_idx ON subscriptions (topic_id, context_keys, internal_subscriber_id);
ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS subscriptions_topic_id_internal_subscriber_id_key;
