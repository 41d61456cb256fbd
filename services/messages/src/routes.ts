import type { ServiceRegistry } from "@notify/runtime";
import { messagesV1 } from "@notify/proto";
import { createMessageService, type MessageServiceDeps } from "./service.js";

export function routes(deps: MessageServiceDeps) {
  return (router: ServiceRegistry) => {
    router.service(messagesV1.MessageService, createMessageService(deps));
  };
}
