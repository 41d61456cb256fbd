import type { ServiceRegistry } from "@notify/runtime";
import { integrationsV1 } from "@notify/proto";
import { createIntegrationService, type IntegrationServiceDeps } from "./service.js";

export function routes(deps: IntegrationServiceDeps) {
  return (router: ServiceRegistry) => {
    router.service(integrationsV1.IntegrationService, createIntegrationService(deps));
  };
}
