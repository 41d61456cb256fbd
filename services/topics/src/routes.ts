import type { ConnectRouter } from "@connectrpc/connect";
import { topicsV1 } from "@notify/proto";
import { createTopicService, type TopicServiceDeps } from "./service.js";

export function routes(deps: TopicServiceDeps) {
  return (router: ConnectRouter) => {
    router.service(topicsV1.TopicService, createTopicService(deps));
  };
}
