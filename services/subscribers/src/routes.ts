import { subscribersV1 } from "@notify/proto";
import { announcingWrites, ChangeKind, type Announce, type ServiceRegistry } from "@notify/runtime";
import { createSubscriberService, type SubscriberServiceDeps } from "./service.js";

/** The writes announce the subscribers they may change as subscribers.proto declares (CHANGE_KIND_SUBSCRIBERS). */
export function routes(deps: SubscriberServiceDeps & { announce: Announce }) {
  return (router: ServiceRegistry) => {
    router.service(
      subscribersV1.SubscriberService,
      announcingWrites(subscribersV1.SubscriberService, createSubscriberService(deps), { [ChangeKind.SUBSCRIBERS]: deps.announce }),
    );
  };
}
