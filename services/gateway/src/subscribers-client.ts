import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { subscriberNotFound } from "@notify/runtime";
import { batched } from "./coalesce.js";

type SubscribersClient = Client<typeof subscribersV1.SubscriberService>;

/**
 * The subscribers client the routes use: subscriber reads (GET /v1/subscribers/:id and the
 * routes that read one before writing) are batched into BatchGetSubscribers: one RPC per read
 * spent several times the gateway's and Postgres's CPU per request and served a fraction of the
 * requests a second.
 */
export function coalescingSubscribersClient(client: SubscribersClient): SubscribersClient {
  const get = batched(async (requests: MessageInitShape<typeof subscribersV1.GetSubscriberRequestSchema>[], headers) => {
    // Identical requests share one item, so these ids are distinct.
    const reply = await client.batchGetSubscribers({ subscriberIds: requests.map((request) => request.subscriberId ?? "") }, { headers });
    const found = new Map(reply.subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
    return requests.map((request) => found.get(request.subscriberId ?? ""));
  });
  return {
    ...client,
    async getSubscriber(request, options) {
      const subscriber = await get(request, options);
      if (!subscriber) throw subscriberNotFound(request.subscriberId ?? "");
      return subscriber;
    },
  };
}
