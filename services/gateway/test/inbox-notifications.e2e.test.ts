import { randomBytes } from "node:crypto";
import type { Novu } from "@novu/js";
import { commonV1 } from "@notify/proto";
import { connectNats, createPool } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openInbox, openSession } from "./inbox-helpers.js";
import { createSubscriber, seeder, type Seeder } from "./messages-fixtures.js";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

const { Severity } = commonV1;

let stack: Stack;
let workflow: string;

/** The InboxNotification fields these tests read. */
interface Notification {
  id: string;
  transactionId: string;
  body: string;
  isRead: boolean;
  isSeen: boolean;
  isArchived: boolean;
  isSnoozed: boolean;
  snoozedUntil?: string;
  deliveredAt?: string[];
  readAt: string | null;
  firstSeenAt: string | null;
  archivedAt: string | null;
  tags: string[];
  severity: string;
  data?: Json;
  to?: { id: string; subscriberId: string; firstName?: string };
  redirect?: { url: string };
  primaryAction?: { label: string; isCompleted: boolean };
  secondaryAction?: { label: string; isCompleted: boolean };
  workflow?: { id: string; identifier: string; name: string; critical: boolean; tags: string[]; severity: string };
}

interface Page {
  data: Notification[];
  hasMore: boolean;
  filter: Json;
}

beforeAll(async () => {
  stack = await startStack();
  const created = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", {
    name: "Orders",
    active: true,
    tags: ["orders"],
    steps: [
      {
        template: {
          type: "in_app",
          content: "Order {{order}} for {{subscriber.firstName}}",
          cta: {
            type: "redirect",
            data: { url: "/orders/{{order}}" },
            action: {
              buttons: [
                { type: "primary", content: "Accept" },
                { type: "secondary", content: "Decline" },
              ],
            },
          },
        },
      },
    ],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  workflow = created.body.data.triggers[0]!.identifier;
});
afterAll(() => stack?.stop());

const unique = (name: string) => `${name}-${randomBytes(4).toString("hex")}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The subscriber's Inbox over plain HTTP (the server's state, past any client cache). */
async function inboxOf(token: string, query = "") {
  const reply = await stack.request<Page>("GET", `/v1/inbox/notifications${query}`, undefined, bearer(token));
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

async function trigger(subscriberId: string, order: number) {
  const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: subscriberId, payload: { order } });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
}

/** Triggers `orders` for the subscriber, one at a time, and waits until the Inbox holds them all. */
async function delivered(token: string, subscriberId: string, ...orders: number[]): Promise<Notification[]> {
  const before = (await inboxOf(token, "?limit=100")).data.length;
  for (const order of orders) await trigger(subscriberId, order);
  return eventually(async () => {
    const page = await inboxOf(token, "?limit=100");
    return page.data.length === before + orders.length ? page.data : undefined;
  }, 15_000);
}

/** The counts @novu/js asks for, each with the filter echoed as sent. */
async function counts(novu: Novu, filters: Record<string, unknown>[]): Promise<number[]> {
  const { data, error } = await novu.notifications.count({ filters });
  expect(error).toBeUndefined();
  expect(data!.counts.map((count) => count.filter)).toEqual(filters);
  return data!.counts.map((count) => count.count);
}

const BELL = [{ read: false }, { seen: false }, { archived: true }, { snoozed: true }, { tags: ["orders"] }, {}];

describe("the Inbox's notifications through @novu/js", () => {
  it("takes a notification's severity from the trigger's overrides, and counts the bell by it", async () => {
    const subscriberId = unique("sev");
    const { token } = await openSession(stack, subscriberId);
    const reply = await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to: subscriberId,
      payload: { order: 1 },
      overrides: { severity: "high" },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const [notification] = await eventually(async () => {
      const page = await inboxOf(token);
      return page.data.length === 1 ? page.data : undefined;
    });
    expect(notification!.severity).toBe("high");
    expect((await inboxOf(token, "?severity=high")).data.map((listed) => listed.id)).toEqual([notification!.id]);
    expect((await inboxOf(token, "?severity=none")).data).toEqual([]);
    const session = await openSession(stack, subscriberId);
    expect(session.unreadCount).toEqual({ total: 1, severity: { high: 1, medium: 0, low: 0, none: 0 } });
  });

  it("lists a triggered notification rendered, unread and unseen, with its actions, workflow and recipient", async () => {
    const subscriberId = unique("ada");
    const novu = await openInbox(stack, subscriberId, { profile: { firstName: "Ada" } });
    const { token } = await openSession(stack, subscriberId);
    // What live events follow: the new message announced as received, by id and subscriber.
    const environmentId = (await stack.request<Data<{ _id: string }>>("GET", "/v1/environments/me")).body.data._id;
    const nats = await connectNats("nats://127.0.0.1:4222", "inbox-test");
    const received: string[] = [];
    nats.subscribe(`notify.changes.received.${environmentId}`, { callback: (_, message) => received.push(...(JSON.parse(message.string()) as string[])) });
    await nats.flush();
    const [delivery] = await delivered(token, subscriberId, 7);
    await eventually(async () => (received.includes(`${delivery!.id}:${subscriberId}`) ? true : undefined));
    await nats.close();

    const { data, error } = await novu.notifications.list({ limit: 10 });
    expect(error).toBeUndefined();
    expect(data!.hasMore).toBe(false);
    const [notification] = data!.notifications;
    expect(notification).toMatchObject({
      body: "Order 7 for Ada",
      isRead: false,
      isSeen: false,
      isArchived: false,
      isSnoozed: false,
      channelType: "in_app",
      tags: ["orders"],
      severity: "none",
      redirect: { url: "/orders/7" },
      primaryAction: { label: "Accept", isCompleted: false },
      secondaryAction: { label: "Decline", isCompleted: false },
      to: { subscriberId, firstName: "Ada" },
      workflow: { identifier: workflow, name: "Orders", critical: false, tags: ["orders"], severity: "none" },
      readAt: null,
      archivedAt: null,
      firstSeenAt: null,
    });
    expect(await counts(novu, BELL)).toEqual([1, 1, 0, 0, 1, 1]);
  });

  it("applies every state route, each visible in the list and the counts, and on the server-side routes", async () => {
    const subscriberId = unique("bo");
    const novu = await openInbox(stack, subscriberId);
    const { token } = await openSession(stack, subscriberId);
    await delivered(token, subscriberId, 1, 2, 3);
    const listed = await novu.notifications.list({ limit: 10 });
    const [third, second, first] = listed.data!.notifications;
    const stateOf = async (id: string) => (await inboxOf(token, "?limit=100")).data.find((item) => item.id === id);

    expect((await third!.read()).data).toMatchObject({ isRead: true, isSeen: true });
    expect(await stateOf(third!.id)).toMatchObject({ isRead: true, isSeen: true, readAt: expect.any(String), firstSeenAt: expect.any(String) });
    expect(await counts(novu, BELL)).toEqual([2, 2, 0, 0, 3, 3]);

    expect((await third!.unread()).data).toMatchObject({ isRead: false, isSeen: true });
    expect(await counts(novu, BELL)).toEqual([3, 2, 0, 0, 3, 3]);

    expect((await second!.archive()).data).toMatchObject({ isArchived: true, isRead: true });
    expect(await counts(novu, BELL)).toEqual([2, 1, 1, 0, 3, 3]);
    expect((await inboxOf(token, "?archived=true")).data.map((item) => item.id)).toEqual([second!.id]);
    expect((await inboxOf(token, "?archived=false")).data.map((item) => item.id)).toEqual([third!.id, first!.id]);
    // The server-side routes see the same state: an archived message is read, seen and marked archived.
    const feed = await stack.request<{ data: { _id: string; archived: boolean; seen: boolean }[] }>(
      "GET",
      `/v1/subscribers/${subscriberId}/notifications/feed?limit=10`,
    );
    expect(feed.body.data.find((message) => message._id === second!.id)).toMatchObject({ archived: true, seen: true });
    const unseen = await stack.request<Data<{ count: number }>>("GET", `/v1/subscribers/${subscriberId}/notifications/unseen`);
    expect(unseen.body.data.count).toBe(1);

    expect((await second!.unarchive()).data).toMatchObject({ isArchived: false, isRead: true });
    expect(await counts(novu, BELL)).toEqual([2, 1, 0, 0, 3, 3]);

    const later = new Date(Date.now() + 3_600_000).toISOString();
    const snoozed = await first!.snooze(later);
    expect(snoozed.data).toMatchObject({ isSnoozed: true, snoozedUntil: later, isSeen: true });
    expect(await counts(novu, BELL)).toEqual([2, 0, 0, 1, 3, 3]);
    expect((await inboxOf(token, "?snoozed=false")).data.map((item) => item.id)).toEqual([third!.id, second!.id]);
    expect((await first!.unsnooze()).data).toMatchObject({ isSnoozed: false });
    expect(await counts(novu, BELL)).toEqual([2, 0, 0, 0, 3, 3]);

    // Acting on a button reads the notification, as in Novu.
    expect((await first!.completePrimary()).data).toMatchObject({
      primaryAction: { isCompleted: true },
      secondaryAction: { isCompleted: false },
      isRead: true,
    });
    expect((await stateOf(first!.id))!.primaryAction).toEqual({ label: "Accept", isCompleted: true });
    expect((await first!.revertPrimary()).data).toMatchObject({ primaryAction: { isCompleted: false } });
    expect((await first!.completeSecondary()).data).toMatchObject({ primaryAction: { isCompleted: false }, secondaryAction: { isCompleted: true } });
    expect((await first!.revertSecondary()).data).toMatchObject({ secondaryAction: { isCompleted: false } });

    expect((await first!.seen()).error).toBeUndefined();
    expect(await counts(novu, BELL)).toEqual([1, 0, 0, 0, 3, 3]);

    expect((await first!.delete()).error).toBeUndefined();
    expect(await counts(novu, BELL)).toEqual([1, 0, 0, 0, 2, 2]);
    expect((await inboxOf(token)).data.map((item) => item.id)).toEqual([third!.id, second!.id]);
  });

  it("applies the bulk routes: seen, read, archive, archive read and delete, by tags and data", async () => {
    const subscriberId = unique("cy");
    const { id, scope } = await createSubscriber(stack, subscriberId);
    const seed: Seeder = seeder(stack, scope);
    try {
      const recipient = { id, subscriberId };
      await seed.inApp(recipient, 2, { tags: ["billing"], data: { team: "red" }, severity: Severity.HIGH });
      await seed.inApp(recipient, 1, { tags: ["news"], severity: Severity.LOW });
      const novu = await openInbox(stack, subscriberId);
      const { token, unreadCount, totalUnreadCount } = await openSession(stack, subscriberId);
      // The session's bell: unread per severity.
      expect(unreadCount).toEqual({ total: 3, severity: { high: 2, medium: 0, low: 1, none: 0 } });
      expect(totalUnreadCount).toBe(3);
      const filters = [{ read: false }, { seen: false }, { archived: true }, { tags: ["billing"] }, { data: { team: "red" } }, { severity: "high" }];
      expect(await counts(novu, filters)).toEqual([3, 3, 0, 2, 2, 2]);
      // The bell as <Inbox /> asks for it: unread, not archived, not snoozed, per severity.
      const bell = ["high", "medium", "low", "none"].map((severity) => ({ read: false, archived: false, snoozed: false, severity }));
      expect(await counts(novu, bell)).toEqual([2, 0, 1, 0]);

      // No ids named is no notification seen, as in Novu: not every one.
      expect((await novu.notifications.seenAll({ notificationIds: [] })).error).toBeUndefined();
      expect(await counts(novu, filters)).toEqual([3, 3, 0, 2, 2, 2]);
      expect((await novu.notifications.seenAll({ tags: ["news"] })).error).toBeUndefined();
      expect(await counts(novu, filters)).toEqual([3, 2, 0, 2, 2, 2]);
      expect((await novu.notifications.readAll({ data: { team: "red" } })).error).toBeUndefined();
      expect(await counts(novu, filters)).toEqual([1, 0, 0, 2, 2, 2]);
      expect((await novu.notifications.archiveAllRead({ tags: ["billing"] })).error).toBeUndefined();
      expect(await counts(novu, filters)).toEqual([1, 0, 2, 2, 2, 2]);
      expect((await novu.notifications.archiveAll()).error).toBeUndefined();
      expect(await counts(novu, filters)).toEqual([0, 0, 3, 2, 2, 2]);
      expect((await inboxOf(token, "?tags[]=news&severity[]=low&archived=true")).data).toHaveLength(1);
      expect((await novu.notifications.deleteAll({ tags: ["billing"] })).error).toBeUndefined();
      expect(await counts(novu, filters)).toEqual([0, 0, 1, 0, 0, 0]);
      const [remaining] = (await inboxOf(token)).data;
      const byIds = await stack.request("POST", "/v1/inbox/notifications/seen", { notificationIds: [remaining!.id] }, bearer(token));
      expect(byIds.status).toBe(204);
    } finally {
      seed.close();
    }
  });

  it("pages with the cursor and filters by data, severity and creation time", async () => {
    const subscriberId = unique("dee");
    const { id, scope } = await createSubscriber(stack, subscriberId);
    const seed = seeder(stack, scope);
    try {
      const recipient = { id, subscriberId };
      const ids: string[] = [];
      for (let index = 0; index < 5; index += 1)
        ids.push(...(await seed.inApp(recipient, 1, { data: { index, owners: ["ann", index % 2 ? "odd" : "even"] } })));
      const { token } = await openSession(stack, subscriberId);
      const firstPage = await inboxOf(token, "?limit=2");
      expect(firstPage.data.map((item) => item.id)).toEqual([ids[4], ids[3]]);
      expect(firstPage.hasMore).toBe(true);
      const next = await inboxOf(token, `?limit=2&after=${ids[3]}`);
      expect(next.data.map((item) => item.id)).toEqual([ids[2], ids[1]]);
      // A cursor replaces the offset, as in Novu.
      expect((await inboxOf(token, `?limit=2&offset=1&after=${ids[3]}`)).data.map((item) => item.id)).toEqual([ids[2], ids[1]]);
      expect((await inboxOf(token, `?limit=2&after=${ids[1]}`)).hasMore).toBe(false);
      const odd = await inboxOf(token, `?data=${encodeURIComponent(JSON.stringify({ owners: "odd" }))}`);
      expect(odd.data.map((item) => item.id)).toEqual([ids[3], ids[1]]);
      expect(odd.filter).toEqual({ data: { owners: "odd" } });
      expect(odd.data[0]!.data).toEqual({ index: 3, owners: ["ann", "odd"] });
      expect((await inboxOf(token, "?severity=none")).data).toHaveLength(5);
      expect((await inboxOf(token, "?severity[]=high")).data).toHaveLength(0);
      expect((await inboxOf(token, `?createdGte=${Date.now() + 60_000}`)).data).toHaveLength(0);
      expect((await inboxOf(token, `?createdLte=${Date.now() + 60_000}`)).data).toHaveLength(5);
    } finally {
      seed.close();
    }
  });

  it("carries a v2 step's avatar, its buttons' links and its links' windows to the Inbox client", async () => {
    const controlValues = {
      body: "Order {{payload.order}} shipped",
      avatar: "https://cdn.example.com/avatars/{{payload.order}}.png",
      primaryAction: { label: "Track", redirect: { url: "https://track.example.com/{{payload.order}}", target: "_blank" } },
      redirect: { url: "/orders/{{payload.order}}", target: "_self" },
    };
    const created = await stack.request("POST", "/v2/workflows", {
      name: "Shipped",
      workflowId: "shipped",
      active: true,
      steps: [{ name: "Bell", type: "in_app", controlValues }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Written as given, read back as given.
    expect((await stack.request("GET", "/v2/workflows/shipped")).body.data.steps[0].controlValues).toEqual(controlValues);

    const subscriberId = unique("jay");
    const novu = await openInbox(stack, subscriberId);
    const reply = await stack.request("POST", "/v1/events/trigger", { name: "shipped", to: subscriberId, payload: { order: 42 } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const { token } = await openSession(stack, subscriberId);
    await eventually(async () => ((await inboxOf(token)).data.length === 1 ? true : undefined), 15_000);
    const notification = (await novu.notifications.list({ limit: 10 })).data?.notifications[0];
    expect(notification).toMatchObject({
      body: "Order 42 shipped",
      avatar: "https://cdn.example.com/avatars/42.png",
      primaryAction: { label: "Track", isCompleted: false, redirect: { url: "https://track.example.com/42", target: "_blank" } },
      redirect: { url: "/orders/42", target: "_self" },
    });
    expect(notification!.secondaryAction).toBeUndefined();
    // A button it does not have cannot be acted on, as in Novu.
    const missing = await stack.request("PATCH", `/v1/inbox/notifications/${notification!.id}/complete`, { actionType: "secondary" }, bearer(token));
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe("Could not perform action on the secondary button because it does not exist.");
    const done = await stack.request("PATCH", `/v1/inbox/notifications/${notification!.id}/complete`, { actionType: "primary" }, bearer(token));
    expect(done.status).toBe(200);
    expect(done.body.data.primaryAction).toMatchObject({ isCompleted: true });
    // Clicking a button reads the notification, as in Novu: the Inbox sends nothing else.
    expect(done.body.data).toMatchObject({ isRead: true, isSeen: true });
    expect(done.body.data.readAt).toEqual(expect.any(String));
    const reverted = await stack.request("PATCH", `/v1/inbox/notifications/${notification!.id}/revert`, { actionType: "primary" }, bearer(token));
    expect(reverted.body.data).toMatchObject({ isRead: true, readAt: done.body.data.readAt, primaryAction: { isCompleted: false } });
    // The server-side API shows the stored message the same way.
    const [message] = (await stack.request("GET", `/v1/messages?subscriberId=${subscriberId}&channel=in_app`)).body.data;
    expect(message).toMatchObject({
      avatar: "https://cdn.example.com/avatars/42.png",
      cta: {
        data: { url: "/orders/42", target: "_self" },
        action: {
          buttons: [{ type: "primary", content: "Track", url: "https://track.example.com/42", target: "_blank" }],
        },
      },
    });
  });

  it("counts up to 99, as Novu does, alike in the count route and the session", async () => {
    const subscriberId = unique("ivy");
    const { id, scope } = await createSubscriber(stack, subscriberId);
    const seed = seeder(stack, scope);
    try {
      await seed.inApp({ id, subscriberId }, 120);
      const { token } = await openSession(stack, subscriberId);
      const novu = await openInbox(stack, subscriberId);
      expect(await counts(novu, [{ read: false }, { seen: false }])).toEqual([99, 99]);
      expect((await openSession(stack, subscriberId)).unreadCount.total).toBe(99);
      expect((await inboxOf(token, "?limit=100")).data).toHaveLength(100);
    } finally {
      seed.close();
    }
  });

  it("refuses a data filter nested too deeply with a 4xx of its own, and the lists sent beside it are answered", async () => {
    const victim = unique("hal");
    const mallory = unique("mal");
    const victimSession = await openSession(stack, victim);
    await delivered(victimSession.token, victim, 1);
    const { token } = await openSession(stack, mallory);
    let deep: unknown = "x";
    for (let level = 0; level < 120; level += 1) deep = { a: deep };
    const data = encodeURIComponent(JSON.stringify(deep));
    const [lists, refusals] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => stack.request("GET", "/v1/inbox/notifications?limit=10", undefined, bearer(victimSession.token)))),
      Promise.all([
        ...Array.from({ length: 10 }, () => stack.request("GET", `/v1/inbox/notifications?data=${data}`, undefined, bearer(token))),
        stack.request("GET", `/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify([{ data: deep }]))}`, undefined, bearer(token)),
        stack.request("POST", "/v1/inbox/notifications/read", { notificationIds: [], data: JSON.stringify(deep) }, bearer(token)),
      ]),
    ]);
    expect(lists.map((reply) => reply.status)).toEqual(Array(10).fill(200));
    for (const reply of refusals) {
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(reply.status).toBeLessThan(500);
    }
  });

  it("brings a snoozed notification back when its snooze ends, through the schedule the delays use", async () => {
    const subscriberId = unique("eve");
    const novu = await openInbox(stack, subscriberId);
    const { token } = await openSession(stack, subscriberId);
    await delivered(token, subscriberId, 1);
    const [notification] = (await novu.notifications.list({ limit: 10 })).data!.notifications;
    // Novu's shortest snooze is a minute: its schedule is brought forward rather than waited for.
    await notification!.snooze(new Date(Date.now() + 61_000).toISOString());
    expect((await inboxOf(token, "?snoozed=false")).data).toEqual([]);
    const pool = createPool(stack.database.url, 1);
    try {
      await pool.query("UPDATE triggers.schedules SET run_at = now() WHERE trigger_id = $1", [notification!.id]);
      await pool.query("SELECT pg_notify('triggers_schedules', '')");
    } finally {
      await pool.end();
    }
    const back = await eventually(async () => {
      const [item] = (await inboxOf(token, "?snoozed=false")).data;
      // Delivered as it was written, and again as it came back.
      return item?.deliveredAt?.length === 2 ? item : undefined;
    }, 15_000);
    // Back as Novu brings it: unread, seen as it was (a snooze sees it).
    expect(back).toMatchObject({ id: notification!.id, isSnoozed: false, isSeen: true, isRead: false });
    expect(await counts(novu, [{ read: false }, { snoozed: true }])).toEqual([1, 0]);
  });

  it("keeps each subscriber to their own notifications, and each environment to its own", async () => {
    const owner = unique("fay");
    const other = unique("gus");
    const ownerSession = await openSession(stack, owner);
    const otherSession = await openSession(stack, other);
    const [mine] = await delivered(ownerSession.token, owner, 1);
    const foreignKey = await stack.createKey(unique("Elsewhere"));
    const foreign = await openSession(stack, owner, { key: foreignKey });

    for (const token of [otherSession.token, foreign.token]) {
      expect((await inboxOf(token)).data).toEqual([]);
      for (const [method, path, body] of [
        ["PATCH", `/v1/inbox/notifications/${mine!.id}/read`, undefined],
        ["PATCH", `/v1/inbox/notifications/${mine!.id}/archive`, undefined],
        ["PATCH", `/v1/inbox/notifications/${mine!.id}/snooze`, { snoozeUntil: new Date(Date.now() + 120_000).toISOString() }],
        ["PATCH", `/v1/inbox/notifications/${mine!.id}/complete`, { actionType: "primary" }],
        ["DELETE", `/v1/inbox/notifications/${mine!.id}/delete`, undefined],
      ] as const) {
        const reply = await stack.request<{ statusCode: number; message: string }>(method, path, body, bearer(token));
        expect(reply.status, `${method} ${path}`).toBe(404);
        expect(reply.body.statusCode).toBe(404);
      }
      for (const path of ["seen", "read", "archive", "read-archive", "delete"]) {
        const reply = await stack.request("POST", `/v1/inbox/notifications/${path}`, { notificationIds: [mine!.id] }, bearer(token));
        expect(reply.status).toBe(204);
      }
      const count = await stack.request<{ data: { count: number }[] }>(
        "GET",
        `/v1/inbox/notifications/count?filters=${encodeURIComponent("[{}]")}`,
        undefined,
        bearer(token),
      );
      expect(count.body.data[0]!.count).toBe(0);
    }
    // Nothing of the owner's changed.
    expect((await inboxOf(ownerSession.token)).data).toEqual([expect.objectContaining({ id: mine!.id, isRead: false, isSeen: false, isArchived: false })]);
    // An API key is no session.
    expect((await stack.request("GET", "/v1/inbox/notifications")).status).toBe(401);
    expect((await stack.request("GET", "/v1/inbox/notifications", undefined, bearer(`${ownerSession.token}x`))).status).toBe(401);
  });

  it("answers malformed input and unknown ids with 4xx JSON, and changes nothing", async () => {
    const subscriberId = unique("hal");
    const { token } = await openSession(stack, subscriberId);
    const [notification] = await delivered(token, subscriberId, 1);
    const unknownId = "0".repeat(24);
    const cases: [string, string, unknown, number][] = [
      ["GET", "/v1/inbox/notifications?limit=101", undefined, 422],
      ["GET", "/v1/inbox/notifications?read=maybe", undefined, 422],
      ["GET", "/v1/inbox/notifications?after=nope", undefined, 422],
      ["GET", `/v1/inbox/notifications?data=${encodeURIComponent("{nope")}`, undefined, 422],
      ["GET", `/v1/inbox/notifications?data=${encodeURIComponent(JSON.stringify({ $where: "1" }))}`, undefined, 422],
      ["GET", "/v1/inbox/notifications?severity=urgent", undefined, 422],
      ["GET", "/v1/inbox/notifications/count", undefined, 422],
      ["GET", `/v1/inbox/notifications/count?filters=${encodeURIComponent("{nope")}`, undefined, 422],
      ["GET", `/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify([{ read: "yes" }]))}`, undefined, 422],
      ["GET", `/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify([{ tags: { or: "x" } }]))}`, undefined, 422],
      ["PATCH", "/v1/inbox/notifications/nope/read", undefined, 422],
      ["PATCH", `/v1/inbox/notifications/${unknownId}/read`, undefined, 404],
      ["PATCH", `/v1/inbox/notifications/${notification!.id}/snooze`, { snoozeUntil: "tomorrow" }, 422],
      ["PATCH", `/v1/inbox/notifications/${notification!.id}/snooze`, { snoozeUntil: new Date(Date.now() - 60_000).toISOString() }, 422],
      // As Novu bounds it: at least a minute ahead, and no longer than the session's maxSnoozeDurationHours (402).
      ["PATCH", `/v1/inbox/notifications/${notification!.id}/snooze`, { snoozeUntil: new Date(Date.now() + 30_000).toISOString() }, 422],
      ["PATCH", `/v1/inbox/notifications/${notification!.id}/snooze`, { snoozeUntil: new Date(Date.now() + 400 * 86_400_000).toISOString() }, 402],
      ["PATCH", `/v1/inbox/notifications/${notification!.id}/complete`, { actionType: "tertiary" }, 422],
      ["PATCH", `/v1/inbox/notifications/${notification!.id}/revert`, {}, 422],
      ["POST", "/v1/inbox/notifications/read", { notificationIds: ["nope"] }, 422],
      ["POST", "/v1/inbox/notifications/archive", { data: "{nope" }, 422],
      ["POST", "/v1/inbox/notifications/delete", { tags: 7 }, 422],
      ["DELETE", `/v1/inbox/notifications/${unknownId}/delete`, undefined, 404],
      // As Novu answers them: a notification not snoozed cannot be unsnoozed, and unread archived ones are not listed.
      ["PATCH", `/v1/inbox/notifications/${notification!.id}/unsnooze`, undefined, 404],
      ["GET", "/v1/inbox/notifications?read=false&archived=true", undefined, 400],
      [
        "GET",
        `/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify([{ read: false }, { read: false, archived: true }]))}`,
        undefined,
        400,
      ],
    ];
    for (const [method, path, body, status] of cases) {
      const reply = await stack.request<{ statusCode: number; message: string; path: string }>(method, path, body, bearer(token));
      expect(reply.status, `${method} ${path} ${JSON.stringify(reply.body)}`).toBe(status);
      expect(reply.body).toMatchObject({ statusCode: status, message: expect.any(String) });
    }
    expect((await inboxOf(token)).data).toEqual([expect.objectContaining({ id: notification!.id, isRead: false, isSeen: false, isSnoozed: false })]);
  });
});
