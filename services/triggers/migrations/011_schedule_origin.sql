-- The request a schedule comes from (its request id and trace context, as headers): the relay
-- publishes a due resumption as a continuation of that request, as it does an outbox job, so the
-- rest of a workflow after a delay or digest logs the same request id and goes on with its trace.
ALTER TABLE schedules ADD COLUMN origin jsonb;
