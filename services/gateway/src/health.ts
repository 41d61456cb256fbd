import type { Client } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus, type Health } from "@notify/proto";
import type { NatsConnection, Pool, Redis } from "@notify/runtime";
import type { Context } from "koa";

export interface ReadinessDeps {
  /** False once shutdown has begun, so load balancers stop sending traffic first. */
  accepting: () => boolean;
  dependencies: DependencyChecks;
}

export interface DependencyChecks {
  pool: Pool;
  redis: Redis;
  /** Undefined until the first connection succeeds. */
  nats: () => NatsConnection | undefined;
  services: Record<string, Client<typeof Health>>;
  timeoutMs: number;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  return Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);
}

async function check(name: string, probe: () => Promise<unknown>, ms: number): Promise<[string, string]> {
  try {
    await withTimeout(probe(), ms);
    return [name, "up"];
  } catch (error) {
    return [name, `down: ${(error as Error).message}`];
  }
}

export const livez = (ctx: Context) => {
  ctx.body = { status: "ok" };
};

/**
 * Whether this gateway serves: 200 until shutdown begins. Dependencies are not consulted: while
 * one is down every gateway answers the requests that need it 503 with Retry-After, and a
 * gateway taken out of its Service would serve nothing at all, not even what still works.
 */
export function readyz(accepting: () => boolean) {
  return (ctx: Context) => {
    const ready = accepting();
    ctx.status = ready ? 200 : 503;
    if (!ready) ctx.set("Retry-After", "1");
    ctx.body = { status: ready ? "ready" : "shutting down" };
  };
}

/** For operators and monitoring: 200 when every dependency answers within the timeout; 503 with the failing ones otherwise. */
export function dependencyHealth(deps: DependencyChecks) {
  return async (ctx: Context) => {
    const ms = deps.timeoutMs;
    const results = await Promise.all([
      check("postgres", () => deps.pool.query("SELECT 1"), ms),
      check("redis", () => deps.redis.ping(), ms),
      check(
        "nats",
        () => {
          const nats = deps.nats();
          return !nats || nats.isClosed() ? Promise.reject(new Error("not connected")) : nats.flush();
        },
        ms,
      ),
      ...Object.entries(deps.services).map(([name, client]) =>
        check(
          name,
          async () => {
            const reply = await client.check({}, { timeoutMs: ms });
            if (reply.status !== HealthCheckResponse_ServingStatus.SERVING) throw new Error("not serving");
          },
          ms,
        ),
      ),
    ]);
    const up = results.every(([, state]) => state === "up");
    ctx.status = up ? 200 : 503;
    if (!up) ctx.set("Retry-After", "1");
    ctx.body = { status: up ? "up" : "degraded", checks: Object.fromEntries(results) };
  };
}
