import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Code, ConnectError, createClient } from "@connectrpc/connect";
import { commonV1, messagesV1, subscribersV1, workflowsV1 } from "@notify/proto";
import { createFollowedCache, createLogger, createPreparedReadPool, objectId, scopeOf, type Announce, type Pool, type Scope } from "@notify/runtime";
import { inMemoryTransport, openTestDatabase, type DatabaseFixture } from "@notify/testing";
import { routes } from "../src/routes.js";
import { migrations } from "../src/server.js";
import type { SnoozeSchedule } from "../src/snoozes.js";
import { createSubscriberDirectory } from "../src/subscribers.js";
import { createWorkflowDirectory } from "../src/workflows.js";

export { callAs, newScope, rpcError } from "@notify/testing";

/** The test database, with a prepared-read pool beside the ordinary one, as the service runs. */
export type Fixture = DatabaseFixture & { preparedReads: Pool };

export async function openDatabase(): Promise<Fixture> {
  const fixture = await openTestDatabase([migrations], 6);
  const preparedReads = createPreparedReadPool(fixture.database.url, 2);
  return {
    ...fixture,
    preparedReads,
    async close() {
      await preparedReads.end();
      await fixture.close();
    },
  };
}

/**
 * A stand-in for the subscribers service: BatchGetSubscribers over an in-memory list, recording
 * each call so tests can see how lookups were batched.
 */
export function fakeSubscribers() {
  const known: subscribersV1.Subscriber[] = [];
  const calls: subscribersV1.BatchGetSubscribersRequest[] = [];
  const transport = inMemoryTransport((router) =>
    router.service(subscribersV1.SubscriberService, {
      batchGetSubscribers(request, context) {
        calls.push(request);
        const { environmentId } = scopeOf(context);
        const subscribers = known.filter(
          (subscriber) =>
            subscriber.environmentId === environmentId && (request.subscriberIds.includes(subscriber.subscriberId) || request.ids.includes(subscriber.id)),
        );
        return { subscribers };
      },
    }),
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

/**
 * A stand-in for the workflow catalogue: BatchGetWorkflows over an in-memory list, recording each
 * call so tests can see how lookups were batched.
 */
export function fakeWorkflows() {
  const known: workflowsV1.Workflow[] = [];
  const calls: workflowsV1.BatchGetWorkflowsRequest[] = [];
  const transport = inMemoryTransport((router) =>
    router.service(workflowsV1.WorkflowService, {
      batchGetWorkflows(request, context) {
        calls.push(request);
        const { environmentId } = scopeOf(context);
        return { workflows: known.filter((workflow) => workflow.environmentId === environmentId && request.ids.includes(workflow.id)) };
      },
    }),
  );
  return {
    client: createClient(workflowsV1.WorkflowService, transport),
    calls,
    /** Registers a workflow of the scope's environment. */
    add(scope: Scope, name: string) {
      const workflow = create(workflowsV1.WorkflowSchema, {
        id: objectId(),
        organizationId: scope.organizationId,
        environmentId: scope.environmentId,
        name,
      });
      known.push(workflow);
      return workflow;
    },
  };
}

export type FakeWorkflows = ReturnType<typeof fakeWorkflows>;

/** The messages service behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClient(
  fixture: Fixture,
  subscribers: FakeSubscribers,
  markAllChunkRows = 10_000,
  workflows = fakeWorkflows(),
  announceFeeds: Announce = async () => {},
  announceReceived: Announce = async () => {},
  snoozes: SnoozeSchedule = { schedule: async () => {} },
) {
  const service = routes({
    pool: fixture.pool,
    preparedReads: fixture.preparedReads,
    log: createLogger("test", "silent"),
    // Never live (no announcements are followed here), so every lookup reaches the fakes.
    subscribers: createSubscriberDirectory(subscribers.client, createFollowedCache({ name: "messages_subscribers", max: 1, ttlMs: 1 })),
    workflows: createWorkflowDirectory(workflows.client, createFollowedCache({ name: "messages_workflows", max: 1, ttlMs: 1 })),
    markAllChunkRows,
    snoozes,
    maxSnoozeMs: 24 * 3_600_000,
    announceFeeds,
    announceReceived,
  });
  return createClient(messagesV1.MessageService, inMemoryTransport(service));
}

/** Fields of a new message, as an init object. */
export type NewMessageFields = Exclude<MessageInitShape<typeof messagesV1.NewMessageSchema>, messagesV1.NewMessage>;

let transactions = 0;

export function newMessage(subscriber: Pick<subscribersV1.Subscriber, "id" | "subscriberId">, fields: NewMessageFields = {}): messagesV1.NewMessage {
  return create(messagesV1.NewMessageSchema, {
    transactionId: `txn-${++transactions}`,
    subscriberId: subscriber.id,
    externalSubscriberId: subscriber.subscriberId,
    templateId: "64b7f0c2a1b2c3d4e5f60718",
    messageTemplateId: "64b7f0c2a1b2c3d4e5f60719",
    stepId: "step-in-app",
    channel: commonV1.Channel.IN_APP,
    content: { case: "text", value: "Hello" },
    feedIdentifier: "general",
    ...fields,
  });
}

type MessagesClient = ReturnType<typeof inMemoryClient>;
type CallOptions = Parameters<MessagesClient["batchCountMessages"]>[1];

/** A batch item's error as the ConnectError it stands for. */
const itemError = (error: messagesV1.BatchError) => new ConnectError(error.message, error.code as Code);

/** One unseen count, asked as the gateway asks it: a batch of one. */
export async function countOne(
  client: MessagesClient,
  request: MessageInitShape<typeof messagesV1.CountMessagesRequestSchema>,
  call?: CallOptions,
): Promise<number> {
  const { result } = (await client.batchCountMessages({ counts: [request] }, call)).results[0]!;
  if (result.case === "error") throw itemError(result.value);
  return result.value!;
}

/** One feed page, asked as the gateway asks it: a batch of one. */
export async function feedOne(
  client: MessagesClient,
  request: MessageInitShape<typeof messagesV1.GetFeedRequestSchema>,
  call?: CallOptions,
): Promise<messagesV1.GetFeedResponse> {
  const { result } = (await client.batchGetFeed({ feeds: [request] }, call)).results[0]!;
  if (result.case === "error") throw itemError(result.value);
  return result.value!;
}
