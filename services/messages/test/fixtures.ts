import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { messagesV1, subscribersV1 } from "@notify/proto";
import {
  createLogger,
  createPool,
  objectId,
  scopeHeaders,
  scopeOf,
  serverInterceptors,
  type Pool,
  type Scope,
} from "@notify/runtime";
import { createTestDatabase, type TestDatabase } from "@notify/testing";
import { routes } from "../src/routes.js";
import { migrations } from "../src/server.js";
import { createSubscriberDirectory } from "../src/subscribers.js";

export interface Fixture {
  database: TestDatabase;
  pool: Pool;
  close(): Promise<void>;
}

export async function openDatabase(): Promise<Fixture> {
  const database = await createTestDatabase([migrations]);
  const pool = createPool(database.url, 6);
  return {
    database,
    pool,
    async close() {
      await pool.end();
      await database.drop();
    },
  };
}

export const newScope = (): Scope => ({ organizationId: objectId(), environmentId: objectId() });

export const callIn = (scope: Scope) => ({ headers: scopeHeaders(scope) });

/**
 * A stand-in for the subscribers service: BatchGetSubscribers over an in-memory list, recording
 * each call so tests can see how lookups were batched.
 */
export function fakeSubscribers() {
  const known: subscribersV1.Subscriber[] = [];
  const calls: subscribersV1.BatchGetSubscribersRequest[] = [];
  const transport = createRouterTransport(
    (router) =>
      router.service(subscribersV1.SubscriberService, {
        batchGetSubscribers(request, context) {
          calls.push(request);
          const { environmentId } = scopeOf(context);
          const subscribers = known.filter(
            (subscriber) =>
              subscriber.environmentId === environmentId &&
              (request.subscriberIds.includes(subscriber.subscriberId) || request.ids.includes(subscriber.id)),
          );
          return { subscribers };
        },
      }),
    { router: { interceptors: serverInterceptors(createLogger("test", "silent")) } },
  );
  return {
    client: createClient(subscribersV1.SubscriberService, transport),
    calls,
    /** Registers a subscriber of the scope's environment. */
    add(scope: Scope, subscriberId: string) {
      const subscriber = create(subscribersV1.SubscriberSchema, {
        id: objectId(),
        organizationId: scope.organizationId,
        environmentId: scope.environmentId,
        subscriberId,
      });
      known.push(subscriber);
      return subscriber;
    },
  };
}

export type FakeSubscribers = ReturnType<typeof fakeSubscribers>;

/** The messages service behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClient(pool: Pool, subscribers: FakeSubscribers, markAllChunkRows = 10_000) {
  const log = createLogger("test", process.env.TEST_LOG_LEVEL ?? "silent");
  const transport = createRouterTransport(
    routes({ pool, log, subscribers: createSubscriberDirectory(subscribers.client), markAllChunkRows }),
    { router: { interceptors: serverInterceptors(log) } },
  );
  return createClient(messagesV1.MessageService, transport);
}

/** Fields of a new message, as an init object. */
export type NewMessageFields = Exclude<MessageInitShape<typeof messagesV1.NewMessageSchema>, messagesV1.NewMessage>;

let transactions = 0;

export function newMessage(
  subscriber: Pick<subscribersV1.Subscriber, "id" | "subscriberId">,
  fields: NewMessageFields = {},
): messagesV1.NewMessage {
  return create(messagesV1.NewMessageSchema, {
    transactionId: `txn-${++transactions}`,
    subscriberId: subscriber.id,
    externalSubscriberId: subscriber.subscriberId,
    templateId: "64b7f0c2a1b2c3d4e5f60718",
    messageTemplateId: "64b7f0c2a1b2c3d4e5f60719",
    stepId: "step-in-app",
    channel: messagesV1.Channel.IN_APP,
    content: { case: "text", value: "Hello" },
    feedIdentifier: "general",
    ...fields,
  });
}
