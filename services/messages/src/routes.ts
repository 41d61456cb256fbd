import { announcingWrites, ChangeKind, type Announce, type ServiceRegistry } from "@notify/runtime";
import { messagesV1 } from "@notify/proto";
import { createMessageService, type MessageServiceDeps } from "./service.js";

/** The writes announce the feeds they change as messages.proto declares (CHANGE_KIND_FEEDS), for the pages the gateway keeps. */
export function routes(deps: MessageServiceDeps & { announceFeeds: Announce }) {
  return (router: ServiceRegistry) => {
    router.service(
      messagesV1.MessageService,
      announcingWrites(messagesV1.MessageService, createMessageService(deps), { [ChangeKind.FEEDS]: deps.announceFeeds }),
    );
  };
}
