import { createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus, topicsV1 } from "@notify/proto";
import { createLogger, createRpcTransport, serveRpc, type RpcServer } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, start, type RunningTopics } from "../src/server.js";
import { FakeSubscribers, callAs, newScope, openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let subscribersServer: RpcServer;
let server: RunningTopics;
const subscribers = new FakeSubscribers();
beforeAll(async () => {
  fixture = await openDatabase();
  subscribersServer = await serveRpc({
    host: "127.0.0.1",
    port: 0,
    log: createLogger("fake-subscribers", "silent"),
    internalToken: undefined,
    routes: subscribers.routes(),
  });
  server = await start(
    readConfig({
      DATABASE_URL: fixture.database.url,
      TOPICS_PORT: "0",
      SUBSCRIBERS_URL: `http://127.0.0.1:${subscribersServer.port}`,
      LOG_LEVEL: "silent",
    }),
  );
});
afterAll(async () => {
  await server?.stop();
  await subscribersServer?.close();
  await fixture?.close();
});

describe("over the wire (h2c)", () => {
  it("serves the gRPC health check and resolves subscribers through the subscribers service", async () => {
    const rpc = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000);
    try {
      const health = await createClient(Health, rpc.transport).check({});
      expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const scope = newScope();
      subscribers.add(scope, "wired");
      const topics = createClient(topicsV1.TopicService, rpc.transport);
      const reply = await topics.addSubscribers({ topicKey: "wire", subscriberIds: ["wired", "absent"] }, callAs(scope));
      expect(reply).toMatchObject({ succeeded: ["wired"], notFound: ["absent"] });
      const record = await topics.getSubscription({ topicKey: "wire", externalSubscriberId: "wired" }, callAs(scope));
      expect(record.externalSubscriberId).toBe("wired");
    } finally {
      rpc.close();
    }
  });
});
