import { Code, createClient } from "@connectrpc/connect";
import { tenantsV1, workflowsV1 } from "@notify/proto";
import { createLogger, type Pool } from "@notify/runtime";
import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
export { callAs, newScope, rpcError } from "@notify/testing";
import { inMemoryTransport } from "@notify/testing";
export { scopeHeaders } from "@notify/runtime";
import { routes } from "../src/routes.js";
import { migrations } from "../src/server.js";

export type Fixture = DatabaseFixture;

export const openDatabase = (): Promise<Fixture> => openTestDatabase([migrations], 8);



/** Both services behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClients(pool: Pool) {
  const log = createLogger("test", "silent");
  const transport = inMemoryTransport(routes({ pool, log, jobSubject: "test.jobs.trigger" }));
  return {
    workflows: createClient(workflowsV1.WorkflowService, transport),
    tenants: createClient(tenantsV1.TenantService, transport),
  };
}


export { Code };
