import { createPool } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// A cancel that comes after a digest came due, while its run waits on the stream for a worker:
// the run of the canceled trigger is dropped, and the digest goes on under its next event's.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await stack?.stop();
});

const contentsFor = async (subscriberId: string) =>
  (await stack.request<Data<{ content: string; transactionId: string }[]>>("GET", `/v1/messages?subscriberId=${subscriberId}&limit=100`)).body.data
    .map((message) => `${message.content} (${message.transactionId})`)
    .sort();

/**
 * Triggers `name` for `subscriberId` `count` times (transaction `<subscriberId>-<n>`, payload
 * `{n}`), each once the one before reached the digest, so that the first opens it and the others
 * join it; then stops the worker, so that the digest's run waits on the stream once it comes due.
 */
async function digestOneByOne(pool: ReturnType<typeof createPool>, name: string, subscriberId: string, count: number) {
  await stack.startWorker();
  for (let n = 1; n <= count; n += 1) {
    const transactionId = `${subscriberId}-${n}`;
    const reply = await stack.request("POST", "/v1/events/trigger", { name, to: subscriberId, transactionId, payload: { n } });
    expect(reply.status).toBe(201);
    await eventually(async () => {
      const { rows } = await pool.query("SELECT 1 FROM triggers.digest_events WHERE transaction_id = $1", [transactionId]);
      return rows.length === 1 ? true : undefined;
    }, 15_000);
  }
  await stack.stopWorker();
}

it("passes a digest whose run was published before its opener was canceled to the next event's trigger", async () => {
  const name = await createWorkflow(stack, "Digest canceled when due", [
    { template: { type: "in_app", content: "before {{n}}" } },
    { template: { type: "digest" }, metadata: { type: "regular", amount: 1, unit: "seconds" } },
    { template: { type: "in_app", content: "after {{step.total_count}}:{{#each step.events}}{{n}},{{/each}} by {{n}}" } },
  ]);
  const pool = createPool(stack.database.url, 1);
  try {
    await digestOneByOne(pool, name, "due-cancel", 2);
    // The digest comes due and the relay publishes its run, which waits for a worker.
    await eventually(async () => {
      const { rows } = await pool.query(
        `SELECT 1 FROM triggers.digests d WHERE d.subscriber_id <> '' AND d.closed_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM triggers.outbox o WHERE o.message_id LIKE '%.resume.%')
            AND EXISTS (SELECT 1 FROM triggers.digest_events e WHERE e.digest_id = d.id AND e.transaction_id = 'due-cancel-1')`,
      );
      return rows.length === 1 ? true : undefined;
    }, 15_000);
    expect((await stack.request("DELETE", "/v1/events/trigger/due-cancel-1")).status).toBe(200);

    await stack.startWorker();
    await eventually(async () => ((await contentsFor("due-cancel")).length === 3 ? true : undefined), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await contentsFor("due-cancel")).toEqual(["after 1:2, by 2 (due-cancel-2)", "before 1 (due-cancel-1)", "before 2 (due-cancel-2)"]);
  } finally {
    await pool.end();
  }
});

it("leaves out of a digest that came due the events of a trigger that joined it and was canceled before it ran", async () => {
  const name = await createWorkflow(stack, "Digest joiner canceled when due", [
    { template: { type: "digest" }, metadata: { type: "regular", amount: 1, unit: "seconds" } },
    { template: { type: "in_app", content: "digest {{step.total_count}}:{{#each step.events}}{{n}},{{/each}} by {{n}}" } },
  ]);
  const pool = createPool(stack.database.url, 1);
  try {
    await digestOneByOne(pool, name, "joiner-cancel", 3);
    // The digest comes due: its run (the first trigger's) waits on the stream for a worker.
    await eventually(async () => {
      const { rows } = await pool.query(
        `SELECT 1 FROM triggers.digests d WHERE d.closed_at IS NOT NULL
            AND EXISTS (SELECT 1 FROM triggers.digest_events e WHERE e.digest_id = d.id AND e.transaction_id = 'joiner-cancel-2')`,
      );
      return rows.length === 1 ? true : undefined;
    }, 15_000);
    expect((await stack.request("DELETE", "/v1/events/trigger/joiner-cancel-2")).status).toBe(200);

    await stack.startWorker();
    await eventually(async () => ((await contentsFor("joiner-cancel")).length === 1 ? true : undefined), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await contentsFor("joiner-cancel")).toEqual(["digest 2:1,3, by 1 (joiner-cancel-1)"]);
  } finally {
    await pool.end();
  }
});
