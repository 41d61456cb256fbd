import * as grpc from "@grpc/grpc-js";
import { createClient } from "@connectrpc/connect";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Health, HealthCheckResponse_ServingStatus, subscribersV1 } from "@notify/proto";
import { createRpcTransport, INTERNAL_TOKEN_HEADER } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, start, type RunningSubscribers } from "../src/server.js";
import { newScope, openDatabase, scopeHeaders, type Fixture } from "./fixtures.js";

const INTERNAL_RPC_TOKEN = "subscribers-wire-test-internal-token";

let fixture: Fixture;
let server: RunningSubscribers;
beforeAll(async () => {
  fixture = await openDatabase();
  server = await start(readConfig({ DATABASE_URL: fixture.database.url, SUBSCRIBERS_PORT: "0", LOG_LEVEL: "silent", INTERNAL_RPC_TOKEN }));
});
afterAll(async () => {
  await server?.stop();
  await fixture?.close();
});

describe("over the wire (h2c)", () => {
  it("serves the gRPC health check and the service to the transport every process uses", async () => {
    const rpc = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000, { internalToken: INTERNAL_RPC_TOKEN });
    try {
      const health = await createClient(Health, rpc.transport).check({});
      expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const scope = newScope();
      const subscribers = createClient(subscribersV1.SubscriberService, rpc.transport);
      const reply = await subscribers.upsertSubscriber({ subscriberId: "wire", fields: { firstName: "W" } }, { headers: scopeHeaders(scope) });
      expect(reply.created).toBe(true);
    } finally {
      rpc.close();
    }
  });

  it("interoperates with a @grpc/grpc-js client", async () => {
    const { SubscriberService, UpdateSubscriberRequestSchema, SubscriberSchema } = subscribersV1;
    // An update that changes nothing answers the subscriber, and NOT_FOUND for an unknown one.
    const method = SubscriberService.method.updateSubscriber;
    const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const scope = newScope();
    const rpc = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000, { internalToken: INTERNAL_RPC_TOKEN });
    await createClient(SubscriberService, rpc.transport).upsertSubscriber(
      { subscriberId: "interop", fields: { lastName: "Grpc" } },
      { headers: scopeHeaders(scope) },
    );
    rpc.close();
    const metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries({ ...scopeHeaders(scope), [INTERNAL_TOKEN_HEADER]: INTERNAL_RPC_TOKEN })) metadata.set(key, value);
    try {
      const subscriber = await new Promise<subscribersV1.Subscriber>((resolve, reject) => {
        client.makeUnaryRequest(
          `/${SubscriberService.typeName}/${method.name}`,
          (request: subscribersV1.UpdateSubscriberRequest) => Buffer.from(toBinary(UpdateSubscriberRequestSchema, request)),
          (bytes: Buffer) => fromBinary(SubscriberSchema, bytes),
          create(UpdateSubscriberRequestSchema, { subscriberId: "interop" }),
          metadata,
          (error, value) => (error || !value ? reject(error) : resolve(value)),
        );
      });
      expect(subscriber.lastName).toBe("Grpc");
      const missing = await new Promise<grpc.ServiceError>((resolve) => {
        client.makeUnaryRequest(
          `/${SubscriberService.typeName}/${method.name}`,
          (request: subscribersV1.UpdateSubscriberRequest) => Buffer.from(toBinary(UpdateSubscriberRequestSchema, request)),
          (bytes: Buffer) => fromBinary(SubscriberSchema, bytes),
          create(UpdateSubscriberRequestSchema, { subscriberId: "nobody" }),
          metadata,
          (error) => resolve(error!),
        );
      });
      expect(missing.code).toBe(grpc.status.NOT_FOUND);
    } finally {
      client.close();
    }
  });
});
