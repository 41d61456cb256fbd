import { connectRedis, type Redis } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { io as connectSocket, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow, messagesOf } from "./delivery-helpers.js";
import { openInbox, openSession } from "./inbox-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Inbox presence, as Novu's socket service keeps it: a subscriber with an Inbox socket open on any
// gateway is online; once its last one closes it is offline, last online then. Step conditions
// on subscriber.isOnline read it. A gateway that dies holding sockets goes silent, and another
// marks offline the subscribers no live gateway holds a socket of.

/** INBOX_PRESENCE_TIMEOUT_MS of this stack's gateways: a silent one is swept soon after. */
const PRESENCE_TIMEOUT_MS = 1_500;

let stack: Stack;
/** A second gateway of the same stack, in a process of its own. */
let replicaUrl: string;
let redis: Redis;
let workflow: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  stack = await startStack({ gatewayEnv: { INBOX_PRESENCE_TIMEOUT_MS: String(PRESENCE_TIMEOUT_MS) } });
  replicaUrl = await stack.startReplica();
  redis = await connectRedis("redis://127.0.0.1:6379");
  workflow = await createWorkflow(stack, "Presence", [
    { template: { type: "in_app", content: "always" } },
    {
      template: { type: "in_app", content: "while away" },
      filters: [{ isNegated: false, type: "GROUP", value: "AND", children: [{ on: "subscriber", field: "isOnline", value: "false", operator: "EQUAL" }] }],
    },
  ]);
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await redis?.quit();
  await stack?.stop();
});

type Presence = { isOnline?: boolean | null | undefined; lastOnlineAt?: string | null | undefined };

async function presenceOf(subscriberId: string): Promise<Presence> {
  const reply = await stack.request<Data<Presence>>("GET", `/v1/subscribers/${subscriberId}`);
  expect(reply.status).toBe(200);
  return { isOnline: reply.body.data.isOnline, lastOnlineAt: reply.body.data.lastOnlineAt };
}

/** The subscriber's presence once it is `isOnline`, within `withinMs`. */
function presenceOnce(subscriberId: string, isOnline: boolean, withinMs = 10_000): Promise<Presence> {
  return eventually(
    async () => {
      const presence = await presenceOf(subscriberId);
      return presence.isOnline === isOnline ? presence : undefined;
    },
    withinMs,
    100,
  );
}

/** A socket of the subscriber's Inbox session on `url`, once connected. */
async function socketOn(url: string, subscriberId: string): Promise<Socket> {
  const { token } = await openSession(stack, subscriberId);
  const socket = connectSocket(url, { transports: ["websocket"], query: { token }, forceNew: true, reconnection: false });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("connect_error", reject);
  });
  return socket;
}

/** Triggers the workflow for the subscriber and answers the contents of the messages its run wrote. */
async function run(subscriberId: string, transactionId: string): Promise<string[]> {
  expect((await stack.request("POST", "/v1/events/trigger", { name: workflow, to: subscriberId, transactionId })).status).toBe(201);
  // The unconditional step is written in the same run as the conditional one.
  const contents = await eventually(async () => {
    const written = (await messagesOf(stack, transactionId, "in_app")).map((message) => String((message as { content?: unknown }).content));
    return written.includes("always") ? written : undefined;
  }, 15_000);
  return contents.sort();
}

describe("Inbox presence", () => {
  it("is online while any gateway holds one of the subscriber's sockets, offline with lastOnlineAt once the last closes; conditions read it", async () => {
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "presence-ada" })).status).toBe(201);
    expect((await presenceOf("presence-ada")).isOnline ?? false).toBe(false);

    // @novu/js opens its socket through the first gateway.
    const inbox = await openInbox(stack, "presence-ada");
    const connected = new Promise<void>((resolve, reject) => {
      const stop = inbox.on("socket.connect.resolved", ({ error }) => {
        stop();
        if (error) reject(error);
        else resolve();
      });
    });
    inbox.on("notifications.unseen_count_changed", () => undefined);
    await connected;
    await presenceOnce("presence-ada", true);
    expect(await run("presence-ada", "presence-online")).toEqual(["always"]);

    // A second tab, through the replica; the first closes: still online, the replica holds a socket.
    const replicaSocket = await socketOn(replicaUrl, "presence-ada");
    // Its opening recorded (it marks online what is online already: nothing to wait for), the first closes.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    inbox.socket.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await presenceOf("presence-ada")).isOnline).toBe(true);

    // The last one closes: offline, last online now.
    const closedAt = Date.now();
    replicaSocket.close();
    const offline = await presenceOnce("presence-ada", false);
    expect(Math.abs(Date.parse(offline.lastOnlineAt ?? "") - closedAt)).toBeLessThan(10_000);
    expect(await run("presence-ada", "presence-away")).toEqual(["always", "while away"]);

    // Back: online again, lastOnlineAt kept.
    await socketOn(stack.url, "presence-ada");
    await presenceOnce("presence-ada", true);
    expect((await presenceOf("presence-ada")).lastOnlineAt).toBe(offline.lastOnlineAt);
  });

  it("marks offline, once a gateway killed holding their sockets has gone silent, the subscribers no live gateway holds a socket of", async () => {
    for (const subscriberId of ["presence-bo", "presence-cy"]) {
      expect((await stack.request("POST", "/v1/subscribers", { subscriberId })).status).toBe(201);
    }
    const doomed = await stack.startReplica();
    // Bo's only socket is on the gateway about to die; Cy has one there and one on the first gateway.
    await socketOn(doomed, "presence-bo");
    await socketOn(doomed, "presence-cy");
    await socketOn(stack.url, "presence-cy");
    for (const subscriberId of ["presence-bo", "presence-cy"]) {
      await presenceOnce(subscriberId, true);
    }
    // Every opening recorded in Redis before the gateway dies.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const killedAt = Date.now();
    await stack.killReplica(doomed);
    const offline = await presenceOnce("presence-bo", false, 15_000);
    // Not before its word ran out; last online when it was swept.
    const lastOnlineAt = Date.parse(offline.lastOnlineAt ?? "");
    expect(lastOnlineAt).toBeGreaterThanOrEqual(killedAt + PRESENCE_TIMEOUT_MS / 2);
    expect(lastOnlineAt).toBeLessThan(Date.now() + 1_000);
    expect(await run("presence-bo", "presence-bo-away")).toEqual(["always", "while away"]);
    // Cy's socket on the first gateway keeps Cy online through the sweep.
    await new Promise((resolve) => setTimeout(resolve, PRESENCE_TIMEOUT_MS));
    expect((await presenceOf("presence-cy")).isOnline).toBe(true);
  }, 60_000);

  it("records its subscribers online again when a gateway taken for dead while alive is back", async () => {
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "presence-di" })).status).toBe(201);
    await socketOn(replicaUrl, "presence-di");
    await presenceOnce("presence-di", true);

    // The replica's word is wiped as fast as it renews it, as if it could not reach Redis: it is swept.
    const environment = await stack.request<Data<{ _id: string }>>("GET", "/v1/environments/me");
    const [replicaId] = await eventually(async () => {
      const holders = await redis.sMembers(`notify:presence:${environment.body.data._id}:presence-di`);
      return holders.length === 1 ? holders : undefined;
    }, 5_000);
    let silenced = true;
    const silence = (async () => {
      while (silenced) {
        await redis.del(`notify:presence:process:${replicaId}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      await presenceOnce("presence-di", false, 15_000);
    } finally {
      silenced = false;
      await silence;
    }
    // Its next word finds it swept: the subscriber it still holds a socket of is online again.
    await presenceOnce("presence-di", true);
  });
});
