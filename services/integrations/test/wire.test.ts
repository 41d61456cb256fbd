import { createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus, integrationsV1 } from "@notify/proto";
import { createRpcTransport } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, start, type RunningIntegrations } from "../src/server.js";
import { callAs, newScope, openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let server: RunningIntegrations;
beforeAll(async () => {
  fixture = await openDatabase();
  server = await start(
    readConfig({ DATABASE_URL: fixture.database.url, INTEGRATIONS_PORT: "0", INTEGRATIONS_ENCRYPTION_KEY: "cd".repeat(32), LOG_LEVEL: "silent" }),
  );
});
afterAll(async () => {
  await server?.stop();
  await fixture?.close();
});

describe("over the wire (h2c)", () => {
  it("serves the gRPC health check and the service", async () => {
    const rpc = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000);
    try {
      const health = await createClient(Health, rpc.transport).check({});
      expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const integrations = createClient(integrationsV1.IntegrationService, rpc.transport);
      const call = callAs(newScope());
      const created = await integrations.createIntegration(
        { providerId: "sendgrid", channel: "email", active: true, credentials: { apiKey: "wire-key" } },
        call,
      );
      expect(created).toMatchObject({ primary: true, credentials: { apiKey: "wire-key" } });
      const selected = await integrations.selectIntegration({ channel: "email" }, call);
      expect(selected.integration?.credentials?.apiKey).toBe("wire-key");
    } finally {
      rpc.close();
    }
  });
});
