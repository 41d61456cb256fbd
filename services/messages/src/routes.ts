import { announcingWrites, ChangeKind, type Announce, type ServiceRegistry } from "@notify/runtime";
import { messagesV1 } from "@notify/proto";
import { createMessageService, type MessageServiceDeps } from "./service.js";

/**
 * The writes announce the feeds they change (CHANGE_KIND_FEEDS, for the pages the gateway keeps)
 * and the messages that arrived (CHANGE_KIND_RECEIVED, for live Inbox events) as messages.proto declares.
 */
export function routes(deps: MessageServiceDeps & { announceFeeds: Announce; announceReceived: Announce }) {
  return (router: ServiceRegistry) => {
    router.service(
      messagesV1.MessageService,
      announcingWrites(messagesV1.MessageService, createMessageService(deps), {
        [ChangeKind.FEEDS]: deps.announceFeeds,
        [ChangeKind.RECEIVED]: deps.announceReceived,
      }),
    );
  };
}
