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

/** A key's kept load, or a new one; `forget` drops a key whose value this process has just changed. */
export type KeptLoads<V> = ((key: string, load: () => Promise<V>) => Promise<V>) & { forget(key: string): void };

/**
 * Loads kept as their promises for a while: callers of one key share its load, also while it is
 * under way. A load that fails is dropped at once, so the next caller tries again.
 */
export function keptLoads<V extends {}>({ max, ttlMs, lookups }: KeptLoadsOptions): KeptLoads<V> {
  const kept = new LRUCache<string, Promise<V>>({ max, ttl: ttlMs });
  const loadOf = (key: string, load: () => Promise<V>) => {
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
  return Object.assign(loadOf, { forget: (key: string) => void kept.delete(key) });
}
