import { timingSafeEqual } from "node:crypto";
import { cacheLookups, type Pool, type Redis, type Scope } from "@notify/runtime";
import type { Context, Next } from "koa";
import { LRUCache } from "lru-cache";
import { cacheKeyOf, hashKey } from "./accounts.js";
import { HttpError } from "./errors.js";
import type { SessionTokens } from "./sessions.js";
import * as store from "./store.js";

export interface AuthDeps {
  pool: Pool;
  redis: Redis;
  cacheSeconds: number;
}

/** What is cached of a key: its scope, and when it expires (epoch milliseconds; never without). */
interface CachedKey extends Scope {
  expiresAt?: number;
}

/**
 * Key hash → cached key for five seconds in this process (the 10,000 most recently used keys), in
 * front of Redis: a busy key then costs no round trip per request. Revocations are broadcast
 * (REVOKED_CHANNEL), so they apply at once; expiry is checked on every hit.
 */
const local = new LRUCache<string, CachedKey>({ max: 10_000, ttl: 5_000 });
const localLookups = cacheLookups("gateway_api_keys");
/** Lookups in Redis, which `local` misses reach. */
const redisLookups = cacheLookups("gateway_api_keys_redis");

export const REVOKED_CHANNEL = "notify:apikey:revoked";

/** Drops revoked keys from this process's cache as `pnpm notify keys revoke` announces them. */
export async function followRevocations(redis: Redis): Promise<() => Promise<void>> {
  const subscriber = redis.duplicate();
  subscriber.on("error", () => undefined); // reconnects on its own
  await subscriber.connect();
  await subscriber.subscribe(REVOKED_CHANNEL, (keyHash) => local.delete(keyHash));
  // Destroyed, not quit: a QUIT waits for a connection, which never comes while Redis is away
  // or still resubscribing after it came back, and a subscriber has nothing left to finish.
  return async () => {
    subscriber.destroy();
  };
}

/**
 * Drops keys from this process's cache, from Redis and, through REVOKED_CHANNEL, from every
 * gateway's own cache, so they stop working now.
 */
export async function forgetKeys(redis: Redis, keyHashes: readonly string[]): Promise<void> {
  if (keyHashes.length === 0) return;
  for (const keyHash of keyHashes) local.delete(keyHash);
  await redis.del(keyHashes.map(cacheKeyOf));
  for (const keyHash of keyHashes) await redis.publish(REVOKED_CHANNEL, keyHash);
}

const unauthorized = (message: string) => new HttpError(401, message);

const live = (cached: CachedKey): Scope | undefined =>
  cached.expiresAt === undefined || cached.expiresAt > Date.now() ? { organizationId: cached.organizationId, environmentId: cached.environmentId } : undefined;

/** The environment an API key belongs to: Redis first, Postgres on a miss (and then the cache is filled). */
async function resolveKey(deps: AuthDeps, key: string): Promise<Scope | undefined> {
  const keyHash = hashKey(key);
  const hit = local.get(keyHash);
  if (hit) {
    localLookups.hit();
    return live(hit);
  }
  localLookups.miss();
  const cachedText = await deps.redis.get(cacheKeyOf(keyHash)).catch(() => null);
  if (cachedText) {
    redisLookups.hit();
    const cached = JSON.parse(cachedText) as CachedKey;
    local.set(keyHash, cached);
    return live(cached);
  }
  redisLookups.miss();
  const row = await store.selectKeyScope(deps.pool, keyHash);
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(keyHash))) return undefined;
  const scope: Scope = { organizationId: row.organization_id, environmentId: row.environment_id };
  // last_used_at is refreshed once per cache period, not on every request.
  await store.touchKey(deps.pool, row.key_id);
  if (deps.cacheSeconds > 0) {
    const cached: CachedKey = row.expires_at ? { ...scope, expiresAt: row.expires_at.getTime() } : scope;
    // Kept no longer than the key lives, so an expired key leaves the caches too.
    const lifetime = Math.min(deps.cacheSeconds * 1000, (cached.expiresAt ?? Infinity) - Date.now());
    if (lifetime > 0) {
      await deps.redis.set(cacheKeyOf(keyHash), JSON.stringify(cached), { PX: lifetime }).catch(() => undefined);
      local.set(keyHash, cached);
    }
  }
  return scope;
}

/** The credential of `Authorization: <scheme> <credential>`; 401 without one, or with another scheme. */
function credentialOf(ctx: Context, expectedScheme: "apikey" | "bearer"): string {
  const header = ctx.get("authorization");
  if (!header) throw unauthorized("Missing authorization header");
  const [scheme = "", ...rest] = header.trim().split(/\s+/);
  if (scheme.toLowerCase() !== expectedScheme) throw unauthorized(`Invalid authentication scheme: "${scheme}"`);
  const credential = rest.join(" ");
  if (!credential) throw unauthorized("Unauthorized");
  return credential;
}

/** `Authorization: ApiKey <key>` → ctx.state.scope; 401 with Novu's messages otherwise (a session token included). */
export function authMiddleware(deps: AuthDeps) {
  return async (ctx: Context, next: Next) => {
    const key = credentialOf(ctx, "apikey");
    const scope = await resolveKey(deps, key);
    if (!scope) throw unauthorized("API Key not found");
    ctx.state.scope = scope;
    await next();
  };
}

/**
 * `Authorization: Bearer <session token>` → ctx.state.session and its scope; 401 otherwise (an API
 * key included: keys belong on servers, never in the browsers the Inbox routes serve).
 */
export function sessionAuthMiddleware(sessions: SessionTokens) {
  return async (ctx: Context, next: Next) => {
    const session = await sessions.verify(credentialOf(ctx, "bearer"));
    if (!session) throw unauthorized("Invalid or expired session token");
    ctx.state.session = session;
    ctx.state.scope = session.scope;
    await next();
  };
}
