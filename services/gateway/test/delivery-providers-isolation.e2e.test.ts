import { eventually, startReceiver, type Receiver } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, loadSlowChat, messagesOf, webhookRecipients, type Message } from "./delivery-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Sends are decoupled per integration: providers that take 2 s per call must not slow another
// integration's sends. The time a chat step to a hundred Discord subscribers takes to be all
// delivered is measured without load, then while the sends of four integrations (Slack,
// Mattermost, Ryver, a chat webhook) wait on such a receiver: enough slow calls to fill every
// place the worker has for sends, were each slow integration to take all the calls it may make.

const FAST_RECIPIENTS = 100;
const SLOW_PROVIDERS = ["slack", "mattermost", "ryver", "chat-webhook"];
const SLOW_RECIPIENTS = 800;
const SLOW_MS = 2_000;
const ROUNDS = 3;

let stack: Stack;
let slow: Receiver;
let fast: Receiver;
let unanswered = 0;
beforeAll(async () => {
  slow = await startReceiver(async () => {
    unanswered += 1;
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    unanswered -= 1;
    return { body: "ok" };
  });
  fast = await startReceiver(() => ({ status: 204 }));
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
});
afterAll(async () => {
  await stack?.stop();
  await slow?.close();
  await fast?.close();
});

/** Milliseconds from the trigger request until every Discord message of it is delivered. */
async function discordRound(workflow: string, round: string): Promise<number> {
  const started = performance.now();
  const reply = await stack.request("POST", "/v1/events/trigger", {
    name: workflow,
    to: webhookRecipients(round, FAST_RECIPIENTS, "discord", fast),
    transactionId: round,
  });
  expect(reply.body.data.status).toBe("processed");
  await eventually(
    async () => {
      const messages = await messagesOf(stack, round, "chat");
      return messages.length === FAST_RECIPIENTS && messages.every(delivered) ? true : undefined;
    },
    30_000,
    10,
  );
  return performance.now() - started;
}

/**
 * The time of a few rounds one after another: one round on a machine shared with other work can
 * take several times another, and a round held up by the slow sends must count however the others went.
 */
async function rounds(workflow: string, label: string): Promise<number> {
  let total = 0;
  for (let round = 0; round < ROUNDS; round += 1) total += await discordRound(workflow, `${label}-${round}`);
  return total;
}

describe("a slow provider beside another integration's sends", () => {
  it(`keeps the other integration's delivery time within 2x of a run without it while calls take ${SLOW_MS} ms each`, async () => {
    for (const providerId of SLOW_PROVIDERS) await createIntegration(stack, { providerId, channel: "chat", identifier: `slow-${providerId}` });
    await createIntegration(stack, { providerId: "discord", channel: "chat", identifier: "fast-discord" });
    const workflow = await createWorkflow(stack, "Chat both", [{ template: { type: "chat", content: "Deploy done" } }]);
    await discordRound(workflow, "warm-up"); // first calls pay for connections and JIT

    const quiet = await rounds(workflow, "quiet");

    // The slow receiver is busy before the measurement starts and still busy when it ends.
    const slowIds = await loadSlowChat(stack, workflow, slow, SLOW_RECIPIENTS, () => unanswered > 0, SLOW_PROVIDERS);
    const loaded = await rounds(workflow, "loaded");
    const slowMessages = (await stack.request<Data<Message[]>>("GET", `/v1/messages?channel=chat&transactionId=${slowIds}&limit=1000`)).body.data;
    const slowDelivered = slowMessages.filter(delivered).length;

    console.log(
      `${FAST_RECIPIENTS} Discord sends all delivered, ${ROUNDS} rounds: ${quiet.toFixed(0)} ms without load, ${loaded.toFixed(0)} ms while ` +
        `${SLOW_RECIPIENTS} sends of ${SLOW_PROVIDERS.length} other integrations take ${SLOW_MS} ms each (${slowDelivered} of them delivered by then, ${unanswered} waiting on the receiver)`,
    );
    // 2x as the issue asks, plus a second: a few rounds on a machine shared with other work still
    // move by hundreds of milliseconds from one run to the next. Sharing the worker's
    // delivery places with the slow integrations would cost at least one slow call (2 s) more.
    expect(loaded).toBeLessThanOrEqual(2 * quiet + 1_000);
    expect(unanswered, "the slow sends outlasted the measurement").toBeGreaterThan(0);
  }, 90_000);
});
