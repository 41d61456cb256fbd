import type { ServiceRegistry } from "@notify/runtime";
import { connectionsV1, integrationsV1, variablesV1 } from "@notify/proto";
import { createChannelConnectionService } from "./channel-connections/service.js";
import { createEnvironmentVariableService } from "./environment-variables/service.js";
import { createIntegrationService, type IntegrationServiceDeps } from "./service.js";

export function routes(deps: IntegrationServiceDeps) {
  return (router: ServiceRegistry) => {
    router.service(integrationsV1.IntegrationService, createIntegrationService(deps));
    router.service(variablesV1.EnvironmentVariableService, createEnvironmentVariableService(deps));
    router.service(connectionsV1.ChannelConnectionService, createChannelConnectionService(deps));
  };
}
