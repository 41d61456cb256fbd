import { createHash } from "node:crypto";
import type { Logger, Redis, Scope } from "@notify/runtime";
import type { Context, Next } from "koa";
import { HttpError, renderError } from "./errors.js";

export interface IdempotencyDeps {
  redis: Redis;
  ttlSeconds: number;
  log: Logger;
}

const MAX_KEY_LENGTH = 255;
/** How long a claim survives a gateway that died mid-request. */
const IN_FLIGHT_SECONDS = 300;

type Entry =
  | { state: "in-flight"; fingerprint: string }
  | { state: "done"; fingerprint: string; status: number; body: unknown };

/**
 * POST/PATCH with an `idempotency-key`: the first request runs and its response is kept for
 * replay; a repeat while it runs → 409; with another body → 422. Responses of 5xx and requests
 * rejected before they ran are not kept, so a retry can still succeed.
 */
export function idempotencyMiddleware(deps: IdempotencyDeps) {
  return async (ctx: Context, next: Next) => {
    const key = ctx.get("idempotency-key");
    if (!key || (ctx.method !== "POST" && ctx.method !== "PATCH")) return next();
    if (key.length > MAX_KEY_LENGTH) {
      throw new HttpError(400, `idempotencyKey "${key.slice(0, 32)}…" has exceeded the maximum allowed length of ${MAX_KEY_LENGTH} characters`);
    }
    const scope = ctx.state.scope as Scope;
    const storeKey = `notify:idem:${scope.environmentId}:${key}`;
    const fingerprint = createHash("sha256")
      .update(`${ctx.method} ${ctx.path}\n`)
      .update(ctx.state.rawBody as Buffer)
      .digest("hex");
    const claim: Entry = { state: "in-flight", fingerprint };
    const claimed = await deps.redis.set(storeKey, JSON.stringify(claim), { NX: true, EX: IN_FLIGHT_SECONDS });
    ctx.set("Idempotency-Key", key);
    if (claimed === null) {
      replay(ctx, key, await deps.redis.get(storeKey), fingerprint);
      return;
    }
    try {
      await next();
    } catch (error) {
      renderError(ctx, error, deps.log);
    }
    if (ctx.state.executed === true && ctx.status < 500) {
      const done: Entry = { state: "done", fingerprint, status: ctx.status, body: ctx.body ?? null };
      await deps.redis.set(storeKey, JSON.stringify(done), { EX: deps.ttlSeconds }).catch(() => undefined);
    } else {
      await deps.redis.del(storeKey).catch(() => undefined);
    }
  };
}

function replay(ctx: Context, key: string, stored: string | null, fingerprint: string): void {
  // A claim that expired between SET NX and GET is treated as still running: the client retries.
  const entry: Entry = stored ? (JSON.parse(stored) as Entry) : { state: "in-flight", fingerprint };
  if (entry.fingerprint !== fingerprint) {
    const message = `Request with key "${key}" is being reused for a different body`;
    throw new HttpError(422, message, { errors: { "idempotency-key": { messages: [message], value: key } } });
  }
  if (entry.state === "in-flight") {
    throw new HttpError(409, `Request with key "${key}" is currently being processed. Please retry after 1 second`, {}, { "Retry-After": "1" });
  }
  ctx.status = entry.status;
  ctx.set("Idempotency-Replay", "true");
  if (entry.status !== 204) ctx.body = entry.body;
}
