import { Counter, metricsRegistry, repeatEvery, type Logger, type Pool } from "@notify/runtime";
import * as store from "./store.js";

export interface LeaseSweepDeps {
  pool: Pool;
  /** DELIVERY_MAX_AGE_MS: no send of an older message is made, so its lease guards nothing. */
  maxAgeMs: number;
  log: Logger;
}

/** Leases deleted per statement: a sweep holds the locks of at most this many rows at once. */
const SWEEP_BATCH = 5_000;
/** Statements per sweep: a backlog goes over several sweeps rather than holding a connection. */
const SWEEP_BATCHES = 20;
/** Sweeps at least this often, and ten times per max age when that is shorter (tests). */
const MAX_SWEEP_INTERVAL_MS = 3_600_000;

const leasesDeleted = new Counter({
  name: "notify_send_leases_deleted_total",
  help: "Send leases deleted once their messages were too old to be sent (twice DELIVERY_MAX_AGE_MS)",
  registers: [metricsRegistry],
});

/**
 * Deletes the send leases nothing can need any more. A send whose message is older than the max
 * age is never made (send.ts), so a lease first tried twice that long ago can go: the margin
 * covers the clocks of workers and database disagreeing. Unknown outcomes and sends under way
 * stay, for an operator. Every worker sweeps; they skip each other's rows.
 */
export function startLeaseSweep(deps: LeaseSweepDeps): { stop(): Promise<void> } {
  const keptMs = 2 * deps.maxAgeMs;
  const everyMs = Math.min(MAX_SWEEP_INTERVAL_MS, Math.ceil(deps.maxAgeMs / 10));

  async function sweep(): Promise<void> {
    let deleted = 0;
    for (let batch = 0; batch < SWEEP_BATCHES; batch += 1) {
      const count = await store.deleteOldLeases(deps.pool, keptMs, SWEEP_BATCH);
      deleted += count;
      if (count < SWEEP_BATCH) break;
    }
    leasesDeleted.inc(deleted);
    if (deleted > 0) deps.log.info({ deleted }, "old send leases deleted");
  }

  return repeatEvery(everyMs, sweep, (error) => deps.log.warn({ err: error }, "send lease sweep failed; trying again at the next"));
}
