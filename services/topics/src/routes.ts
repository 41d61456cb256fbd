import type { ServiceRegistry } from "@notify/runtime";
import { topicsV1 } from "@notify/proto";
import { createTopicService, type TopicServiceDeps } from "./service.js";

export function routes(deps: TopicServiceDeps) {
  return (router: ServiceRegistry) => {
    router.service(topicsV1.TopicService, createTopicService(deps));
  };
}
