import { timingSafeEqual } from "node:crypto";
import type { Pool, Redis, Scope } from "@notify/runtime";
import type { Context, Next } from "koa";
import { cacheKeyOf, hashKey } from "./accounts.js";
import { HttpError } from "./errors.js";
import * as store from "./store.js";

export interface AuthDeps {
  pool: Pool;
  redis: Redis;
  cacheSeconds: number;
}

const unauthorized = (message: string) => new HttpError(401, message);

/** The environment an API key belongs to: Redis first, Postgres on a miss (and then the cache is filled). */
async function resolveKey(deps: AuthDeps, key: string): Promise<Scope | undefined> {
  const keyHash = hashKey(key);
  const cached = await deps.redis.get(cacheKeyOf(keyHash)).catch(() => null);
  if (cached) return JSON.parse(cached) as Scope;
  const row = await store.selectKeyScope(deps.pool, keyHash);
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(keyHash))) return undefined;
  const scope: Scope = { organizationId: row.organization_id, environmentId: row.environment_id };
  // last_used_at is refreshed once per cache period, not on every request.
  await store.touchKey(deps.pool, row.key_id);
  if (deps.cacheSeconds > 0) {
    await deps.redis.set(cacheKeyOf(keyHash), JSON.stringify(scope), { EX: deps.cacheSeconds }).catch(() => undefined);
  }
  return scope;
}

/** `Authorization: ApiKey <key>` → ctx.state.scope; 401 with Novu's messages otherwise. */
export function authMiddleware(deps: AuthDeps) {
  return async (ctx: Context, next: Next) => {
    const header = ctx.get("authorization");
    if (!header) throw unauthorized("Missing authorization header");
    const [scheme = "", ...rest] = header.trim().split(/\s+/);
    if (scheme.toLowerCase() !== "apikey") throw unauthorized(`Invalid authentication scheme: "${scheme}"`);
    const key = rest.join(" ");
    if (!key) throw unauthorized("Unauthorized");
    const scope = await resolveKey(deps, key);
    if (!scope) throw unauthorized("API Key not found");
    ctx.state.scope = scope;
    await next();
  };
}
