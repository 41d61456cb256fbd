import { eventually } from "@notify/testing";
import { io as connectSocket, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionTokens, PROVISIONAL_SESSION_SECRET } from "../src/sessions.js";
import { createWorkflow } from "./delivery-helpers.js";
import { createSubscriber } from "./messages-fixtures.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
/** A second gateway of the same stack, in a process of its own. */
let replicaUrl: string;
let workflow: string;
const tokens = createSessionTokens(PROVISIONAL_SESSION_SECRET);
const opened: Socket[] = [];

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
  for (const socket of opened) socket.close();
  await stack?.stop();
});

interface Heard {
  event: string;
  payload: Record<string, unknown>;
}

/** A socket of the subscriber on `url`, opened as @novu/js opens it, and what it hears. */
async function listen(url: string, subscriberId: string) {
  const subscriber = await createSubscriber(stack, subscriberId);
  const token = await tokens.issue({ scope: subscriber.scope, subscriberId, subscriberDbId: subscriber.id });
  const socket = connectSocket(url, { transports: ["websocket"], query: { token }, forceNew: true, reconnectionDelayMax: 10_000 });
  opened.push(socket);
  const heard: Heard[] = [];
  socket.onAny((event: string, payload: Record<string, unknown>) => heard.push({ event, payload }));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("connect_error", reject);
  });
  /** Waits for `count` events after the first `from`, and answers them. */
  const next = async (count: number, from = heard.length) => {
    await eventually(async () => (heard.length >= from + count ? true : undefined), 15_000);
    return heard.slice(from, from + count);
  };
  return { subscriber, socket, heard, next };
}

async function trigger(to: string, orderId: string) {
  const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, payload: { orderId } });
  expect(reply.status).toBe(201);
}

async function markRead(subscriberId: string, messageId: string, through = stack.url) {
  const reply = await fetch(`${through}/v1/subscribers/${subscriberId}/messages/mark-as`, {
    method: "POST",
    headers: { authorization: `ApiKey ${stack.key}`, "content-type": "application/json" },
    body: JSON.stringify({ messageId, markAs: "read" }),
  });
  expect(reply.status).toBe(201);
}

const counts = (unread: number, unseen: number): Heard[] => [
  { event: "unseen_count_changed", payload: { unseenCount: unseen, hasMore: false } },
  {
    event: "unread_count_changed",
    payload: { unreadCount: unread, counts: { total: unread, severity: { high: 0, medium: 0, low: 0, none: unread } }, hasMore: false },
  },
];

describe("live Inbox events over the gateway's socket.io endpoint", () => {
  it("sends a triggered message, then the counts, and the counts again after a mark", async () => {
    const ada = await listen(stack.url, "live-ada");
    const start = ada.heard.length;
    await trigger("live-ada", "A-1");
    const [received, ...after] = await ada.next(3, start);
    expect(received!.event).toBe("notification_received");
    const message = received!.payload.message as Record<string, unknown>;
    expect(message).toMatchObject({
      content: "Order A-1 has shipped",
      channel: "in_app",
      read: false,
      seen: false,
      archived: false,
      severity: "none",
      cta: { type: "redirect", data: { url: "https://example.com/orders/A-1" } },
      workflow: { identifier: workflow, name: "Live order shipped", critical: false },
      subscriber: { _id: ada.subscriber.id, subscriberId: "live-ada", firstName: "First" },
    });
    expect(message._id).toMatch(/^[0-9a-f]{24}$/);
    expect(after).toEqual(counts(1, 1));

    const marked = ada.heard.length;
    await markRead("live-ada", message._id as string);
    expect(await ada.next(2, marked)).toEqual(counts(0, 0));
  });

  it("serves a subscriber from a replica that neither accepted the trigger nor made the mark", async () => {
    const bob = await listen(replicaUrl, "live-bob");
    const start = bob.heard.length;
    await trigger("live-bob", "B-1");
    const [received, ...after] = await bob.next(3, start);
    expect(received).toMatchObject({ event: "notification_received", payload: { message: { content: "Order B-1 has shipped" } } });
    expect(after).toEqual(counts(1, 1));
    // And the other way round: a socket on the first gateway hears a mark made through the replica.
    const bobHere = await listen(stack.url, "live-bob");
    const marked = bobHere.heard.length;
    await markRead("live-bob", (received!.payload.message as { _id: string })._id, replicaUrl);
    expect(await bobHere.next(2, marked)).toEqual(counts(0, 0));
  });

  it("does not tell one subscriber about another's messages", async () => {
    const carol = await listen(stack.url, "live-carol");
    const dave = await listen(stack.url, "live-dave");
    const start = dave.heard.length;
    await trigger("live-carol", "C-1");
    await carol.next(3, carol.heard.length);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(dave.heard.slice(start)).toEqual([]);
  });

  it("refuses a socket without a valid session token", async () => {
    const refusal = (query: Record<string, string>) =>
      new Promise<string>((resolve, reject) => {
        const socket = connectSocket(stack.url, { transports: ["websocket"], query, forceNew: true, reconnection: false });
        opened.push(socket);
        socket.once("connect", () => reject(new Error("connected")));
        socket.once("connect_error", (error) => resolve(error.message));
      });
    expect(await refusal({})).toBe("Unauthorized");
    expect(await refusal({ token: "forged" })).toBe("Unauthorized");
    const subscriber = await createSubscriber(stack, "live-erin");
    const foreign = await createSessionTokens("another secret").issue({ scope: subscriber.scope, subscriberId: "live-erin", subscriberDbId: subscriber.id });
    expect(await refusal({ token: foreign })).toBe("Unauthorized");
    // REST on the same origin is untouched by the socket server.
    const reply = await stack.request<Data<unknown[]>>("GET", "/v1/subscribers/live-erin/notifications/feed");
    expect(reply.status).toBe(200);
  });
});
