import type { ConnectRouter } from "@connectrpc/connect";
import { tenantsV1, workflowsV1 } from "@notify/proto";
import type { Logger, Pool } from "@notify/runtime";
import { createTenantService } from "./tenants/service.js";
import { createWorkflowService } from "./workflows/service.js";

export interface ServiceDeps {
  pool: Pool;
  log: Logger;
}

export function routes(deps: ServiceDeps) {
  return (router: ConnectRouter) => {
    router.service(workflowsV1.WorkflowService, createWorkflowService(deps));
    router.service(tenantsV1.TenantService, createTenantService(deps));
  };
}
