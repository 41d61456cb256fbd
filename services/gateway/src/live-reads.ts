import type { Client } from "@connectrpc/connect";
import type { messagesV1 } from "@notify/proto";
import { scopeHeaders } from "@notify/runtime";
import type { InboxCounts, LiveReads } from "./live.js";
import { inboxCountsOf, receivedMessageOf } from "./mappers/inbox-events.js";

/** Where the count events stop counting (`hasMore` past it), as Novu's do. */
const COUNT_LIMIT = 100;

/** The live events' reads: one BatchGetInboxCounts or one GetInAppMessages per call. */
export function liveReadsOf(messages: Client<typeof messagesV1.MessageService>): LiveReads {
  return {
    async counts(scope, subscriberIds, contextKeys) {
      const reply = await messages.batchGetInboxCounts(
        { subscriberIds: [...subscriberIds], limit: COUNT_LIMIT, contextKeys: [...contextKeys] },
        { headers: scopeHeaders(scope) },
      );
      const counts = new Map<string, InboxCounts>();
      // A subscriber that failed alone (deleted since it connected, say) gets no count events.
      for (const { result } of reply.results) if (result.case === "counts") counts.set(result.value.subscriberId, inboxCountsOf(result.value));
      return counts;
    },
    async received(scope, messageIds) {
      const reply = await messages.getInAppMessages({ messageIds: [...messageIds] }, { headers: scopeHeaders(scope) });
      const subscribers = new Map(reply.subscribers.map((subscriber) => [subscriber.id, subscriber]));
      const workflows = new Map(reply.workflows.map((workflow) => [workflow.id, workflow]));
      return reply.messages.map((message) => receivedMessageOf(message, subscribers.get(message.subscriberId), workflows.get(message.templateId)));
    },
  };
}
