-- The activity feed (GET /v1/notifications) lists the environment's notifications newest first,
-- or those of some subscribers or some workflows: each list is a walk of one of these indexes
-- (a transactionId filter walks the unique key, a channels filter checks each notification's
-- messages by the messages' unique key).
CREATE INDEX notifications_environment_created_idx ON notifications (environment_id, created_at DESC, id DESC);
CREATE INDEX notifications_subscriber_created_idx ON notifications (environment_id, subscriber_id, created_at DESC, id DESC);
CREATE INDEX notifications_template_created_idx ON notifications (environment_id, template_id, created_at DESC, id DESC);
