-- The request an outbox job comes from (its request id and trace context, as headers), so the
-- relay publishes the job as a continuation of that request: its logs and its trace go on.
ALTER TABLE outbox ADD COLUMN origin jsonb;
