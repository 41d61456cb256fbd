import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus, messagesV1, subscribersV1 } from "@notify/proto";
import { createRpcTransport, type RpcTransport } from "@notify/runtime";
import {
  migrations as subscribersMigrations,
  readConfig as readSubscribersConfig,
  start as startSubscribers,
  type RunningSubscribers,
} from "@notify/subscribers";
import { createTestDatabase, type TestDatabase } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, readConfig, start, type RunningMessages } from "../src/server.js";
import { callAs, countOne, newMessage, newScope } from "./fixtures.js";

let database: TestDatabase;
let subscribersServer: RunningSubscribers | undefined;
let server: RunningMessages;
let rpc: RpcTransport;

beforeAll(async () => {
  database = await createTestDatabase([subscribersMigrations, migrations]);
  subscribersServer = await startSubscribers(readSubscribersConfig({ DATABASE_URL: database.url, SUBSCRIBERS_PORT: "0", LOG_LEVEL: "silent" }));
  server = await start(
    readConfig({
      DATABASE_URL: database.url,
      MESSAGES_PORT: "0",
      SUBSCRIBERS_URL: `http://127.0.0.1:${subscribersServer.port}`,
      LOG_LEVEL: "silent",
    }),
  );
  rpc = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000);
});
afterAll(async () => {
  rpc?.close();
  await server?.stop();
  await subscribersServer?.stop();
  await database?.drop();
});

describe("over the wire (h2c)", () => {
  it("serves health and resolves subscribers through the real subscribers service", async () => {
    expect((await createClient(Health, rpc.transport).check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const scope = newScope();
    const subscribersRpc = createRpcTransport(`http://127.0.0.1:${subscribersServer!.port}`, 10_000);
    const { subscriber } = await createClient(subscribersV1.SubscriberService, subscribersRpc.transport).upsertSubscriber(
      { subscriberId: "wire" },
      callAs(scope),
    );
    subscribersRpc.close();
    const messages = createClient(messagesV1.MessageService, rpc.transport);
    await messages.createMessages({ messages: [newMessage(subscriber!), newMessage(subscriber!)] }, callAs(scope));
    expect(await countOne(messages, { subscriberId: "wire", limit: 100 }, callAs(scope))).toBe(2);
    const missing = await countOne(messages, { subscriberId: "nobody", limit: 100 }, callAs(scope)).catch((error: unknown) => error);
    expect(ConnectError.from(missing).code).toBe(Code.NotFound);
  });

  it("answers UNAVAILABLE while the subscribers service is down", async () => {
    await subscribersServer!.stop();
    subscribersServer = undefined;
    const messages = createClient(messagesV1.MessageService, rpc.transport);
    const error = await countOne(messages, { subscriberId: "wire", limit: 100 }, callAs(newScope())).catch((failure: unknown) => failure);
    expect(ConnectError.from(error).code).toBe(Code.Unavailable);
  });
});
