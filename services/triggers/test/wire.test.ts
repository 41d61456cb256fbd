import { createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus, tenantsV1, workflowsV1 } from "@notify/proto";
import { createRpcTransport, StepType } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig, start, type RunningTriggers } from "../src/server.js";
import { newScope, openDatabase, scopeHeaders, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let server: RunningTriggers;
beforeAll(async () => {
  fixture = await openDatabase();
  server = await start(readConfig({ DATABASE_URL: fixture.database.url, TRIGGERS_PORT: "0", LOG_LEVEL: "silent" }));
});
afterAll(async () => {
  await server?.stop();
  await fixture?.close();
});

describe("over the wire (h2c)", () => {
  it("serves the health check and both services on one port", async () => {
    const rpc = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000);
    try {
      expect((await createClient(Health, rpc.transport).check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const call = { headers: scopeHeaders(newScope()) };
      const workflow = await createClient(workflowsV1.WorkflowService, rpc.transport).createWorkflow(
        { name: "Wire", steps: [{ template: { type: StepType.IN_APP, content: { case: "text", value: "{{greeting}}" } } }] },
        call,
      );
      expect(workflow).toMatchObject({ identifier: "wire", variables: ["greeting"] });
      const tenant = await createClient(tenantsV1.TenantService, rpc.transport).createTenant({ identifier: "wire", name: "Wire" }, call);
      expect(tenant.identifier).toBe("wire");
    } finally {
      rpc.close();
    }
  });
});
