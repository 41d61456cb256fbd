import { randomBytes } from "node:crypto";
import { createTestDatabase, eventually, type TestDatabase } from "@notify/testing";
import { migrations as workerMigrations, readConfig as readWorkerConfig, start as startWorker, type RunningWorker } from "@notify/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";
import { migrations, start, type RunningGateway } from "../src/server.js";
import { privateNats } from "./private-nats.js";

// What the kubelet's probes and a client see while a dependency is down: a gateway whose
// subscribers service is not running, and a worker whose NATS server stops and comes back.
const nats = await privateNats();
let database: TestDatabase;
let gateway: RunningGateway;
let worker: RunningWorker;
const key = randomBytes(16).toString("hex");
const nowhere = "http://127.0.0.1:1";
beforeAll(async () => {
  await nats.start();
  database = await createTestDatabase([migrations, workerMigrations]);
  gateway = await start(
    readConfig({
      LOG_LEVEL: "silent",
      DATABASE_URL: database.url,
      NATS_URL: nats.url,
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_PORT: "0",
      BOOTSTRAP_API_KEY: key,
      SUBSCRIBERS_URL: nowhere,
      READINESS_TIMEOUT_MS: "300",
    }),
  );
  worker = await startWorker(
    readWorkerConfig({
      LOG_LEVEL: "silent",
      DATABASE_URL: database.url,
      NATS_URL: nats.url,
      WORKER_HOST: "127.0.0.1",
      WORKER_PORT: "0",
      SUBSCRIBERS_URL: nowhere,
      INTEGRATIONS_URL: nowhere,
      TOPICS_URL: nowhere,
      TRIGGERS_URL: nowhere,
      MESSAGES_URL: nowhere,
    }),
  );
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  await worker?.stop();
  await nats.remove();
  await database?.drop();
});

const gatewayProbe = (path: string) => fetch(`http://127.0.0.1:${gateway.port}${path}`);
const workerProbe = async (path: string) => (await fetch(`http://127.0.0.1:${worker.healthPort}${path}`)).status;

describe("a downstream service is down", () => {
  it("the gateway stays ready and live: it still serves what does not need that service", async () => {
    expect((await gatewayProbe("/readyz")).status).toBe(200);
    expect((await gatewayProbe("/livez")).status).toBe(200);
  });

  it("the dependency health answers 503 naming it", async () => {
    const reply = await gatewayProbe("/readyz/dependencies");
    expect(reply.status).toBe(503);
    expect(reply.headers.get("retry-after")).toBe("1");
    const body = (await reply.json()) as { checks: Record<string, string> };
    expect(body.checks).toMatchObject({ postgres: "up", redis: "up", nats: "up" });
    expect(body.checks.subscribers).toMatch(/^down/);
  });

  it("API calls that need it answer 503 with Retry-After, not 500", async () => {
    const reply = await fetch(`http://127.0.0.1:${gateway.port}/v1/subscribers/anyone`, { headers: { authorization: `ApiKey ${key}` } });
    expect(reply.status).toBe(503);
    expect(reply.headers.get("retry-after")).toBe("1");
    expect(((await reply.json()) as { statusCode: number }).statusCode).toBe(503);
  });

  it("API calls that do not need it are served", async () => {
    const reply = await fetch(`http://127.0.0.1:${gateway.port}/v1/environments/me`, { headers: { authorization: `ApiKey ${key}` } });
    expect(reply.status).toBe(200);
  });
});

describe("the worker's probes", () => {
  it("answer ready and live while it consumes, unready and still live while NATS is down, ready again when it is back", async () => {
    expect(await workerProbe("/readyz")).toBe(200);
    expect(await workerProbe("/livez")).toBe(200);
    await nats.stop();
    await eventually(async () => ((await workerProbe("/readyz")) === 503 ? true : undefined), 10_000);
    expect(await workerProbe("/livez")).toBe(200);
    expect((await gatewayProbe("/readyz")).status).toBe(200);
    await nats.start();
    await eventually(async () => ((await workerProbe("/readyz")) === 200 ? true : undefined), 15_000);
    expect(await workerProbe("/livez")).toBe(200);
  }, 40_000);
});
