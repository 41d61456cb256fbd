import type { ServiceImpl } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { announcing, EVERY_KEY, type Announce } from "@notify/runtime";

type Service = ServiceImpl<typeof messagesV1.MessageService>;

const inApp = (message: messagesV1.NewMessage | undefined) => message?.channel === messagesV1.Channel.IN_APP;

/** The subscribers whose feed a CreateMessages call can add to: recipients of its in-app messages. */
function feedsCreatedIn(request: messagesV1.CreateMessagesRequest): string[] {
  const subscriberIds = new Set<string>();
  for (const message of request.messages) if (inApp(message)) subscriberIds.add(message.externalSubscriberId);
  for (const group of request.groups) {
    if (inApp(group.message)) for (const recipient of group.recipients) subscriberIds.add(recipient.externalSubscriberId);
  }
  return [...subscriberIds];
}

/**
 * Every method that can change a subscriber's in-app feed announces whose (CHANGE_SUBJECTS.feeds),
 * for the pages the gateway keeps. A delete names a message or a transaction, not its
 * subscribers: it announces the whole environment rather than read them first.
 */
export function announcingWrites(service: Service, announce: Announce): Service {
  const bySubscriberId = (request: { subscriberId: string }) => [request.subscriberId];
  const everyFeed = () => EVERY_KEY;
  return {
    ...service,
    createMessages: announcing(announce, service.createMessages, feedsCreatedIn),
    markMessages: announcing(announce, service.markMessages, bySubscriberId),
    markAllMessages: announcing(announce, service.markAllMessages, bySubscriberId),
    deleteMessage: announcing(announce, service.deleteMessage, everyFeed),
    deleteTransactionMessages: announcing(announce, service.deleteTransactionMessages, everyFeed),
  };
}
