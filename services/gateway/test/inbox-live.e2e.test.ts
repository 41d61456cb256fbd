import { randomBytes } from "node:crypto";
import type { Novu } from "@novu/js";
import { eventually } from "@notify/testing";
import { SignJWT } from "jose";
import { io as connectSocket, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_AUDIENCE, SESSION_ISSUER } from "../src/sessions.js";
import { createWorkflow } from "./delivery-helpers.js";
import { openInbox, openSession } from "./inbox-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
/** A second gateway of the same stack, in a process of its own. */
let replicaUrl: string;
let workflow: string;
const clients: Novu[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  stack = await startStack();
  replicaUrl = await stack.startReplica();
  workflow = await createWorkflow(stack, "Live order shipped", [
    {
      template: {
        type: "in_app",
        content: "Order {{orderId}} has shipped",
        cta: { type: "redirect", data: { url: "https://example.com/orders/{{orderId}}" } },
      },
    },
  ]);
});

afterAll(async () => {
  for (const novu of clients) novu.socket.disconnect();
  for (const socket of sockets) socket.close();
  await stack?.stop();
});

type Heard =
  | { event: "notification_received"; notification: Record<string, unknown> }
  | { event: "unseen_count_changed"; unseenCount: number }
  | { event: "unread_count_changed"; counts: unknown };

/** The real @novu/js client of the subscriber, its apiUrl and socketUrl `url`, with its socket connected, and the live events it emits. */
async function listen(subscriberId: string, url = stack.url) {
  const novu = await openInbox({ ...stack, url }, subscriberId);
  clients.push(novu);
  const heard: Heard[] = [];
  novu.on("notifications.notification_received", ({ result }) =>
    heard.push({ event: "notification_received", notification: JSON.parse(JSON.stringify(result)) as Record<string, unknown> }),
  );
  novu.on("notifications.unseen_count_changed", ({ result }) => heard.push({ event: "unseen_count_changed", unseenCount: result }));
  novu.on("notifications.unread_count_changed", ({ result }) => heard.push({ event: "unread_count_changed", counts: result }));
  await new Promise<void>((resolve, reject) => {
    const stop = novu.on("socket.connect.resolved", ({ error }) => {
      stop();
      if (error) reject(error);
      else resolve();
    });
  });
  /** Waits for `count` events after the first `from`, and answers them. */
  const next = async (count: number, from: number) => {
    await eventually(async () => (heard.length >= from + count ? true : undefined), 15_000);
    return heard.slice(from, from + count);
  };
  return { novu, heard, next };
}

/** The id of the notification a notification_received event brought. */
function notificationIdOf(heard: Heard | undefined): string {
  if (heard?.event !== "notification_received") throw new Error(`not a notification: ${JSON.stringify(heard)}`);
  return heard.notification.id as string;
}

async function trigger(to: string, orderId: string) {
  const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, payload: { orderId } });
  expect(reply.status).toBe(201);
}

/** Marks a message read with the server-side API, through `url`. */
async function markRead(subscriberId: string, messageId: string, url = stack.url) {
  const reply = await fetch(`${url}/v1/subscribers/${subscriberId}/messages/mark-as`, {
    method: "POST",
    headers: { authorization: `ApiKey ${stack.key}`, "content-type": "application/json" },
    body: JSON.stringify({ messageId, markAs: "read" }),
  });
  expect(reply.status).toBe(201);
}

const counts = (unread: number, unseen: number): Heard[] => [
  { event: "unseen_count_changed", unseenCount: unseen },
  { event: "unread_count_changed", counts: { total: unread, severity: { high: 0, medium: 0, low: 0, none: unread } } },
];

describe("live Inbox events over the gateway's socket.io endpoint, with @novu/js", () => {
  it("sends a triggered notification, then the counts, and the counts again after a mark", async () => {
    const ada = await listen("live-ada");
    const start = ada.heard.length;
    await trigger("live-ada", "A-1");
    const [received, ...after] = await ada.next(3, start);
    expect(received).toMatchObject({
      event: "notification_received",
      notification: {
        body: "Order A-1 has shipped",
        channelType: "in_app",
        isRead: false,
        isSeen: false,
        isArchived: false,
        isSnoozed: false,
        severity: "none",
        redirect: { url: "https://example.com/orders/A-1" },
        workflow: { identifier: workflow, name: "Live order shipped", critical: false },
        to: { subscriberId: "live-ada" },
      },
    });
    const id = notificationIdOf(received);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    // Delivered as it was written, as Novu's in-app messages are.
    const { notification } = received as Extract<Heard, { event: "notification_received" }>;
    expect(notification.deliveredAt).toEqual([notification.createdAt]);
    expect(after).toEqual(counts(1, 1));
    // What the client lists is the notification it was told about.
    const listed = await ada.novu.notifications.list();
    expect(listed.data?.notifications.map((notification) => notification.id)).toEqual([id]);

    // Every change the client makes is followed by both counts.
    const changes: [string, () => Promise<{ error?: unknown }>, Heard[]][] = [
      ["seen all", () => ada.novu.notifications.seenAll(), counts(1, 0)],
      ["read", () => ada.novu.notifications.read({ notificationId: id }), counts(0, 0)],
      ["unread", () => ada.novu.notifications.unread({ notificationId: id }), counts(1, 0)],
      ["archive", () => ada.novu.notifications.archive({ notificationId: id }), counts(0, 0)],
      ["unarchive", () => ada.novu.notifications.unarchive({ notificationId: id }), counts(0, 0)],
    ];
    for (const [change, make, expected] of changes) {
      const from = ada.heard.length;
      const { error } = await make();
      expect(error, change).toBeUndefined();
      expect(await ada.next(2, from), change).toEqual(expected);
    }
    // And so is a change made with the server-side API.
    const marked = ada.heard.length;
    await markRead("live-ada", id);
    expect(await ada.next(2, marked)).toEqual(counts(0, 0));
  });

  it("serves a subscriber from a replica that neither accepted the trigger nor made the mark", async () => {
    const bob = await listen("live-bob", replicaUrl);
    const start = bob.heard.length;
    await trigger("live-bob", "B-1");
    const [received, ...after] = await bob.next(3, start);
    expect(received).toMatchObject({ event: "notification_received", notification: { body: "Order B-1 has shipped" } });
    expect(after).toEqual(counts(1, 1));
    // And the other way round: a client of the first gateway hears a mark made through the replica.
    const bobHere = await listen("live-bob");
    const marked = bobHere.heard.length;
    await markRead("live-bob", notificationIdOf(received), replicaUrl);
    expect(await bobHere.next(2, marked)).toEqual(counts(0, 0));
  });

  it("tells a subscriber nothing of another's notifications", async () => {
    const carol = await listen("live-carol");
    const dave = await listen("live-dave");
    const start = dave.heard.length;
    await trigger("live-carol", "C-1");
    await carol.next(3, carol.heard.length);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(dave.heard.slice(start)).toEqual([]);
  });

  it("tells only the subscriber whose in-app message an admin deleted, by id or by transaction", async () => {
    const erin = await listen("live-erin");
    const finn = await listen("live-finn");
    await trigger("live-erin", "E-1");
    const [received] = await erin.next(3, erin.heard.length);
    const finnStart = finn.heard.length;
    const deleted = erin.heard.length;
    expect((await stack.request("DELETE", `/v1/messages/${notificationIdOf(received)}`)).status).toBe(200);
    expect(await erin.next(2, deleted)).toEqual(counts(0, 0));

    const transactionId = `live-delete-${randomBytes(4).toString("hex")}`;
    const sent = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "live-erin", payload: { orderId: "E-2" }, transactionId });
    expect(sent.status).toBe(201);
    await erin.next(3, erin.heard.length);
    const byTransaction = erin.heard.length;
    expect((await stack.request("DELETE", `/v1/messages/transaction/${transactionId}`)).status).toBe(204);
    expect(await erin.next(2, byTransaction)).toEqual(counts(0, 0));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(finn.heard.slice(finnStart)).toEqual([]);
  });

  it("refuses a socket without a valid session token; a session's own token opens one", async () => {
    const connects = (query: Record<string, string>) =>
      new Promise<string>((resolve) => {
        const socket = connectSocket(stack.url, { transports: ["websocket"], query, forceNew: true, reconnection: false });
        sockets.push(socket);
        socket.once("connect", () => resolve("connected"));
        socket.once("connect_error", (error) => resolve(error.message));
      });
    const session = await openSession(stack, "live-erin");
    expect(await connects({ token: session.token })).toBe("connected");
    expect(await connects({})).toBe("Unauthorized");
    expect(await connects({ token: "forged" })).toBe("Unauthorized");
    // A well-formed token of the right environment and subscriber, signed with another key.
    const [, claims] = session.token.split(".");
    const { environmentId, organizationId, subscriberId, _id } = JSON.parse(Buffer.from(claims!, "base64url").toString()) as Record<string, string>;
    const forged = await new SignJWT({ environmentId, organizationId, subscriberId, _id })
      .setProtectedHeader({ alg: "HS256" })
      .setAudience(SESSION_AUDIENCE)
      .setIssuer(SESSION_ISSUER)
      .setExpirationTime("1h")
      .sign(randomBytes(32));
    expect(await connects({ token: forged })).toBe("Unauthorized");
    // REST on the same origin is untouched by the socket server.
    const reply = await stack.request<Data<unknown[]>>("GET", "/v1/subscribers/live-erin/notifications/feed");
    expect(reply.status).toBe(200);
  });
});
