import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { subscribersV1, topicsV1 } from "@notify/proto";
import { createLogger, objectId, scopeOf, type Pool } from "@notify/runtime";
import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
export { callAs, newScope, rpcError } from "@notify/testing";
import { inMemoryTransport } from "@notify/testing";
export { scopeHeaders } from "@notify/runtime";
import type { Scope, ServiceRegistry } from "@notify/runtime";
import { routes } from "../src/routes.js";
import { migrations } from "../src/server.js";

const log = createLogger("test", "silent");

export type Fixture = DatabaseFixture;

export const openDatabase = (): Promise<Fixture> => openTestDatabase([migrations], 10);

export type TestScope = Scope;

/** Stands in for the subscribers service: subscribers per environment, looked up in batches. */
export class FakeSubscribers {
  private readonly byEnvironment = new Map<string, Map<string, subscribersV1.Subscriber>>();
  /** How many BatchGetSubscribers calls were made. */
  calls = 0;

  add(scope: TestScope, subscriberId: string, firstName?: string): subscribersV1.Subscriber {
    const subscriber = create(subscribersV1.SubscriberSchema, {
      id: objectId(),
      organizationId: scope.organizationId,
      environmentId: scope.environmentId,
      subscriberId,
      ...(firstName ? { firstName } : {}),
    });
    this.environment(scope.environmentId).set(subscriberId, subscriber);
    return subscriber;
  }

  remove(scope: TestScope, subscriberId: string): void {
    this.environment(scope.environmentId).delete(subscriberId);
  }

  private environment(environmentId: string) {
    let subscribers = this.byEnvironment.get(environmentId);
    if (!subscribers) this.byEnvironment.set(environmentId, (subscribers = new Map()));
    return subscribers;
  }

  routes() {
    return (router: ServiceRegistry) => {
      router.service(subscribersV1.SubscriberService, {
        batchGetSubscribers: (request, context) => {
          this.calls += 1;
          const subscribers = [...this.environment(scopeOf(context).environmentId).values()];
          return {
            subscribers: subscribers.filter((s) => request.subscriberIds.includes(s.subscriberId) || request.ids.includes(s.id)),
          };
        },
      });
    };
  }
}

const inMemory = (routesOf: (router: ServiceRegistry) => void) => inMemoryTransport(routesOf);

/** The topics service behind an in-memory transport, talking to `subscribers` in memory too. */
export function inMemoryClient(pool: Pool, subscribers: FakeSubscribers) {
  const subscriberClient = createClient(subscribersV1.SubscriberService, inMemory(subscribers.routes()));
  return createClient(topicsV1.TopicService, inMemory(routes({ pool, log, subscribers: subscriberClient })));
}
