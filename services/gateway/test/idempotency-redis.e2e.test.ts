import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { eventually, freePort, startRedisServer, stopChild } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Reply, type Stack } from "./stack.js";

// Idempotency keys live in Redis: while it is unreachable a request carrying one cannot be
// checked, so it is refused as every dependency outage is (503 + Retry-After), and runs once Redis
// is back. A Redis of this file's own, so stopping it disturbs no test running beside this one.

const redisPort = await freePort();
let redis: ChildProcess | undefined;
let stack: Stack;

beforeAll(async () => {
  redis = await startRedisServer(redisPort);
  stack = await startStack({ gatewayEnv: { REDIS_URL: `redis://127.0.0.1:${redisPort}` } });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await stopChild(redis);
});

const newKey = () => ({ "idempotency-key": randomBytes(8).toString("hex") });

function expectOutage(reply: Reply, path: string) {
  expect(reply.status).toBe(503);
  expect(Number(reply.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(reply.body).toMatchObject({ statusCode: 503, path, message: expect.any(String), timestamp: expect.any(String) });
}

describe("idempotency keys while Redis is down", () => {
  it("refuses POST and PATCH carrying a key with 503 + Retry-After, runs nothing, and takes them again once Redis is back", async () => {
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "before" }, newKey())).status).toBe(201);
    await stopChild(redis);
    redis = undefined;
    const retried = newKey();
    try {
      expectOutage(await stack.request("POST", "/v1/subscribers", { subscriberId: "during" }, retried), "/v1/subscribers");
      expectOutage(await stack.request("PATCH", "/v2/subscribers/before", { firstName: "Changed" }, newKey()), "/v2/subscribers/before");
      // Nothing ran: neither the create nor the change happened.
      expect((await stack.request("GET", "/v1/subscribers/during")).status).toBe(404);
      expect((await stack.request("GET", "/v1/subscribers/before")).body.data.firstName).toBeNull();
      // Requests without a key do not need Redis and go on.
      expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "keyless" })).status).toBe(201);
    } finally {
      redis = await startRedisServer(redisPort);
    }
    // The client's retry with the same key runs once Redis answers again, and is kept for replay.
    const created = await eventually(
      async () => {
        const reply = await stack.request("POST", "/v1/subscribers", { subscriberId: "during" }, retried);
        if (reply.status === 503) return undefined;
        return reply;
      },
      20_000,
      100,
    );
    expect(created.status).toBe(201);
    const replay = await stack.request("POST", "/v1/subscribers", { subscriberId: "during" }, retried);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replay")).toBe("true");
  });
});
