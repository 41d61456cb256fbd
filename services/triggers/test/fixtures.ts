import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { tenantsV1, workflowsV1 } from "@notify/proto";
import { ENVIRONMENT_HEADER, ORGANIZATION_HEADER, createLogger, createPool, objectId, serverInterceptors, type Pool } from "@notify/runtime";
import { createTestDatabase, type TestDatabase } from "@notify/testing";
import { routes } from "../src/routes.js";
import { migrations } from "../src/server.js";

export interface Fixture {
  database: TestDatabase;
  pool: Pool;
  close(): Promise<void>;
}

export async function openDatabase(): Promise<Fixture> {
  const database = await createTestDatabase([migrations]);
  const pool = createPool(database.url, 8);
  return {
    database,
    pool,
    async close() {
      await pool.end();
      await database.drop();
    },
  };
}

export const newScope = () => ({ organizationId: objectId(), environmentId: objectId() });

export const scopeHeaders = (scope: { organizationId: string; environmentId: string }) => ({
  [ORGANIZATION_HEADER]: scope.organizationId,
  [ENVIRONMENT_HEADER]: scope.environmentId,
});

/** Both services behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClients(pool: Pool) {
  const log = createLogger("test", process.env.TEST_LOG_LEVEL ?? "silent");
  const transport = createRouterTransport(routes({ pool, log }), { router: { interceptors: serverInterceptors(log) } });
  return {
    workflows: createClient(workflowsV1.WorkflowService, transport),
    tenants: createClient(tenantsV1.TenantService, transport),
  };
}

export async function rpcError(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}

export { Code };
