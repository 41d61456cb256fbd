-- When a workflow was last triggered, as Novu keeps it: written at most every few minutes, so
-- that triggers seldom wait on it; the v2 workflow list shows and orders by it.
ALTER TABLE workflows ADD COLUMN last_triggered_at timestamptz;
