import { createPool } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

interface Message {
  content: string;
  transactionId: string;
  createdAt: string;
}

const WINDOW_MS = 2_000;
const inApp = (content: string, extra: Record<string, unknown> = {}) => ({ template: { type: "in_app", content }, ...extra });
const digest = (metadata: Record<string, unknown>) => ({ template: { type: "digest" }, metadata: { amount: WINDOW_MS / 1000, unit: "seconds", ...metadata } });
const COUNTED = "{{step.total_count}}:{{#each step.events}}{{n}},{{/each}}";

async function createWorkflow(name: string, steps: unknown[]): Promise<string> {
  const reply = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", { name, active: true, steps });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.data.triggers[0].identifier;
}

async function trigger(name: string, to: string, transactionId: string, payload: Record<string, unknown>) {
  const reply = await stack.request("POST", "/v1/events/trigger", { name, to, transactionId, payload });
  expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
}

/** Every message of a subscriber, oldest first. */
async function messagesFor(subscriberId: string): Promise<Message[]> {
  const reply = await stack.request<Data<Message[]>>("GET", `/v1/messages?subscriberId=${encodeURIComponent(subscriberId)}&limit=1000`);
  expect(reply.status).toBe(200);
  return reply.body.data.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Waits (bounded) for `count` messages, then a while longer so a wrong extra one would show. */
async function awaitMessages(subscriberId: string, count: number): Promise<Message[]> {
  await eventually(async () => ((await messagesFor(subscriberId)).length >= count ? true : undefined), 15_000);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return messagesFor(subscriberId);
}

/**
 * A digest's events are in the order they reached it: the worker runs jobs concurrently, so
 * events triggered moments apart may reach it in either order. This sorts the listed numbers
 * ("3:2,1,3," → "3:1,2,3,") where a test does not fix the order.
 */
const unordered = (content: string) =>
  content.replace(
    /(\d+):((?:\d+,)*)/,
    (_, count: string, list: string) =>
      `${count}:${list
        .split(",")
        .filter(Boolean)
        .map(Number)
        .sort((a, b) => a - b)
        .map((n) => `${n},`)
        .join("")}`,
  );

const settle = () => new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 1_500));

describe("digest steps", () => {
  it("digests a key's events into one run after the window, with step.events and step.total_count", async () => {
    const name = await createWorkflow("Digest regular", [digest({ type: "regular" }), inApp(`Digest ${COUNTED} first {{n}}`)]);
    const started = Date.now();
    for (const n of [1, 2, 3]) await trigger(name, "dg-regular", `dg-regular-${n}`, { n });
    // Nothing before the window ends (checked only when the triggers were quick enough to tell).
    await new Promise((resolve) => setTimeout(resolve, 800));
    if (Date.now() - started < WINDOW_MS - 500) expect(await messagesFor("dg-regular")).toEqual([]);

    const messages = await awaitMessages("dg-regular", 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(messages).toHaveLength(1);
    const [{ transactionId, content }] = messages as [Message];
    // The run is the first event's: its transaction, its payload, first in step.events.
    const first = /^Digest 3:(\d),\d,\d, first (\d)$/.exec(content);
    expect(first, content).not.toBeNull();
    expect(unordered(content)).toMatch(/^Digest 3:1,2,3, first \d$/);
    expect([first![1], first![2]]).toEqual([transactionId.slice(-1), transactionId.slice(-1)]);
  });

  it("takes the trigger's overrides.delay as the window, as Novu does for regular digests", async () => {
    const name = await createWorkflow("Digest overridden", [digest({ type: "regular", amount: 1, unit: "hours" }), inApp(COUNTED)]);
    for (const n of [1, 2]) {
      const reply = await stack.request("POST", "/v1/events/trigger", {
        name,
        to: "dg-override",
        transactionId: `dg-override-${n}`,
        payload: { n },
        overrides: { delay: { amount: 1, unit: "seconds" } },
      });
      expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
    }
    const messages = await awaitMessages("dg-override", 1);
    expect(messages.map((message) => unordered(message.content))).toEqual(["2:1,2,"]);
  });

  it("ends a timed digest on the subscriber's clock: a half-hour grid in Kathmandu (UTC+05:45) is a quarter off UTC's", async () => {
    const name = await createWorkflow("Digest timed", [
      { template: { type: "digest" }, metadata: { type: "timed", amount: 30, unit: "minutes" } },
      inApp(COUNTED),
    ]);
    for (const [subscriberId, timezone] of [
      ["dg-kathmandu", "Asia/Kathmandu"],
      ["dg-utc", undefined],
    ] as const) {
      const reply = await stack.request("POST", "/v1/subscribers", { subscriberId, ...(timezone ? { timezone } : {}) });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      await trigger(name, subscriberId, `dg-timed-${subscriberId}`, { n: 1 });
    }
    const pool = createPool(stack.database.url, 1);
    try {
      const minutes = await eventually(async () => {
        const { rows } = await pool.query<{ transaction_id: string; minute: number }>(
          `SELECT t.transaction_id, extract(minute FROM s.run_at)::int AS minute
             FROM triggers.schedules s JOIN triggers.trigger_records t ON t.id = s.trigger_id
            WHERE t.transaction_id LIKE 'dg-timed-%'`,
        );
        return rows.length === 2 ? Object.fromEntries(rows.map((row) => [row.transaction_id, row.minute])) : undefined;
      }, 15_000);
      expect([15, 45]).toContain(minutes["dg-timed-dg-kathmandu"]);
      expect([0, 30]).toContain(minutes["dg-timed-dg-utc"]);
    } finally {
      await pool.end();
    }
  });

  it("digests a bulk's events (jobs of one batch) per subscriber", async () => {
    const name = await createWorkflow("Digest bulk", [digest({ type: "regular" }), inApp(COUNTED)]);
    const events = [1, 2, 3].map((n) => ({ name, to: ["dg-bulk-a", "dg-bulk-b"], transactionId: `dg-bulk-${n}`, payload: { n } }));
    const reply = await stack.request("POST", "/v1/events/trigger/bulk", { events });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    for (const subscriberId of ["dg-bulk-a", "dg-bulk-b"]) {
      const messages = await awaitMessages(subscriberId, 1);
      expect(messages.map((message) => unordered(message.content))).toEqual(["3:1,2,3,"]);
      expect(messages[0]!.content.slice(2, 3)).toBe(messages[0]!.transactionId.slice(-1));
    }
  });

  it("keeps the digested events through a delay after the digest", async () => {
    const name = await createWorkflow("Digest then delay", [
      digest({ type: "regular" }),
      { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "seconds" } },
      inApp(COUNTED),
    ]);
    const started = Date.now();
    await trigger(name, "dg-delayed", "dg-delayed-1", { n: 1 });
    await trigger(name, "dg-delayed", "dg-delayed-2", { n: 2 });
    expect((await awaitMessages("dg-delayed", 1)).map((message) => unordered(message.content))).toEqual(["2:1,2,"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WINDOW_MS + 1_000);
  });

  it("keeps digestKey values apart, and a new event after a digest fired opens a new one", async () => {
    const name = await createWorkflow("Digest keyed", [digest({ type: "regular", digestKey: "post.id" }), inApp(`{{post.id}} ${COUNTED}`)]);
    await trigger(name, "dg-keyed", "dg-keyed-1", { n: 1, post: { id: "a" } });
    await trigger(name, "dg-keyed", "dg-keyed-2", { n: 2, post: { id: "b" } });
    await trigger(name, "dg-keyed", "dg-keyed-3", { n: 3, post: { id: "a" } });
    const first = await awaitMessages("dg-keyed", 2);
    expect(first.map((message) => unordered(message.content)).sort()).toEqual(["a 2:1,3,", "b 1:2,"]);

    await trigger(name, "dg-keyed", "dg-keyed-4", { n: 4, post: { id: "a" } });
    const after = await awaitMessages("dg-keyed", 3);
    expect(after.map((message) => unordered(message.content)).sort()).toEqual(["a 1:4,", "a 2:1,3,", "b 1:2,"]);
  });

  it("backs off: a lone event runs at once, not as a digest (as Novu runs it), one inside the backoff window is digested", async () => {
    const name = await createWorkflow("Digest backoff", [
      digest({ type: "backoff", backoffAmount: 30, backoffUnit: "seconds" }),
      inApp(`Backoff {{step.digest}} ${COUNTED}`),
    ]);
    const started = Date.now();
    await trigger(name, "dg-backoff", "dg-backoff-1", { n: 1 });
    const lone = await eventually(async () => {
      const messages = await messagesFor("dg-backoff");
      return messages.length > 0 ? messages : undefined;
    }, 15_000);
    // Delivered without waiting for a window.
    if (Date.now() - started < WINDOW_MS - 500) expect(lone).toHaveLength(1);
    expect(lone.map((message) => message.content)).toEqual(["Backoff false :"]);

    await trigger(name, "dg-backoff", "dg-backoff-2", { n: 2 });
    await trigger(name, "dg-backoff", "dg-backoff-3", { n: 3 });
    const messages = await awaitMessages("dg-backoff", 2);
    expect(messages.map((message) => unordered(message.content))).toEqual(["Backoff false :", "Backoff true 2:2,3,"]);
    expect(messages[1]!.content.slice(15, 16)).toBe(messages[1]!.transactionId.slice(-1));
  });

  it("runs the steps after a digest with their filters, on the first event's payload", async () => {
    const name = await createWorkflow("Digest filtered", [
      digest({ type: "regular" }),
      inApp("vip only", {
        filters: [{ isNegated: false, type: "GROUP", value: "AND", children: [{ on: "payload", field: "vip", value: "true", operator: "EQUAL" }] }],
      }),
      inApp("kind {{kind}}", {
        filters: [{ isNegated: false, type: "GROUP", value: "AND", children: [{ on: "payload", field: "kind", value: "x", operator: "EQUAL" }] }],
      }),
      inApp(`all ${COUNTED}`),
    ]);
    await trigger(name, "dg-filtered", "dg-filtered-1", { n: 1, vip: false, kind: "x" });
    await trigger(name, "dg-filtered", "dg-filtered-2", { n: 2, vip: false, kind: "x" });
    const messages = await awaitMessages("dg-filtered", 2);
    expect(messages.map((message) => unordered(message.content)).sort()).toEqual(["all 2:1,2,", "kind x"]);
  });

  it("goes on under the next event's transaction when the one that opened the digest is canceled, and drops a digest left empty", async () => {
    const name = await createWorkflow("Digest canceled", [inApp("before {{n}}"), digest({ type: "regular" }), inApp(`after ${COUNTED} by {{n}}`)]);
    const pool = createPool(stack.database.url, 1);
    /** Waits until these transactions' events have reached the digest step. */
    const digested = (transactionIds: string[]) =>
      eventually(async () => {
        const { rows } = await pool.query<{ count: number }>("SELECT count(*)::int AS count FROM triggers.digest_events WHERE transaction_id = ANY($1)", [
          transactionIds,
        ]);
        return rows[0]!.count === transactionIds.length ? true : undefined;
      }, 15_000);
    try {
      await trigger(name, "dg-cancel", "dg-cancel-1", { n: 1 });
      await digested(["dg-cancel-1"]);
      // One at a time, so that the digest's events are in this order.
      for (const n of [2, 3]) {
        await trigger(name, "dg-cancel", `dg-cancel-${n}`, { n });
        await digested([`dg-cancel-${n}`]);
      }
      expect((await stack.request("DELETE", "/v1/events/trigger/dg-cancel-1")).status).toBe(200);
      // The digest's run goes on with the next event's payload and transactionId, without the canceled event.
      const messages = await awaitMessages("dg-cancel", 4);
      const after = messages.filter((message) => message.content.startsWith("after"));
      expect(after.map((message) => [message.content, message.transactionId])).toEqual([["after 2:2,3, by 2", "dg-cancel-2"]]);

      // A digest whose only event is canceled is dropped, and the key is free again.
      await trigger(name, "dg-cancel-alone", "dg-cancel-alone-1", { n: 1 });
      await digested(["dg-cancel-alone-1"]);
      expect((await stack.request("DELETE", "/v1/events/trigger/dg-cancel-alone-1")).status).toBe(200);
      await settle();
      expect((await messagesFor("dg-cancel-alone")).map((message) => message.content)).toEqual(["before 1"]);
      await trigger(name, "dg-cancel-alone", "dg-cancel-alone-2", { n: 2 });
      expect((await awaitMessages("dg-cancel-alone", 3)).map((message) => message.content).sort()).toEqual(["after 1:2, by 2", "before 1", "before 2"]);
    } finally {
      await pool.end();
    }
  });

  it("fails a subscriber's run at a digest step it cannot compute, like a bad delay", async () => {
    const name = await createWorkflow("Digest broken", [
      inApp("before"),
      { template: { type: "digest" }, metadata: { type: "timed", amount: 1, unit: "seconds" } },
      inApp("after"),
    ]);
    await trigger(name, "dg-broken", "dg-broken-1", {});
    expect((await awaitMessages("dg-broken", 1)).map((message) => message.content)).toEqual(["before"]);
  });
});
