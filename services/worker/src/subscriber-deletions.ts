import type { Client } from "@connectrpc/connect";
import type { messagesV1, subscribersV1, topicsV1 } from "@notify/proto";
import { scopeHeaders } from "@notify/runtime";

export interface DeletionClients {
  subscribers: Client<typeof subscribersV1.SubscriberService>;
  topics: Client<typeof topicsV1.TopicService>;
  messages: Client<typeof messagesV1.MessageService>;
}

/**
 * Removes what other services keep for a deleted subscriber: its topic subscriptions, and its
 * messages when the delete asked for that, a batch per call so no call holds many locks. The job is
 * published before its delete commits, so it acts only once the subscriber is gone from committed
 * data; until then it fails and comes back after the consumer's back-off, and a delete that never
 * commits leaves a dead letter rather than a subscriber without its subscriptions.
 */
export async function followSubscriberDeletion(job: subscribersV1.SubscriberDeletedJob, clients: DeletionClients): Promise<void> {
  const call = { headers: scopeHeaders({ organizationId: job.organizationId, environmentId: job.environmentId }) };
  const { subscribers } = await clients.subscribers.batchGetSubscribers({ ids: [job.id] }, call);
  if (subscribers.length > 0) throw new Error(`subscriber ${job.subscriberId} still exists: its delete is not committed`);
  await clients.topics.deleteSubscriberSubscriptions({ internalSubscriberId: job.id }, call);
  let messagesLeft = job.deleteMessages;
  let after: string | undefined;
  while (messagesLeft) {
    const reply = await clients.messages.deleteSubscriberMessages(
      { internalSubscriberId: job.id, subscriberId: job.subscriberId, ...(after ? { after } : {}) },
      call,
    );
    messagesLeft = reply.hasMore;
    after = reply.next;
  }
}
