import type { Announce, ServiceRegistry } from "@notify/runtime";
import { messagesV1 } from "@notify/proto";
import { announcingWrites } from "./announcements.js";
import { createMessageService, type MessageServiceDeps } from "./service.js";

export function routes(deps: MessageServiceDeps & { announceFeeds: Announce }) {
  return (router: ServiceRegistry) => {
    router.service(messagesV1.MessageService, announcingWrites(createMessageService(deps), deps.announceFeeds));
  };
}
