-- notify:no-transaction
-- The worker asks, for every batch of jobs it runs, which of them were canceled: a handful of
-- records among millions. This index holds only those, so the answer costs a look into a
-- near-empty index instead of a probe per job into the records' unique index (or, with stale
-- statistics, a bitmap scan of it). Built concurrently: on a deployment upgrading with millions
-- of records, triggers keep being accepted while it builds. A build stopped half-way leaves an
-- invalid index, dropped when this runs again.
DROP INDEX CONCURRENTLY IF EXISTS trigger_records_canceled_idx;
CREATE INDEX CONCURRENTLY trigger_records_canceled_idx ON trigger_records (environment_id, transaction_id) WHERE canceled_at IS NOT NULL;
