import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { announcedWrite, scopeOf, type Announce } from "@notify/runtime";

type Service = ServiceImpl<typeof subscribersV1.SubscriberService>;

/**
 * Every method that can change a subscriber announces the subscribers it may have changed once
 * it is done, failed or not (`announcedWrite`). The answer waits for the announcement, so a
 * client that reads right after a write never meets an old copy (runtime changes.ts).
 */
export function announcingWrites(service: Service, announce: Announce): Service {
  function announced<Request, Answer>(method: (request: Request, context: HandlerContext) => Answer, changed: (request: Request) => string[]) {
    return (request: Request, context: HandlerContext): Promise<Awaited<Answer>> =>
      announcedWrite(announce, scopeOf(context).environmentId, changed(request), async (): Promise<Awaited<Answer>> => await method(request, context));
  }
  const bySubscriberId = (request: { subscriberId: string }) => [request.subscriberId];
  return {
    ...service,
    upsertSubscriber: announced(service.upsertSubscriber, bySubscriberId),
    updateSubscriber: announced(service.updateSubscriber, bySubscriberId),
    deleteSubscriber: announced(service.deleteSubscriber, bySubscriberId),
    ensureSubscribers: announced(service.ensureSubscribers, (request) => request.subscribers.map((entry) => entry.subscriberId)),
    updateChannelCredentials: announced(service.updateChannelCredentials, bySubscriberId),
    deleteChannelCredentials: announced(service.deleteChannelCredentials, bySubscriberId),
    applyChannelCredentials: announced(service.applyChannelCredentials, (request) => request.entries.map((entry) => entry.subscriberId)),
  };
}
