import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, createClient } from "@connectrpc/connect";
import { contextsV1, layoutsV1, tenantsV1, triggersV1, workflowsV1 } from "@notify/proto";
import { CHANGE_SUBJECTS, announcer, createFollowedCache, createLogger, createPool, type Pool } from "@notify/runtime";
import { createTestDatabase, openTestDatabase, type DatabaseFixture } from "@notify/testing";
export { callAs, newScope, rpcError } from "@notify/testing";
import { inMemoryTransport } from "@notify/testing";
export { scopeHeaders } from "@notify/runtime";
import { routes } from "../src/routes.js";
import { migrations } from "../src/server.js";

export type Fixture = DatabaseFixture;

export const openDatabase = (): Promise<Fixture> => openTestDatabase([migrations], 8);

/**
 * A database migrated up to, not including, the migration numbered `version` (e.g. "009"), as a
 * deployment of the build before it left it; `migrate(pool, migrations)` then upgrades it.
 */
export async function openDatabaseBefore(version: string): Promise<{ pool: Pool; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "triggers-migrations-"));
  for (const file of (await readdir(migrations.dir)).filter((name) => name < version)) await cp(join(migrations.dir, file), join(dir, file));
  const database = await createTestDatabase([{ schema: migrations.schema, dir }]);
  const pool = createPool(database.url, 2);
  return {
    pool,
    async close() {
      await pool.end();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The process's services over `pool`, keeping workflows as the process does; with one process
 * and no NATS, an announcement only drops this process's copies.
 */
export function serviceRoutes(pool: Pool, { enforceRecipientIds = false } = {}) {
  const workflowsByIdentifier = createFollowedCache<workflowsV1.Workflow>({ name: "triggers_workflows", max: 1000 });
  workflowsByIdentifier.setLive(true);
  return routes({
    pool,
    log: createLogger("test", "silent"),
    jobSubject: "test.jobs.trigger",
    workflowsByIdentifier,
    announceWorkflows: announcer(() => undefined, CHANGE_SUBJECTS.workflows, workflowsByIdentifier),
    enforceRecipientIds,
  });
}

/** The services behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClients(pool: Pool, options?: Parameters<typeof serviceRoutes>[1]) {
  const transport = inMemoryTransport(serviceRoutes(pool, options));
  return {
    workflows: createClient(workflowsV1.WorkflowService, transport),
    tenants: createClient(tenantsV1.TenantService, transport),
    contexts: createClient(contextsV1.ContextService, transport),
    layouts: createClient(layoutsV1.LayoutService, transport),
    legacyLayouts: createClient(layoutsV1.LegacyLayoutService, transport),
    triggers: createClient(triggersV1.TriggerService, transport),
  };
}

export { Code };
