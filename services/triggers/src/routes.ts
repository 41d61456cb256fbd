import { contextsV1, layoutsV1, tenantsV1, triggersV1, workflowsV1 } from "@notify/proto";
import { announcingWrites, ChangeKind, type Announce, type FollowedCache, type Logger, type Pool, type ServiceRegistry } from "@notify/runtime";
import { createContextService } from "./contexts/service.js";
import { createLayoutService } from "./layouts/service.js";
import { createLegacyLayoutService } from "./legacy-layouts/service.js";
import { createTenantService } from "./tenants/service.js";
import { createTriggerService } from "./triggers/service.js";
import { createWorkflowOverrideService } from "./workflow-overrides/service.js";
import { createWorkflowService } from "./workflows/service.js";

export interface ServiceDeps {
  pool: Pool;
  log: Logger;
}

export interface RouteDeps extends ServiceDeps {
  /** Where accepted trigger jobs are published. */
  jobSubject: string;
  /** Tells every process keeping workflows (this one included) which changed, before a write answers. */
  announceWorkflows: Announce;
  /** Workflows by trigger identifier, kept while their changes are followed. */
  workflowsByIdentifier: FollowedCache<workflowsV1.Workflow>;
  /** Drop recipients whose id breaks Novu's rule, rather than only log them. */
  enforceRecipientIds: boolean;
}

export function routes(deps: RouteDeps) {
  return (router: ServiceRegistry) => {
    router.service(
      workflowsV1.WorkflowService,
      announcingWrites(workflowsV1.WorkflowService, createWorkflowService(deps), { [ChangeKind.WORKFLOWS]: deps.announceWorkflows }),
    );
    router.service(tenantsV1.TenantService, createTenantService(deps));
    router.service(workflowsV1.WorkflowOverrideService, createWorkflowOverrideService(deps));
    router.service(contextsV1.ContextService, createContextService(deps));
    router.service(
      layoutsV1.LayoutService,
      announcingWrites(layoutsV1.LayoutService, createLayoutService(deps), { [ChangeKind.WORKFLOWS]: deps.announceWorkflows }),
    );
    router.service(layoutsV1.LegacyLayoutService, createLegacyLayoutService(deps));
    router.service(triggersV1.TriggerService, createTriggerService(deps));
  };
}
