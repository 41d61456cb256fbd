import type { ConnectRouter } from "@connectrpc/connect";
import { integrationsV1 } from "@notify/proto";
import { createIntegrationService, type IntegrationServiceDeps } from "./service.js";

export function routes(deps: IntegrationServiceDeps) {
  return (router: ConnectRouter) => {
    router.service(integrationsV1.IntegrationService, createIntegrationService(deps));
  };
}
