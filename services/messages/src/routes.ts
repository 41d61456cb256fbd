import type { ConnectRouter } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { createMessageService, type MessageServiceDeps } from "./service.js";

export function routes(deps: MessageServiceDeps) {
  return (router: ConnectRouter) => {
    router.service(messagesV1.MessageService, createMessageService(deps));
  };
}
