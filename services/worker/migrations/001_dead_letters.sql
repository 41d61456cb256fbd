-- Jobs that failed on every allowed delivery: kept for inspection and replay.
CREATE TABLE dead_letters (
  id              bigserial PRIMARY KEY,
  organization_id text,
  environment_id  text,
  subject         text NOT NULL,
  job             bytea NOT NULL,
  error           text NOT NULL,
  deliveries      integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dead_letters_environment_idx ON dead_letters (environment_id, created_at);
