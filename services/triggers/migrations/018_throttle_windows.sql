-- Throttle steps' windows, one per environment and key (the workflow, its step, the subscriber and
-- the throttle key's value): when the window ends, and the transactions it let through (at most
-- the step's threshold), so that a redelivered job finds its own and is let through again.
CREATE TABLE throttle_windows (
  environment_id text NOT NULL,
  throttle_key   text NOT NULL,
  window_ends    timestamptz NOT NULL,
  transactions   text[] NOT NULL,
  PRIMARY KEY (environment_id, throttle_key)
);

-- What the relay's purge walks: windows that ended long ago.
CREATE INDEX throttle_windows_ends_idx ON throttle_windows (window_ends);
