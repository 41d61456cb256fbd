import { createPool, type Pool } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { openInbox, openSession } from "./inbox-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Retention through the running stack: a notification and its email go from the activity feed
// and the messages once older than NOTIFICATION_RETENTION_DAYS, its in-app message stays in the
// Inbox until MESSAGE_RETENTION_DAYS, as the reference service keeps them. The test ages rows in
// the database instead of waiting a month; the messages service sweeps every second. An open
// Inbox hears its count change when its messages go.

let stack: Stack;
let pool: Pool;

beforeAll(async () => {
  stack = await startStack({ messagesEnv: { RETENTION_SWEEP_INTERVAL_MS: "1000" } });
  pool = createPool(stack.database.url, 2);
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await stack?.stop();
});

const messagesOf = async (transactionId: string) =>
  (await stack.request<Data<{ channel: string }[]>>("GET", `/v1/messages?transactionId=${transactionId}&limit=100`)).body.data
    .map((message) => message.channel)
    .sort();

const activityOf = async (transactionId: string) =>
  (await stack.request<Data<{ transactionId: string }[]>>("GET", `/v1/notifications?transactionId=${transactionId}`)).body.data.length;

/** Makes a transaction's notification and messages (of `channels`, or all) look `days` old. */
async function age(transactionId: string, days: number, channels?: string[]): Promise<void> {
  const when = new Date(Date.now() - days * 86_400_000);
  await pool.query("UPDATE messages.notifications SET created_at = $2 WHERE transaction_id = $1", [transactionId, when]);
  await pool.query("UPDATE messages.messages SET created_at = $2 WHERE transaction_id = $1 AND ($3::text[] IS NULL OR channel = ANY($3))", [
    transactionId,
    when,
    channels ?? null,
  ]);
}

describe("retention", () => {
  it("drops a month-old notification with its email, keeps its in-app message for a year, and leaves recent ones alone", async () => {
    const workflowId = await createWorkflow(stack, "Retained", [
      { template: { type: "in_app", content: "kept {{n}}" } },
      { template: { type: "email", subject: "s", content: "sent {{n}}" } },
    ]);
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "retained", email: "retained@example.com" })).status).toBe(201);
    const trigger = async (transactionId: string) => {
      const reply = await stack.request("POST", "/v1/events/trigger", { name: workflowId, to: "retained", payload: { n: 1 }, transactionId });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      await eventually(async () => ((await messagesOf(transactionId)).length === 2 ? true : undefined));
    };
    await trigger("retained-old");
    await trigger("retained-recent");
    const session = await openSession(stack, "retained");
    const inboxCount = async () =>
      (
        await stack.request<{ data: { count: number }[] }>("GET", `/v1/inbox/notifications/count?filters=${encodeURIComponent("[{}]")}`, undefined, {
          authorization: `Bearer ${session.token}`,
        })
      ).body.data[0]!.count;
    expect(await inboxCount()).toBe(2);

    await age("retained-old", 40);
    await eventually(async () => ((await activityOf("retained-old")) === 0 ? true : undefined), 10_000, 200);
    expect(await messagesOf("retained-old")).toEqual(["in_app"]);
    expect(await inboxCount()).toBe(2);
    expect(await activityOf("retained-recent")).toBe(1);
    expect(await messagesOf("retained-recent")).toEqual(["email", "in_app"]);

    // The subscriber's open Inbox hears its count go down when the year-old message goes.
    const novu = await openInbox(stack, "retained");
    const unseen: number[] = [];
    novu.on("notifications.unseen_count_changed", ({ result }) => unseen.push(result));
    await new Promise<void>((resolve, reject) => {
      const stop = novu.on("socket.connect.resolved", ({ error }) => {
        stop();
        if (error) reject(error);
        else resolve();
      });
    });
    try {
      await age("retained-old", 400, ["in_app"]);
      await eventually(async () => ((await messagesOf("retained-old")).length === 0 ? true : undefined), 10_000, 200);
      expect(await inboxCount()).toBe(1);
      await eventually(async () => (unseen.includes(1) ? true : undefined), 10_000, 100);
    } finally {
      novu.socket.disconnect();
    }
    expect(await messagesOf("retained-recent")).toEqual(["email", "in_app"]);
    const scrape = await (await fetch(stack.metricsUrls.messages)).text();
    expect(scrape).toMatch(/^notify_retention_deleted_total\{kind="notifications"\} [1-9]/m);
    expect(scrape).toMatch(/^notify_retention_deleted_total\{kind="messages"\} [1-9]/m);
  });
});
