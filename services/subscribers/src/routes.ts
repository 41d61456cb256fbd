import { subscribersV1 } from "@notify/proto";
import type { Announce, ServiceRegistry } from "@notify/runtime";
import { announcingWrites } from "./announcements.js";
import { createSubscriberService, type SubscriberServiceDeps } from "./service.js";

export function routes(deps: SubscriberServiceDeps & { announce: Announce }) {
  return (router: ServiceRegistry) => {
    router.service(subscribersV1.SubscriberService, announcingWrites(createSubscriberService(deps), deps.announce));
  };
}
