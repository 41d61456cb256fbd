import type { messagesV1, subscribersV1, workflowsV1 } from "@notify/proto";
import type { InboxCounts, ReceivedMessage } from "../live.js";
import { isoOrNull } from "./common.js";
import { severityName } from "@notify/runtime";
import { workflowSummaryToJson } from "./inbox.js";
import { messageFieldsToJson } from "./messages.js";

// The Inbox's live events (protocol §4.2, §4.3): the payloads of the socket's events.

/** The subscriber as the raw message entity embeds it (the client makes it the notification's `to`). */
function subscriberOfMessage(subscriber: subscribersV1.Subscriber) {
  const { id, subscriberId, firstName, lastName, avatar, locale, data, timezone, email, phone } = subscriber;
  return { _id: id, subscriberId, firstName, lastName, avatar, locale, data, timezone, email, phone };
}

/**
 * A new in-app message as `notification_received` carries it: the stored entity's field names
 * (the server-side Message's), always with `cta` (the client reads it unguarded), its tags, data
 * and severity, the workflow as the Inbox filters tabs on it, and the subscriber (just its ids
 * when it is gone).
 */
export function receivedMessageOf(
  message: messagesV1.Message,
  subscriber: subscribersV1.Subscriber | undefined,
  workflow: workflowsV1.Workflow | undefined,
): ReceivedMessage {
  const json = messageFieldsToJson(message) as ReceivedMessage["message"];
  json.firstSeenDate = isoOrNull(message.firstSeenDate);
  json.archivedAt = isoOrNull(message.archivedAt);
  json.tags = message.tags;
  json.data = message.data ?? {};
  json.severity = severityName(message.severity) ?? "none";
  if (workflow) json.workflow = workflowSummaryToJson(workflow);
  json.subscriber = subscriber ? subscriberOfMessage(subscriber) : { _id: message.subscriberId, subscriberId: message.externalSubscriberId };
  return { subscriberId: message.externalSubscriberId, contextKeys: message.contextKeys, message: json };
}

/** One subscriber's counts as the count events carry them. */
export function inboxCountsOf(counts: messagesV1.InboxCounts): InboxCounts {
  const count = (capped: messagesV1.CappedCount | undefined) => capped?.count ?? 0;
  return {
    unseenCount: count(counts.unseen),
    unseenHasMore: counts.unseen?.hasMore ?? false,
    unreadCount: count(counts.unread),
    unreadHasMore: counts.unread?.hasMore ?? false,
    unreadBySeverity: {
      high: count(counts.unreadHigh),
      medium: count(counts.unreadMedium),
      low: count(counts.unreadLow),
      none: count(counts.unreadNone),
    },
  };
}
