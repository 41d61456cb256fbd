import { randomBytes } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";
import { migrations, start, type RunningGateway } from "../src/server.js";

// A gateway whose subscribers service is not running: what a client sees while a dependency is down.
let database: TestDatabase;
let gateway: RunningGateway;
const key = randomBytes(16).toString("hex");
beforeAll(async () => {
  database = await createTestDatabase([migrations]);
  gateway = await start(
    readConfig({
      LOG_LEVEL: "silent",
      DATABASE_URL: database.url,
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_PORT: "0",
      BOOTSTRAP_API_KEY: key,
      SUBSCRIBERS_URL: "http://127.0.0.1:1",
      READINESS_TIMEOUT_MS: "300",
    }),
  );
});
afterAll(async () => {
  await gateway?.stop();
  await database?.drop();
});

describe("a downstream service is down", () => {
  it("readyz answers 503 naming it, livez stays 200", async () => {
    const ready = await fetch(`http://127.0.0.1:${gateway.port}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { checks: Record<string, string> };
    expect(body.checks).toMatchObject({ postgres: "up", redis: "up", nats: "up" });
    expect(body.checks.subscribers).toMatch(/^down/);
    expect((await fetch(`http://127.0.0.1:${gateway.port}/livez`)).status).toBe(200);
  });

  it("API calls answer 503 with Retry-After, not 500", async () => {
    const reply = await fetch(`http://127.0.0.1:${gateway.port}/v1/subscribers/anyone`, { headers: { authorization: `ApiKey ${key}` } });
    expect(reply.status).toBe(503);
    expect(reply.headers.get("retry-after")).toBe("1");
    expect(((await reply.json()) as { statusCode: number }).statusCode).toBe(503);
  });
});
