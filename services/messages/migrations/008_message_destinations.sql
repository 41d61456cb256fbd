-- notify:no-transaction
-- A chat or push step sends one message per destination of the subscriber (each chat or push
-- channel, each channel endpoint), where the idempotency key allowed one per step and channel:
-- a subscriber with two chat channels got one message. Every message written before keeps ''
-- and so its key. The new key is built concurrently so writes go on while it builds; a build
-- stopped half-way leaves an invalid index, dropped when this runs again.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS destination text NOT NULL DEFAULT '';
DROP INDEX CONCURRENTLY IF EXISTS messages_destination_key;
CREATE UNIQUE INDEX CONCURRENTLY messages_destination_key ON messages (environment_id, transaction_id, subscriber_id, step_id, channel, destination);
DROP INDEX CONCURRENTLY IF EXISTS messages_idempotency_key;
