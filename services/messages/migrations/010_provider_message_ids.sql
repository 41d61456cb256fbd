-- notify:no-transaction
-- A provider's webhook names a message by the id the provider answered when it accepted it. Built
-- concurrently so sends go on recording while it builds; a build stopped half-way leaves an
-- invalid index, dropped when this runs again.
DROP INDEX CONCURRENTLY IF EXISTS delivery_attempts_provider_message_idx;
CREATE INDEX CONCURRENTLY delivery_attempts_provider_message_idx ON delivery_attempts (environment_id, provider_id, provider_message_id)
  WHERE provider_message_id IS NOT NULL;
