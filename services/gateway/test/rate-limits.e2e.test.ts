import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createPool, type Pool } from "@notify/runtime";
import { eventually, freePort, startRedisServer, stopChild } from "@notify/testing";
import { io as connectSocket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_ORGANIZATION } from "../src/accounts.js";
import type { EnvironmentRateLimits } from "../src/rate-limits.js";
import { updateRateLimits } from "../src/store.js";
import { environmentIdentifier, openInbox } from "./inbox-helpers.js";
import { startStack, type Data, type Reply, type Stack } from "./stack.js";

// API rate limits against a Redis of this file's own (another port, no persistence), so stopping
// it disturbs no test running beside this one. Each test limits an environment of its own, made
// just before its first request: the environment's window starts with that request.

const redisPort = await freePort();
let redis: ChildProcess | undefined;
let stack: Stack;
let pool: Pool;

async function startRedis(): Promise<void> {
  redis = await startRedisServer(redisPort);
}

beforeAll(async () => {
  await startRedis();
  stack = await startStack({ gatewayEnv: { REDIS_URL: `redis://127.0.0.1:${redisPort}` } });
  pool = createPool(stack.database.url, 2);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await pool?.end();
  await stopChild(redis);
});

/** The key of a new environment with `limits` (requests per second by category, or a service level). */
async function limitedKey(limits: EnvironmentRateLimits): Promise<string> {
  const environment = `limited-${randomBytes(4).toString("hex")}`;
  const key = await stack.createKey(environment);
  expect(await updateRateLimits(pool, DEFAULT_ORGANIZATION, environment, limits)).toBe(true);
  return key;
}

const as = (key: string) => ({ authorization: `ApiKey ${key}` });
const newSubscriber = () => ({ subscriberId: `s-${randomBytes(6).toString("hex")}` });
/** A trigger of a workflow nobody made: refused after it was counted, and cheap. */
const trigger = { name: "no-such-workflow", to: "someone", payload: {} };

function rateLimitHeadersOf(reply: Reply<unknown>) {
  return {
    limit: Number(reply.headers.get("ratelimit-limit")),
    remaining: Number(reply.headers.get("ratelimit-remaining")),
    reset: Number(reply.headers.get("ratelimit-reset")),
    policy: reply.headers.get("ratelimit-policy"),
  };
}

/** Sends `request` until it is refused (at most `most` times); answers how many went through and the refusal. */
async function untilRefused<T>(request: () => Promise<Reply<T>>, most: number): Promise<{ passed: number; refusal: Reply<T> }> {
  for (let passed = 0; passed < most; passed++) {
    const reply = await request();
    if (reply.status === 429) return { passed, refusal: reply };
    expect(reply.status).toBeLessThan(500);
  }
  throw new Error(`never refused in ${most} requests`);
}

describe("API rate limits", () => {
  it("answers the RateLimit headers on every answer of an API route, errors included, with the generous defaults", async () => {
    const replies = [
      await stack.request("GET", "/v1/subscribers?limit=1"),
      await stack.request("POST", "/v1/subscribers", { subscriberId: "" }),
      await stack.request("GET", "/v1/subscribers/nobody-here"),
      await stack.request("POST", "/v1/events/trigger", trigger),
    ];
    expect(replies.map((reply) => reply.status)).toEqual([200, 422, 404, 422]);
    for (const reply of replies) {
      const headers = rateLimitHeadersOf(reply);
      expect(headers.limit).toBeGreaterThan(0);
      expect(headers.remaining).toBeGreaterThan(0);
      expect(headers.reset).toBeGreaterThanOrEqual(0);
      expect(headers.reset).toBeLessThanOrEqual(5);
    }
    expect(rateLimitHeadersOf(replies[0]!).policy).toBe(
      '15000;w=5;burst=16500;comment="fixed window";category="global";cost="single";serviceLevel="enterprise"',
    );
    expect(rateLimitHeadersOf(replies[1]!).policy).toContain('category="configuration";cost="single"');
    expect(rateLimitHeadersOf(replies[3]!).policy).toBe(
      '30000;w=5;burst=33000;comment="fixed window";category="trigger";cost="single";serviceLevel="enterprise"',
    );
    // Probes and unknown paths are no API route: no budget is spent on them.
    expect((await stack.request("GET", "/livez")).headers.get("ratelimit-limit")).toBeNull();
  });

  it("refuses with 429, Retry-After and the error body once an environment's budget of a category is spent, and counts down on the way", async () => {
    const key = await limitedKey({ configuration: 1 });
    const first = await stack.request("POST", "/v1/subscribers", newSubscriber(), as(key));
    expect(first.status).toBe(201);
    expect(rateLimitHeadersOf(first)).toMatchObject({ limit: 5, remaining: 4 });
    expect(rateLimitHeadersOf(first).policy).toBe('5;w=5;burst=5;comment="fixed window";category="configuration";cost="single";serviceLevel="custom"');
    const { passed, refusal } = await untilRefused(() => stack.request("POST", "/v1/subscribers", newSubscriber(), as(key)), 20);
    expect(passed).toBe(4);
    expect(refusal.status).toBe(429);
    expect(refusal.body).toMatchObject({ statusCode: 429, message: "API rate limit exceeded", path: "/v1/subscribers", timestamp: expect.any(String) });
    const retryAfter = Number(refusal.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(5);
    expect(rateLimitHeadersOf(refusal)).toMatchObject({ limit: 5, remaining: 0 });
    const scrape = await (await fetch(stack.metricsUrls.gateway)).text();
    const rejections = /^notify_gateway_rate_limit_rejections_total\{category="configuration"\} (\d+)$/m.exec(scrape);
    expect(Number(rejections?.[1])).toBeGreaterThanOrEqual(1);
  });

  it("keeps the categories apart: a spent configuration budget leaves reads and triggers going", async () => {
    const key = await limitedKey({ configuration: 1, global: 1, trigger: 1 });
    await untilRefused(() => stack.request("POST", "/v1/subscribers", newSubscriber(), as(key)), 20);
    const read = await stack.request("GET", "/v1/subscribers?limit=1", undefined, as(key));
    expect(read.status).toBe(200);
    expect(rateLimitHeadersOf(read)).toMatchObject({ limit: 5, remaining: 4 });
    const triggered = await stack.request("POST", "/v1/events/trigger", trigger, as(key));
    expect(triggered.status).toBe(422);
    expect(rateLimitHeadersOf(triggered)).toMatchObject({ limit: 5, remaining: 4 });
    expect((await stack.request("POST", "/v1/subscribers", newSubscriber(), as(key))).status).toBe(429);
  });

  it("charges a bulk trigger and a broadcast a hundred tokens, a single trigger one", async () => {
    const key = await limitedKey({ trigger: 20 }); // 100 a window, bursts to 110
    const bulk = await stack.request("POST", "/v1/events/trigger/bulk", { events: [trigger] }, as(key));
    expect(bulk.status).toBeLessThan(500);
    expect(bulk.status).not.toBe(429);
    expect(rateLimitHeadersOf(bulk)).toMatchObject({ limit: 100, remaining: 10 });
    expect(rateLimitHeadersOf(bulk).policy).toContain('category="trigger";cost="bulk"');
    // Ten tokens left: a broadcast is refused, single triggers still go through until they are spent.
    const broadcast = await stack.request("POST", "/v1/events/trigger/broadcast", trigger, as(key));
    expect(broadcast.status).toBe(429);
    const { passed } = await untilRefused(() => stack.request("POST", "/v1/events/trigger", trigger, as(key)), 20);
    expect(passed).toBe(10);
  });

  it("limits each environment on its own: one spent budget leaves the others whole", async () => {
    const spent = await limitedKey({ configuration: 1 });
    const other = await limitedKey({ configuration: 1 });
    await untilRefused(() => stack.request("POST", "/v1/subscribers", newSubscriber(), as(spent)), 20);
    const untouched = await stack.request("POST", "/v1/subscribers", newSubscriber(), as(other));
    expect(untouched.status).toBe(201);
    expect(rateLimitHeadersOf(untouched)).toMatchObject({ limit: 5, remaining: 4 });
    const defaults = await stack.request("POST", "/v1/subscribers", newSubscriber());
    expect(defaults.status).toBe(201);
    expect(rateLimitHeadersOf(defaults).limit).toBe(10_000);
  });

  it("takes a service level for an environment", async () => {
    const key = await limitedKey({ serviceLevel: "free" });
    const reply = await stack.request("GET", "/v1/subscribers?limit=1", undefined, as(key));
    expect(rateLimitHeadersOf(reply).policy).toBe('150;w=5;burst=165;comment="fixed window";category="global";cost="single";serviceLevel="free"');
  });

  it("still limits while Redis is down, each gateway on its own, without failing requests", async () => {
    await stopChild(redis);
    redis = undefined;
    try {
      const key = await limitedKey({ configuration: 1 });
      const { passed, refusal } = await untilRefused(() => stack.request("POST", "/v1/subscribers", newSubscriber(), as(key)), 20);
      expect(passed).toBe(5);
      expect(refusal.headers.get("retry-after")).not.toBeNull();
      expect((await stack.request("GET", "/v1/subscribers?limit=1", undefined, as(key))).status).toBe(200);
    } finally {
      await startRedis();
    }
    // The gateway is back on Redis once it returns (idempotency keys need it).
    await eventually(
      async () => {
        const reply = await stack.request("POST", "/v1/subscribers", newSubscriber(), { "idempotency-key": randomBytes(8).toString("hex") });
        return reply.status === 201 ? true : undefined;
      },
      20_000,
      500,
    );
  });
});

describe("Inbox and public rate limits: a budget per caller", () => {
  // A gateway behind one trusted proxy, so each test names its client addresses (documentation
  // ranges, RFC 5737) in X-Forwarded-For; budgets of one request a second (five a window).
  let callers: Stack;
  beforeAll(async () => {
    callers = await startStack({
      gatewayEnv: { REDIS_URL: `redis://127.0.0.1:${redisPort}`, RATE_LIMIT_INBOX: "1", RATE_LIMIT_PUBLIC: "1", GATEWAY_TRUSTED_PROXIES: "1" },
      worker: false,
    });
  }, 60_000);
  afterAll(async () => {
    await callers?.stop();
  });

  const from = (address: string) => ({ authorization: "", "x-forwarded-for": address });

  async function startSession(subscriberId: string, address: string): Promise<Reply<Data<{ token: string }>>> {
    const applicationIdentifier = await environmentIdentifier(callers);
    return callers.request("POST", "/v1/inbox/session", { applicationIdentifier, subscriber: { subscriberId } }, from(address));
  }

  async function tokenOf(subscriberId: string, address: string): Promise<string> {
    const reply = await startSession(subscriberId, address);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body.data.token;
  }

  it("limits each Inbox subscriber on its own, whichever address it calls from", async () => {
    const ann = await tokenOf("limit-ann", "203.0.113.1");
    const bob = await tokenOf("limit-bob", "203.0.113.2");
    const addresses = ["203.0.113.3", "203.0.113.4"];
    let call = 0;
    const annReads = () =>
      callers.request("GET", "/v1/inbox/notifications?limit=1", undefined, { authorization: `Bearer ${ann}`, "x-forwarded-for": addresses[call++ % 2]! });
    const { passed, refusal } = await untilRefused(annReads, 20);
    expect(passed).toBe(5);
    expect(refusal.body).toMatchObject({ statusCode: 429, message: "API rate limit exceeded" });
    expect(Number(refusal.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(rateLimitHeadersOf(refusal)).toMatchObject({ limit: 5, remaining: 0, policy: '5;w=5;burst=5;comment="fixed window";category="inbox"' });
    const bobRead = await callers.request("GET", "/v1/inbox/notifications?limit=1", undefined, { authorization: `Bearer ${bob}` });
    expect(bobRead.status).toBe(200);
    expect(rateLimitHeadersOf(bobRead)).toMatchObject({ limit: 5, remaining: 4 });
    const scrape = await (await fetch(callers.metricsUrls.gateway)).text();
    expect(Number(/^notify_gateway_rate_limit_rejections_total\{category="inbox"\} (\d+)$/m.exec(scrape)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it("counts an Inbox socket's handshake against its subscriber's budget, dropping it while spent so the Inbox reconnects by itself", async () => {
    const handshake = (token: string) => {
      const socket = connectSocket(callers.url, { transports: ["websocket"], query: { token }, reconnection: false, forceNew: true });
      return new Promise<string>((resolve) => {
        socket.once("connect", () => {
          resolve("connected");
          socket.close();
        });
        socket.once("connect_error", (error) => {
          resolve(`refused: ${error.message}`);
          socket.close();
        });
        socket.once("disconnect", (reason) => resolve(reason));
      });
    };
    const spend = (token: string) =>
      untilRefused(() => callers.request("GET", "/v1/inbox/notifications?limit=1", undefined, { authorization: `Bearer ${token}` }), 20);
    const cy = await tokenOf("limit-cy", "203.0.113.5");
    const dee = await tokenOf("limit-dee", "203.0.113.6");
    expect(await handshake(cy)).toBe("connected");
    await spend(cy);
    // Dropped, not refused: socket.io clients never retry a refusal.
    expect(await handshake(cy)).toBe("transport close");
    expect(await handshake(dee)).toBe("connected");

    // @novu/js, opened while its subscriber's budget is spent, is connected once the window renews,
    // with no error along the way and no new client.
    const eve = await tokenOf("limit-eve", "203.0.113.7");
    const novu = await openInbox(callers, "limit-eve");
    const events: string[] = [];
    novu.on("socket.connect.resolved", ({ error }) => events.push(error ? `error: ${String(error)}` : "connected"));
    novu.on("socket.disconnect.resolved", () => events.push("dropped"));
    try {
      await spend(eve);
      novu.on("notifications.unseen_count_changed", () => undefined);
      await eventually(async () => (events.includes("connected") ? true : undefined), 15_000, 100);
      expect(events.filter((event) => event !== "dropped")).toEqual(["connected"]);
      expect(events[0]).toBe("dropped");
    } finally {
      novu.socket.disconnect();
    }
  });

  it("limits each client address on the public routes, as the outermost trusted proxy saw it", async () => {
    let made = 0;
    const { passed, refusal } = await untilRefused(() => startSession(`limit-public-${made++}`, "198.51.100.7"), 20);
    expect(passed).toBe(5);
    expect(rateLimitHeadersOf(refusal).policy).toBe('5;w=5;burst=5;comment="fixed window";category="public"');
    // The subscriber the refused session would have made was not made.
    expect((await callers.request("GET", `/v1/subscribers/limit-public-${made - 1}`)).status).toBe(404);
    // An entry the client wrote itself, left of the proxy's, changes nothing.
    expect((await startSession("limit-forged", "192.0.2.9, 198.51.100.7")).status).toBe(429);
    // The providers' webhooks share the address's budget; another address has its own.
    const webhook = "/v2/inbound-webhooks/delivery-providers/0123456789abcdef01234567/0123456789abcdef01234567";
    expect((await callers.request("POST", webhook, [], from("198.51.100.7"))).status).toBe(429);
    expect((await callers.request("POST", webhook, [], from("198.51.100.8"))).status).toBe(404);
    expect((await startSession("limit-other", "198.51.100.8")).status).toBe(201);
  });
});
