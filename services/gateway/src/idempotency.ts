import { createHash } from "node:crypto";
import type { Logger, Redis, Scope } from "@notify/runtime";
import type { Context, Next } from "koa";
import { HttpError, renderError } from "./errors.js";
import type { Route } from "./route.js";

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
  /** `json`: the response body's JSON text, whether the route answered an object or JsonBytes. */
  | { state: "done"; fingerprint: string; status: number; json: string }
  /** A sensitive route's success: what names its outcome, never the response itself. */
  | { state: "done"; fingerprint: string; ref: string };

/**
 * What is kept of a finished request, if anything. Responses of 5xx and requests rejected before
 * they ran are not kept, so a retry can still succeed.
 *
 * Sensitive routes (those that answer decrypted integration credentials) keep only a successful
 * outcome, as the reference of what it produced, so no secret ever rests in Redis for 24 h. A
 * replay reads that resource again and answers it as it is now: a retrying client wants the
 * outcome of the request it already made (the integration it created, not a second one), and the
 * resource's current state is what it would read next anyway; when the resource has been deleted
 * since, the replay answers 404 rather than a stale copy. Their failures are not kept at all: a
 * failed create or set-primary changed nothing, so running the retry again is as safe as
 * replaying it, and an error body could echo a credential the client sent.
 */
function outcomeOf(route: Route, ctx: Context, fingerprint: string): Entry | undefined {
  if (ctx.state.executed !== true || ctx.status >= 500) return undefined;
  if (!route.sensitive) return { state: "done", fingerprint, status: ctx.status, json: jsonTextOf(ctx.body) };
  const ref = ctx.state.outcomeRef as string | undefined;
  return ctx.status < 300 && ref !== undefined ? { state: "done", fingerprint, ref } : undefined;
}

/** A response body as JSON text: a JsonBytes route's bytes as they are, anything else stringified. */
function jsonTextOf(body: unknown): string {
  return Buffer.isBuffer(body) ? body.toString("utf8") : JSON.stringify(body ?? null);
}

/**
 * POST/PATCH with an `idempotency-key`: the first request runs and its outcome is kept for
 * replay; a repeat while it runs → 409; with another body → 422.
 */
export function idempotencyMiddleware(deps: IdempotencyDeps) {
  return (route: Route) => async (ctx: Context, next: Next) => {
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
      const entry = completed(key, await deps.redis.get(storeKey), fingerprint);
      ctx.set("Idempotency-Replay", "true");
      if ("ref" in entry) {
        ctx.state.replayOf = entry.ref;
        return next();
      }
      ctx.status = entry.status;
      if (entry.status !== 204) {
        ctx.type = "application/json";
        ctx.body = entry.json;
      }
      return;
    }
    try {
      await next();
    } catch (error) {
      renderError(ctx, error, deps.log);
    }
    const done = outcomeOf(route, ctx, fingerprint);
    if (done) await deps.redis.set(storeKey, JSON.stringify(done), { EX: deps.ttlSeconds }).catch(() => undefined);
    else await deps.redis.del(storeKey).catch(() => undefined);
  };
}

/** The finished entry a repeat is answered from; 422 for another body, 409 while the first still runs. */
function completed(key: string, stored: string | null, fingerprint: string): Extract<Entry, { state: "done" }> {
  // A claim that expired between SET NX and GET is treated as still running: the client retries.
  const entry: Entry = stored ? (JSON.parse(stored) as Entry) : { state: "in-flight", fingerprint };
  if (entry.fingerprint !== fingerprint) {
    const message = `Request with key "${key}" is being reused for a different body`;
    throw new HttpError(422, message, { errors: { "idempotency-key": { messages: [message], value: key } } });
  }
  if (entry.state === "in-flight") {
    throw new HttpError(409, `Request with key "${key}" is currently being processed. Please retry after 1 second`, {}, { "Retry-After": "1" });
  }
  return entry;
}
