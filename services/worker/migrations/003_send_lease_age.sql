-- Leases are deleted once their message is too old to be sent (DELIVERY_MAX_AGE_MS): the sweep
-- finds them by age. BRIN: leases are written in about the order of their first attempt, and its
-- summaries cost next to nothing per write, where a b-tree would take an entry on every update.
CREATE INDEX send_leases_first_attempt_brin ON send_leases USING brin (first_attempt_at);
