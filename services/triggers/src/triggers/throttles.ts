import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { triggersV1 } from "@notify/proto";
import { boundBatch, invalidField, withTransaction, type Pool } from "@notify/runtime";
import * as store from "./store.js";

/** Entries in one call. */
export const MAX_THROTTLE_BATCH = 1000;

function checkEntries(entries: readonly triggersV1.ThrottleEntry[]): void {
  boundBatch("entries", entries.length, MAX_THROTTLE_BATCH);
  entries.forEach((entry, index) => {
    if (!entry.key) throw invalidField(`entries[${index}].key`, "is required");
    if (!entry.transactionId) throw invalidField(`entries[${index}].transactionId`, "is required");
    if (!entry.windowEnds) throw invalidField(`entries[${index}].windowEnds`, "is required");
    if (entry.threshold < 1) throw invalidField(`entries[${index}].threshold`, "must be at least 1", entry.threshold);
  });
}

/**
 * Decides the entries in order in one transaction, with their keys' windows locked: whichever
 * worker sends them, the runs of one key are counted one batch at a time. A window that ended is
 * opened again by the next entry, until that entry's end; an entry whose transaction the window
 * let through already (a redelivered job) passes again without counting. Answers, per entry,
 * whether it passed.
 */
export async function passThrottles(pool: Pool, environmentId: string, entries: readonly triggersV1.ThrottleEntry[], now = new Date()): Promise<boolean[]> {
  checkEntries(entries);
  if (entries.length === 0) return [];
  const keys = [...new Set(entries.map((entry) => entry.key))];
  return withTransaction(pool, async (tx) => {
    const windows = new Map((await store.lockThrottleWindows(tx, environmentId, keys)).map((window) => [window.key, window]));
    const passed = entries.map((entry) => {
      let window = windows.get(entry.key)!;
      if (window.ends <= now) {
        window = { key: entry.key, ends: timestampDate(entry.windowEnds!), transactions: [] };
        windows.set(entry.key, window);
      }
      if (window.transactions.includes(entry.transactionId)) return true;
      if (window.transactions.length >= entry.threshold) return false;
      window.transactions.push(entry.transactionId);
      return true;
    });
    await store.updateThrottleWindows(tx, environmentId, [...windows.values()]);
    return passed;
  });
}
