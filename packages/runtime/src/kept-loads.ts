import { LRUCache } from "lru-cache";
import type { CacheLookups } from "./metrics.js";

export interface KeptLoadsOptions {
  /** Keys kept; past it the least recently used goes. */
  max: number;
  /** How long a load's answer is used before the key is loaded again. */
  ttlMs: number;
  /** Counts each lookup as a hit or a miss (cacheLookups). */
  lookups?: CacheLookups;
}

/**
 * Loads kept as their promises for a while: callers of one key share its load, also while it is
 * under way. A load that fails is dropped at once, so the next caller tries again.
 */
export function keptLoads<V extends {}>({ max, ttlMs, lookups }: KeptLoadsOptions): (key: string, load: () => Promise<V>) => Promise<V> {
  const kept = new LRUCache<string, Promise<V>>({ max, ttl: ttlMs });
  return (key, load) => {
    const found = kept.get(key);
    if (found) {
      lookups?.hit();
      return found;
    }
    lookups?.miss();
    const loading = load();
    kept.set(key, loading);
    loading.catch(() => {
      if (kept.get(key) === loading) kept.delete(key);
    });
    return loading;
  };
}
