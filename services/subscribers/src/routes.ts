import type { ConnectRouter } from "@connectrpc/connect";
import { subscribersV1 } from "@notify/proto";
import { createSubscriberService, type SubscriberServiceDeps } from "./service.js";

export function routes(deps: SubscriberServiceDeps) {
  return (router: ConnectRouter) => {
    router.service(subscribersV1.SubscriberService, createSubscriberService(deps));
  };
}
