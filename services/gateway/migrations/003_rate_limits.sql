-- An environment's own API rate limits, e.g. {"serviceLevel": "free"} or {"trigger": 100}
-- (requests per second of a category); NULL: the gateway's defaults (RATE_LIMIT_* variables).
-- Set with `pnpm notify rate-limits`; gateways read it within a minute.
ALTER TABLE environments ADD COLUMN rate_limits jsonb;
