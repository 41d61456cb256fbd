import { createClient, createRouterTransport } from "@connectrpc/connect";
import { subscribersV1 } from "@notify/proto";
import {
  ENVIRONMENT_HEADER,
  ORGANIZATION_HEADER,
  createLogger,
  createPool,
  objectId,
  serverInterceptors,
  type Pool,
} from "@notify/runtime";
import { createTestDatabase, type TestDatabase } from "@notify/testing";
import { migrations } from "../src/server.js";
import { routes } from "../src/routes.js";

export interface Fixture {
  database: TestDatabase;
  pool: Pool;
  close(): Promise<void>;
}

export async function openDatabase(): Promise<Fixture> {
  const database = await createTestDatabase([migrations]);
  const pool = createPool(database.url, 4);
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

/** The service behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClient(pool: Pool) {
  const log = createLogger("test", process.env.TEST_LOG_LEVEL ?? "silent");
  const transport = createRouterTransport(routes({ pool, log }), { router: { interceptors: serverInterceptors(log) } });
  return createClient(subscribersV1.SubscriberService, transport);
}
