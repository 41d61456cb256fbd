import { Code, createClient } from "@connectrpc/connect";
import { contextsV1, layoutsV1, tenantsV1, workflowsV1 } from "@notify/proto";
import { CHANGE_SUBJECTS, announcer, createFollowedCache, createLogger, type Pool } from "@notify/runtime";
import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
export { callAs, newScope, rpcError } from "@notify/testing";
import { inMemoryTransport } from "@notify/testing";
export { scopeHeaders } from "@notify/runtime";
import { routes } from "../src/routes.js";
import { migrations } from "../src/server.js";

export type Fixture = DatabaseFixture;

export const openDatabase = (): Promise<Fixture> => openTestDatabase([migrations], 8);

/**
 * The process's services over `pool`, keeping workflows as the process does; with one process
 * and no NATS, an announcement only drops this process's copies.
 */
export function serviceRoutes(pool: Pool) {
  const workflowsByIdentifier = createFollowedCache<workflowsV1.Workflow>({ name: "triggers_workflows", max: 1000 });
  workflowsByIdentifier.setLive(true);
  return routes({
    pool,
    log: createLogger("test", "silent"),
    jobSubject: "test.jobs.trigger",
    workflowsByIdentifier,
    announceWorkflows: announcer(() => undefined, CHANGE_SUBJECTS.workflows, workflowsByIdentifier),
  });
}

/** The services behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClients(pool: Pool) {
  const transport = inMemoryTransport(serviceRoutes(pool));
  return {
    workflows: createClient(workflowsV1.WorkflowService, transport),
    tenants: createClient(tenantsV1.TenantService, transport),
    contexts: createClient(contextsV1.ContextService, transport),
    layouts: createClient(layoutsV1.LayoutService, transport),
    legacyLayouts: createClient(layoutsV1.LegacyLayoutService, transport),
  };
}

export { Code };
