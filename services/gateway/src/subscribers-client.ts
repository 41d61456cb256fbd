import type { CallOptions, Client } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { subscriberNotFound } from "@notify/runtime";
import { batched } from "./coalesce.js";

type SubscribersClient = Client<typeof subscribersV1.SubscriberService>;

/** One subscriber by external id (NOT_FOUND if unknown); travels in a BatchGetSubscribers with its concurrent peers. */
export type GetSubscriber = (subscriberId: string, call: CallOptions) => Promise<subscribersV1.Subscriber>;

/**
 * Subscriber reads (GET /v1/subscribers/:id and the routes that read one before writing),
 * batched into BatchGetSubscribers: one RPC per read spent several times the gateway's and
 * Postgres's CPU per request and served a fraction of the requests a second.
 */
export function getSubscriberBatched(client: SubscribersClient): GetSubscriber {
  const get = batched(async (subscriberIds: string[], headers) => {
    // Identical requests share one item, so these ids are distinct.
    const reply = await client.batchGetSubscribers({ subscriberIds }, { headers });
    const found = new Map(reply.subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
    return subscriberIds.map((subscriberId) => found.get(subscriberId));
  });
  return async (subscriberId, call) => {
    const subscriber = await get(subscriberId, call);
    if (!subscriber) throw subscriberNotFound(subscriberId);
    return subscriber;
  };
}
