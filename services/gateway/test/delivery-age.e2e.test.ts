import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { commonV1, deliveriesV1 } from "@notify/proto";
import { createPool, type Pool } from "@notify/runtime";
import { eventually, startReceiver, type Receiver } from "@notify/testing";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, executionDetails, messagesOf, settledMessage, type Message } from "./delivery-helpers.js";
import { createSubscriber, newMessage, seeder } from "./messages-fixtures.js";
import { startStack, type Stack } from "./stack.js";

// A send is made only while its message is younger than DELIVERY_MAX_AGE_MS, and the send leases
// that keep a message from going out twice are deleted at twice that age. Short here: 3 s.
const MAX_AGE_MS = 3_000;

let stack: Stack;
let receiver: Receiver;
let pool: Pool;
let nats: NatsConnection;
let integrationId: string;
let workflow: string;

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startStack({
    outboundAllowedCidrs: "127.0.0.0/8",
    workerEnv: { DELIVERY_MAX_AGE_MS: String(MAX_AGE_MS), DELIVERY_BUDGET_MS: "1000", WORKER_ACK_WAIT_MS: "1000" },
  });
  pool = createPool(stack.database.url, 1);
  nats = await connect({ servers: stack.workerEnv.NATS_URL });
  integrationId = await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "slack-age" });
  workflow = await createWorkflow(stack, "Age", [{ template: { type: "chat", content: "Hi {{subscriber.firstName}}" } }]);
});
afterAll(async () => {
  await nats?.drain();
  await pool?.end();
  await stack?.stop();
  await receiver?.close();
});

interface Written extends Message {
  _organizationId: string;
  _environmentId: string;
  _subscriberId: string;
  transactionId: string;
  createdAt: string;
}

/** Puts a send of `message` on the worker's deliveries stream, as the fan-out does, dated `writtenAtMs`. */
async function handOver(message: Written, subscriberId: string, writtenAtMs: number): Promise<void> {
  const job = create(deliveriesV1.DeliveryJobSchema, {
    organizationId: message._organizationId,
    environmentId: message._environmentId,
    messageId: message._id,
    transactionId: message.transactionId,
    externalSubscriberId: subscriberId,
    subscriberId: message._subscriberId,
    channel: commonV1.Channel.CHAT,
    integrationId,
    providerId: "slack",
    createdAt: timestampFromMs(writtenAtMs),
    content: { case: "chat", value: { webhookUrl: `${receiver.url}/${subscriberId}`, content: `Hi ${subscriberId}` } },
  });
  const page = create(deliveriesV1.DeliveryPageSchema, { jobs: [job] });
  await nats.jetstream().publish(`${stack.workerEnv.DELIVERIES_SUBJECT_PREFIX}.pages.chat`, toBinary(deliveriesV1.DeliveryPageSchema, page));
}

/** How many sends the worker has found too old so far. */
async function sendsTooOld(): Promise<number> {
  const text = await (await fetch(stack.metricsUrls.worker!)).text();
  const match = /^notify_delivery_sends_too_old_total (\S+)$/m.exec(text);
  return match ? Number(match[1]) : 0;
}

const postsTo = (subscriberId: string) => receiver.received.filter((request) => request.url === `/${subscriberId}`).length;

describe("the age of a send", () => {
  it("keeps a sent message's lease while a copy of its send could still be made, deletes it after, and never sends a later copy", async () => {
    const to = [{ subscriberId: "ada", firstName: "Ada", channels: [{ providerId: "slack", credentials: { webhookUrl: `${receiver.url}/ada` } }] }];
    await stack.request("POST", "/v1/events/trigger", { name: workflow, to, transactionId: "t-age-1" });
    const sent = (await settledMessage(stack, "t-age-1", "chat", delivered)) as Written;
    expect(postsTo("ada")).toBe(1);
    const lease = async () => (await pool.query("SELECT state FROM worker.send_leases WHERE message_id = $1", [sent._id])).rows[0];
    expect(await lease()).toEqual({ state: "sent" });

    // Twice the max age after the first try, the sweep (every tenth of the max age) deletes it.
    await eventually(async () => ((await lease()) === undefined ? true : undefined), 4 * MAX_AGE_MS);
    const tooOld = await sendsTooOld();
    await handOver(sent, "ada", Date.parse(sent.createdAt));
    await eventually(async () => ((await sendsTooOld()) > tooOld ? true : undefined), 10_000);

    expect(postsTo("ada")).toBe(1);
    const [message] = await messagesOf(stack, "t-age-1", "chat");
    expect(message).toMatchObject({ status: "sent", deliveredAt: sent.deliveredAt });
    // The copy's record is the first attempt's, recorded already: nothing changes.
    expect((await executionDetails(stack, sent, "ada")).map((detail) => detail.status)).toEqual(["Success"]);
  });

  it("does not send a message older than the max age: it ends as an error saying so", async () => {
    const bob = await createSubscriber(stack, "bob");
    const seed = seeder(stack, bob.scope);
    try {
      await seed.create([
        newMessage(bob, { transactionId: "t-age-2", channel: commonV1.Channel.CHAT, stepId: "step-chat", content: { case: "text", value: "Hi bob" } }),
      ]);
    } finally {
      seed.close();
    }
    const [written] = (await messagesOf(stack, "t-age-2", "chat")) as Written[];
    await handOver(written!, "bob", Date.now() - 2 * MAX_AGE_MS);

    const message = await settledMessage(stack, "t-age-2", "chat", (candidate) => candidate.status === "error");
    expect(message).toMatchObject({
      errorId: "delivery_too_old",
      errorText: "The message was written more than 3 seconds ago and is not sent",
      deliveredAt: [],
    });
    expect(postsTo("bob")).toBe(0);
    expect(await executionDetails(stack, message, "bob")).toEqual([expect.objectContaining({ status: "Failed", providerId: "slack" })]);
  });
});
