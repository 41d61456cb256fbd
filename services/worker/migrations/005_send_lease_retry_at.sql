-- When a lease waiting for a retry may be claimed again: a copy of its send that comes back
-- sooner (a redelivery, a hand-back after a failed record) waits for it instead of retrying early.
ALTER TABLE send_leases ADD COLUMN retry_at timestamptz;
