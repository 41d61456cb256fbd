import type { ServiceImpl } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { announcing, type Announce } from "@notify/runtime";

type Service = ServiceImpl<typeof subscribersV1.SubscriberService>;

/** Every method that can change a subscriber announces the subscribers it may have changed (runtime changes.ts). */
export function announcingWrites(service: Service, announce: Announce): Service {
  const bySubscriberId = (request: { subscriberId: string }) => [request.subscriberId];
  return {
    ...service,
    upsertSubscriber: announcing(announce, service.upsertSubscriber, bySubscriberId),
    updateSubscriber: announcing(announce, service.updateSubscriber, bySubscriberId),
    deleteSubscriber: announcing(announce, service.deleteSubscriber, bySubscriberId),
    ensureSubscribers: announcing(announce, service.ensureSubscribers, (request) => request.subscribers.map((entry) => entry.subscriberId)),
    updateChannelCredentials: announcing(announce, service.updateChannelCredentials, bySubscriberId),
    deleteChannelCredentials: announcing(announce, service.deleteChannelCredentials, bySubscriberId),
    removeDeviceTokens: announcing(announce, service.removeDeviceTokens, bySubscriberId),
    applyChannelCredentials: announcing(announce, service.applyChannelCredentials, (request) => request.entries.map((entry) => entry.subscriberId)),
  };
}
