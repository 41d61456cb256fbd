import { randomBytes } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { commonV1, deliveriesV1, integrationsV1, type messagesV1, triggersV1 } from "@notify/proto";
import { createOutbound, createProviders, DEFAULT_OUTBOUND_POLICY } from "@notify/providers";
import { createLogger, type JsMsg } from "@notify/runtime";
import { openTestDatabase, startReceiver, type DatabaseFixture, type Receiver } from "@notify/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { pageSubject } from "../src/deliveries.js";
import { createDeliveryStage, type DeliveryStageDeps } from "../src/send.js";
import { migrations } from "../src/server.js";

// The delivery stage against Postgres and a local webhook receiver; the services it calls are
// stand-ins that record what they are asked, and fail when a test says so.

const stream = { name: "TEST_DELIVERIES", subjectPrefix: "test.deliveries" };
const scope = { organizationId: "org-1", environmentId: "env-1" };
const integration = create(integrationsV1.IntegrationSchema, {
  id: "integration-1",
  providerId: "slack",
  channel: "chat",
  active: true,
  credentials: {},
});

let fixture: DatabaseFixture;
let receiver: Receiver;
const outbound = createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });

/** What the stand-in services saw, and how they answer. */
let recorded: messagesV1.DeliveryAttempt[];
let handedBack: deliveriesV1.DeliveryPage[];
let integrationsDown: boolean;
/** Hold keys released, and jobs scheduled, through the triggers service. */
let released: string[];
let scheduled: triggersV1.ScheduledJob[];

beforeAll(async () => {
  fixture = await openTestDatabase([migrations], 2);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await outbound.close();
  await fixture?.close();
});
beforeEach(() => {
  recorded = [];
  handedBack = [];
  integrationsDown = false;
  released = [];
  scheduled = [];
  receiver.received.length = 0;
  receiver.respond = () => ({ body: "ok" });
});

function stage() {
  const deps = {
    pool: fixture.pool,
    stream,
    handBack: async (pages: readonly deliveriesV1.DeliveryPage[]) => {
      handedBack.push(...pages);
      return [];
    },
    providers: createProviders(),
    outbound,
    integrations: {
      getIntegration: async () => {
        if (integrationsDown) throw new ConnectError("integrations are restarting", Code.Unavailable);
        return integration;
      },
    },
    connections: {},
    messages: {
      recordDeliveries: async (request: { attempts: messagesV1.DeliveryAttempt[] }) => {
        recorded.push(...request.attempts);
        return { recorded: request.attempts.length };
      },
    },
    triggers: {
      scheduleJobs: async (request: { jobs: triggersV1.ScheduledJob[] }) => {
        scheduled.push(...request.jobs);
        return {};
      },
      releaseHeldJobs: async (request: { holdKeys: string[] }) => {
        released.push(...request.holdKeys);
        return {};
      },
    },
    subscribers: { removeDeviceTokens: async () => ({}) },
    log: createLogger("test", "silent"),
    budgetMs: 3_600_000,
    held: 16,
    perIntegration: 4,
    orphanAfterMs: 30_000,
    maxAgeMs: 86_400_000,
  } as unknown as DeliveryStageDeps;
  return createDeliveryStage(deps);
}

function chatJob(messageId = randomBytes(12).toString("hex")) {
  return create(deliveriesV1.DeliveryJobSchema, {
    ...scope,
    messageId,
    transactionId: "txn-1",
    externalSubscriberId: "ada",
    subscriberId: "subscriber-1",
    channel: commonV1.Channel.CHAT,
    integrationId: integration.id,
    providerId: "slack",
    createdAt: timestampNow(),
    content: { case: "chat", value: { webhookUrl: `${receiver.url}/hook`, content: "Deployed" } },
  });
}

/** The stream message of a page of these sends, as the consumer hands it to the stage. */
const pageMessage = (...jobs: deliveriesV1.DeliveryJob[]) =>
  ({
    subject: pageSubject(stream, commonV1.Channel.CHAT),
    data: toBinary(deliveriesV1.DeliveryPageSchema, create(deliveriesV1.DeliveryPageSchema, { jobs })),
  }) as JsMsg;

async function leaseOf(messageId: string) {
  const { rows } = await fixture.pool.query<{ state: string; attempts: number; error_text: string | null; retry_at: Date | null }>(
    "SELECT state, attempts, error_text, retry_at FROM worker.send_leases WHERE message_id = $1",
    [messageId],
  );
  return rows[0];
}

describe("the delivery stage", () => {
  it("releases the run a send's step holds once the send succeeded, never when it failed; an older job's run is scheduled", async () => {
    const deliveries = stage();
    receiver.respond = (request) => (request.url === "/hook/refuses" ? { status: 400, body: "no" } : { body: "ok" });
    const accepted = create(deliveriesV1.DeliveryJobSchema, { ...chatJob(), continuationKey: "run-a" });
    const refused = create(deliveriesV1.DeliveryJobSchema, { ...chatJob(), continuationKey: "run-b" });
    refused.content = { case: "chat", value: create(deliveriesV1.ChatContentSchema, { webhookUrl: `${receiver.url}/hook/refuses`, content: "x" }) };
    await deliveries.handle(pageMessage(accepted, refused));
    expect(released).toEqual(["run-a"]);
    // Seen again after its send (a page handed over twice): released again, which the triggers service makes nothing of.
    await deliveries.handle(pageMessage(accepted));
    expect(released).toEqual(["run-a", "run-a"]);
    expect(receiver.received).toHaveLength(2);

    const rest = create(triggersV1.TriggerJobSchema, { triggerId: "trigger-1", ...scope, resumption: { subscriberIds: ["subscriber-1"], fromStep: 1 } });
    await deliveries.handle(pageMessage(create(deliveriesV1.DeliveryJobSchema, { ...chatJob(), continuation: rest })));
    expect(scheduled.map((job) => job.job?.triggerId)).toEqual(["trigger-1"]);
  });

  it("leaves the lease untouched when the integration cannot be read, and sends when the job comes back", async () => {
    const deliveries = stage();
    const job = chatJob();
    integrationsDown = true;
    await deliveries.handle(pageMessage(job));
    expect(handedBack.flatMap((page) => page.jobs.map((back) => back.messageId))).toEqual([job.messageId]);
    expect(await leaseOf(job.messageId)).toBeUndefined();
    expect(receiver.received).toHaveLength(0);

    integrationsDown = false;
    await deliveries.handle(pageMessage(...handedBack[0]!.jobs));
    expect(receiver.received).toHaveLength(1);
    expect(await leaseOf(job.messageId)).toMatchObject({ state: "sent", attempts: 1 });
  });

  it("stores a provider's answer holding NUL characters, and the other sends of the batch with it", async () => {
    const deliveries = stage();
    receiver.respond = (request) => (request.url === "/hook/nul" ? { status: 400, body: "invalid_\u0000payload" } : { body: "ok" });
    const refused = chatJob();
    refused.content = { case: "chat", value: create(deliveriesV1.ChatContentSchema, { webhookUrl: `${receiver.url}/hook/nul`, content: "x" }) };
    const others = [chatJob(), chatJob(), chatJob()];
    await deliveries.handle(pageMessage(refused, ...others));
    expect(receiver.received).toHaveLength(4);
    expect(await leaseOf(refused.messageId)).toMatchObject({ state: "failed", error_text: expect.stringContaining("invalid_\uFFFDpayload") });
    for (const job of others) expect(await leaseOf(job.messageId)).toMatchObject({ state: "sent" });
    expect(handedBack).toEqual([]);
    expect(recorded.find((attempt) => attempt.messageId === refused.messageId)?.errorText).not.toContain("\u0000");
  });

  it("waits for a retry's due time when its job comes back sooner, and records the failed attempt again before the retry", async () => {
    const deliveries = stage();
    receiver.respond = () => ({ status: 503, headers: { "retry-after": "0" }, body: "busy" });
    const job = chatJob();
    await deliveries.handle(pageMessage(job));
    const lease = await leaseOf(job.messageId);
    expect(lease).toMatchObject({ state: "retrying", attempts: 1 });
    // Retry-After: 0 is not taken as leave to call again at once.
    expect(lease!.retry_at!.getTime()).toBeGreaterThan(Date.now() + 500);
    expect(handedBack).toHaveLength(1);

    // A copy that comes back before the retry is due makes no call and waits for it.
    handedBack = [];
    receiver.respond = () => ({ body: "ok" });
    await deliveries.handle(pageMessage(job));
    expect(receiver.received).toHaveLength(1);
    expect(await leaseOf(job.messageId)).toMatchObject({ state: "retrying", attempts: 1 });
    expect(handedBack).toHaveLength(1);

    // Once due, the retry is made; the failed first attempt is recorded again before it (its record may have been lost).
    await fixture.pool.query("UPDATE worker.send_leases SET retry_at = now() WHERE message_id = $1", [job.messageId]);
    recorded = [];
    await deliveries.handle(pageMessage(job));
    expect(receiver.received).toHaveLength(2);
    expect(await leaseOf(job.messageId)).toMatchObject({ state: "sent", attempts: 2 });
    expect(recorded.map((attempt) => [attempt.attempt, attempt.errorText ?? ""])).toEqual([
      [1, expect.stringContaining("busy")],
      [2, ""],
    ]);
  });
});
