import { ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { integrationsV1 } from "@notify/proto";
import { ENVIRONMENT_HEADER, ORGANIZATION_HEADER, createLogger, createPool, objectId, serverInterceptors, type Pool } from "@notify/runtime";
import { createTestDatabase, type TestDatabase } from "@notify/testing";
import { createSecretBox, type SecretBox } from "../src/secrets.js";
import { migrations } from "../src/server.js";
import { routes } from "../src/routes.js";

export const TEST_KEY = Buffer.alloc(32, 7);

export interface Fixture {
  database: TestDatabase;
  pool: Pool;
  close(): Promise<void>;
}

export async function openDatabase(): Promise<Fixture> {
  const database = await createTestDatabase([migrations]);
  const pool = createPool(database.url, 10);
  return {
    database,
    pool,
    async close() {
      await pool.end();
      await database.drop();
    },
  };
}

export interface TestScope {
  organizationId: string;
  environmentId: string;
}

export const newScope = (organizationId = objectId()): TestScope => ({ organizationId, environmentId: objectId() });

export const callAs = (scope: TestScope) => ({
  headers: { [ORGANIZATION_HEADER]: scope.organizationId, [ENVIRONMENT_HEADER]: scope.environmentId },
});

/**
 * The service behind an in-memory transport: the real handlers and interceptors, no network.
 * Each call makes a new service instance, as another replica of the process would be.
 */
export function inMemoryClient(pool: Pool, secrets: SecretBox = createSecretBox(TEST_KEY)) {
  const log = createLogger("test", "silent");
  const transport = createRouterTransport(routes({ pool, log, secrets }), { router: { interceptors: serverInterceptors(log) } });
  return createClient(integrationsV1.IntegrationService, transport);
}

export async function rpcError(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}
