import { connectRedis, objectId, type Redis } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";
import { clientAddressOf, createRateLimiter, defaultRateLimits, settingsOf, SERVICE_LEVELS } from "../src/rate-limits.js";

// Two limiters over one Redis stand for two gateways sharing an environment's budget.
let redis: Redis;
beforeAll(async () => {
  redis = await connectRedis("redis://127.0.0.1:6379");
});
afterAll(async () => {
  await redis?.quit();
});

describe("rate limiter leases", () => {
  it("lets two gateways together admit exactly a window's burst, never more, whoever asks", async () => {
    const gateways = [createRateLimiter(redis), createRateLimiter(redis)];
    const environmentId = objectId();
    // 20 a second: 100 a window, bursts to 110, leased 5 tokens at a time.
    let admitted = 0;
    const refusedBy = new Set<number>();
    for (let turn = 0; refusedBy.size < gateways.length && turn < 1000; turn++) {
      const index = turn % 3 === 0 ? 1 : 0; // uneven turns, so one gateway's lease is stale when the budget runs out
      const decision = await gateways[index]!.take(environmentId, "trigger", 1, 20);
      if (decision.allowed) admitted++;
      else refusedBy.add(index);
      expect(decision).toMatchObject({ limit: 100, burst: 110 });
      expect(decision.remaining).toBeGreaterThanOrEqual(0);
      expect(decision.resetMs).toBeLessThanOrEqual(5_000);
    }
    expect(admitted).toBe(110);
  });

  it("answers concurrent requests of an empty lease with one refill between them", async () => {
    const gateway = createRateLimiter(redis);
    const environmentId = objectId();
    const decisions = await Promise.all(Array.from({ length: 200 }, () => gateway.take(environmentId, "global", 1, 20)));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(110);
    expect(Math.min(...decisions.map((decision) => decision.remaining))).toBe(0);
  });

  it("refuses a bulk cost the budget cannot cover while single ones still pass", async () => {
    const gateway = createRateLimiter(redis);
    const environmentId = objectId();
    expect((await gateway.take(environmentId, "trigger", 100, 20)).allowed).toBe(true);
    expect((await gateway.take(environmentId, "trigger", 100, 20)).allowed).toBe(false);
    expect((await gateway.take(environmentId, "trigger", 1, 20)).allowed).toBe(true);
    expect((await gateway.take(environmentId, "configuration", 100, 20)).allowed).toBe(true);
  });
});

describe("rate limit settings", () => {
  it("defaults to the enterprise service level; variables override single categories", () => {
    expect(defaultRateLimits(readConfig({}))).toEqual({ serviceLevel: "enterprise", perSecond: SERVICE_LEVELS.enterprise });
    expect(defaultRateLimits(readConfig({ RATE_LIMIT_SERVICE_LEVEL: "free", RATE_LIMIT_TRIGGER: "100", RATE_LIMIT_GLOBAL: "" }))).toEqual({
      serviceLevel: "custom",
      perSecond: { trigger: 100, configuration: 20, global: 30 },
    });
    expect(() => readConfig({ RATE_LIMIT_SERVICE_LEVEL: "platinum" })).toThrow(/RATE_LIMIT_SERVICE_LEVEL/);
  });

  it("puts an environment's own service level and figures over the defaults", () => {
    const defaults = { serviceLevel: "enterprise", perSecond: SERVICE_LEVELS.enterprise };
    expect(settingsOf(defaults, null)).toBe(defaults);
    expect(settingsOf(defaults, { serviceLevel: "pro" })).toEqual({ serviceLevel: "pro", perSecond: SERVICE_LEVELS.pro });
    expect(settingsOf(defaults, { configuration: 5 })).toEqual({ serviceLevel: "custom", perSecond: { ...SERVICE_LEVELS.enterprise, configuration: 5 } });
  });
});

describe("the client address of a request", () => {
  it("is the connection's own without trusted proxies, whatever X-Forwarded-For says", () => {
    expect(clientAddressOf("192.0.2.1", "10.0.0.5", 0)).toBe("10.0.0.5");
    expect(clientAddressOf("", "10.0.0.5", 1)).toBe("10.0.0.5");
  });

  it("is the entry the outermost trusted proxy appended, never one written further left", () => {
    expect(clientAddressOf("192.0.2.1", "10.0.0.5", 1)).toBe("192.0.2.1");
    expect(clientAddressOf("6.6.6.6, 192.0.2.1", "10.0.0.5", 1)).toBe("192.0.2.1");
    expect(clientAddressOf("6.6.6.6,192.0.2.1 , 10.1.1.1", "10.0.0.5", 2)).toBe("192.0.2.1");
    // Fewer entries than proxies: the leftmost is the best there is.
    expect(clientAddressOf("192.0.2.1", "10.0.0.5", 3)).toBe("192.0.2.1");
  });
});
