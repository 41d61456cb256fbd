import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { CHANGE_SUBJECTS, connectNatsInBackground, createLogger, EVERY_KEY, type BackgroundNats, type Scope } from "@notify/runtime";
import { eventually } from "@notify/testing";
import Koa from "koa";
import { io as connectSocket, type Socket } from "socket.io-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { attachLiveEvents, receivedIdsOf, type InboxCounts, type LiveEvents, type LiveReads } from "../src/live.js";
import type { SessionTokens, VerifiedSession } from "../src/sessions.js";

const hex24 = () => randomBytes(12).toString("hex");
const scope: Scope = { organizationId: hex24(), environmentId: hex24() };
/** Tokens of the test's own making (the gateway's are tested with the session routes): opaque, known only to the instance that issued them. */
function tokensOf(lifetimeMs = 3_600_000): SessionTokens {
  const known = new Map<string, VerifiedSession>();
  return {
    async issue(session) {
      const token = randomBytes(16).toString("hex");
      known.set(token, { ...session, expiresAt: new Date(Date.now() + lifetimeMs) });
      return token;
    },
    verify: async (token) => known.get(token),
  };
}
const sessions = tokensOf();
const log = createLogger("live-test", "silent");

const countsOf = (unread: number): InboxCounts => ({
  unseenCount: unread + 1,
  unseenHasMore: false,
  unreadCount: unread,
  unreadHasMore: false,
  unreadBySeverity: { high: unread, medium: 0, low: 0, none: 0 },
});

/** Reads that answer from memory (counts after `countsMs`) and record what they were asked. */
function fakeReads(countsMs = 0) {
  const calls: { counts: string[][]; received: string[][] } = { counts: [], received: [] };
  const reads: LiveReads = {
    async counts(asked, subscriberIds) {
      expect(asked).toEqual(scope);
      calls.counts.push([...subscriberIds]);
      if (countsMs > 0) await new Promise((resolve) => setTimeout(resolve, countsMs));
      return new Map(subscriberIds.map((subscriberId) => [subscriberId, countsOf(subscriberId.length)]));
    },
    async received(asked, messageIds) {
      expect(asked).toEqual(scope);
      calls.received.push([...messageIds]);
      return messageIds.map((id) => ({ subscriberId: id.split("-")[1]!, contextKeys: [], message: { _id: id, content: `hello ${id}`, cta: {} } }));
    },
  };
  return { reads, calls };
}

interface Replica {
  url: string;
  live: LiveEvents;
  nats: BackgroundNats;
  stop(): Promise<void>;
}

async function startReplica(
  reads: LiveReads,
  originAllowed = () => true,
  verifier: Pick<SessionTokens, "verify"> = sessions,
  pingIntervalMs = 25_000,
  pingTimeoutMs?: number,
  maxSocketsPerSubscriber = 50,
): Promise<Replica> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { rest: true };
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const nats = await connectNatsInBackground("nats://127.0.0.1:4222", "live-test");
  const live = attachLiveEvents({
    server,
    sessions: verifier,
    reads,
    nats,
    log,
    originAllowed,
    pingIntervalMs,
    ...(pingTimeoutMs === undefined ? {} : { pingTimeoutMs }),
    maxSocketsPerSubscriber,
  });
  // The subscriptions are made once the connection is: wait until the server has them.
  await (await nats.connected).flush();
  await new Promise((resolve) => setTimeout(resolve, 50));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    live,
    nats,
    async stop() {
      await live.close();
      await new Promise((resolve) => server.close(resolve));
      await nats.close();
    },
  };
}

interface Heard {
  event: string;
  payload: unknown;
}

const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close();
});

/** A connected socket of the subscriber (as @novu/js opens it: websocket, token in the query) and what it hears. */
async function open(url: string, subscriberId: string, token?: string) {
  const issued = token ?? (await sessions.issue({ scope, subscriberId, subscriberDbId: hex24(), contextKeys: [] }));
  const socket = connectSocket(url, { transports: ["websocket"], query: { token: issued }, reconnection: false, forceNew: true });
  sockets.push(socket);
  const heard: Heard[] = [];
  socket.onAny((event: string, payload: unknown) => heard.push({ event, payload }));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("connect_error", reject);
  });
  return { socket, heard };
}

let announcer: BackgroundNats;
beforeAll(async () => {
  announcer = await connectNatsInBackground("nats://127.0.0.1:4222", "live-test-announcer");
});
afterAll(async () => {
  await announcer.close();
});

async function announce(subject: string, body: unknown) {
  const connection = await announcer.connected;
  connection.publish(`${subject}.${scope.environmentId}`, JSON.stringify(body));
  await connection.flush();
}

/** A write's two announcements, the batch of the first (its feed) leaving before the second (its new message) comes. */
async function announceWithBatchBetween(subscriberId: string, messageId: string) {
  await announce(CHANGE_SUBJECTS.feeds, [subscriberId]);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await announce(CHANGE_SUBJECTS.received, [`${messageId}:${subscriberId}`]);
}

describe("live Inbox events", () => {
  it("reads received keys as message ids per subscriber", () => {
    expect(receivedIdsOf(["m1:sub-a", "m2:sub:with:colons", "m3:sub-a", 7, "nocolon"])).toEqual(
      new Map([
        ["sub-a", ["m1", "m3"]],
        ["sub:with:colons", ["m2"]],
      ]),
    );
    expect(receivedIdsOf({ not: "a list" })).toBeUndefined();
  });

  it("sends a new message, then both counts, to the subscriber's sockets only; REST still answers", async () => {
    const { reads, calls } = fakeReads();
    const replica = await startReplica(reads);
    try {
      expect(await (await fetch(`${replica.url}/v1/anything`)).json()).toEqual({ rest: true });
      const ada = await open(replica.url, "ada");
      const adaAgain = await open(replica.url, "ada");
      const bob = await open(replica.url, "bob");
      await announce(CHANGE_SUBJECTS.received, ["m1-ada:ada", "m1-nobody:nobody"]);
      await announce(CHANGE_SUBJECTS.feeds, ["ada", "nobody"]);
      await eventually(async () => (ada.heard.length >= 3 && adaAgain.heard.length >= 3 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const { heard } of [ada, adaAgain]) {
        expect(heard.slice(0, 3)).toEqual([
          { event: "notification_received", payload: { message: { _id: "m1-ada", content: "hello m1-ada", cta: {} } } },
          { event: "unseen_count_changed", payload: { unseenCount: 4, hasMore: false } },
          {
            event: "unread_count_changed",
            payload: { unreadCount: 3, counts: { total: 3, severity: { high: 3, medium: 0, low: 0, none: 0 } }, hasMore: false },
          },
        ]);
      }
      expect(bob.heard).toEqual([]);
      // Nobody connected here costs no read.
      expect(calls.received.flat()).toEqual(["m1-ada"]);
      expect(calls.counts.flat().every((subscriberId) => subscriberId === "ada")).toBe(true);
    } finally {
      await replica.stop();
    }
  });

  it("closes its sockets as it stops so that their clients reconnect (to another replica), as @novu/js only does after a transport close", async () => {
    const replica = await startReplica(fakeReads().reads);
    const { socket } = await open(replica.url, "ada");
    const reason = new Promise<string>((resolve) => socket.once("disconnect", resolve));
    await replica.stop();
    // "io server disconnect" would tell the client the server meant it to stay away: it would never try again.
    expect(await reason).toBe("transport close");
    expect(socket.active).toBe(true);
  });

  it("sends a message to the subscriber's sessions of its contexts only, and counts each context's sessions on their own", async () => {
    const { reads } = fakeReads();
    const countedContexts = new Set<string>();
    const scoped: LiveReads = {
      async counts(asked, subscriberIds, contextKeys) {
        countedContexts.add(contextKeys.join(","));
        return reads.counts(asked, subscriberIds, contextKeys);
      },
      // A message whose id names acme is of the context tenant:acme.
      received: async (asked, messageIds) =>
        (await reads.received(asked, messageIds)).map((received) => ({
          ...received,
          contextKeys: received.message._id.includes("acme") ? ["tenant:acme"] : [],
        })),
    };
    const replica = await startReplica(scoped);
    try {
      const tokenOf = (contextKeys: string[]) => sessions.issue({ scope, subscriberId: "fay", subscriberDbId: hex24(), contextKeys });
      const plain = await open(replica.url, "fay");
      const acme = await open(replica.url, "fay", await tokenOf(["tenant:acme"]));
      const globex = await open(replica.url, "fay", await tokenOf(["tenant:globex"]));
      await announce(CHANGE_SUBJECTS.received, ["macme-fay:fay"]);
      await announce(CHANGE_SUBJECTS.feeds, ["fay"]);
      await eventually(async () => (acme.heard.length >= 3 && plain.heard.length >= 2 && globex.heard.length >= 2 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(acme.heard.slice(0, 3).map(({ event }) => event)).toEqual(["notification_received", "unseen_count_changed", "unread_count_changed"]);
      for (const { heard } of [plain, globex]) {
        expect(heard.length).toBeGreaterThanOrEqual(2);
        expect(heard.every(({ event }) => event !== "notification_received")).toBe(true);
      }
      expect([...countedContexts].sort()).toEqual(["", "tenant:acme", "tenant:globex"]);
    } finally {
      await replica.stop();
    }
  });

  it("frames events of every length whole: short, over 125 bytes and over 64 KiB", async () => {
    const contents = { short: "hi", medium: "m".repeat(300), long: "l".repeat(70_000) };
    const { reads } = fakeReads();
    reads.received = async (_, messageIds) =>
      messageIds.map((id) => ({ subscriberId: "ada", contextKeys: [], message: { _id: id, content: contents[id as keyof typeof contents] } }));
    const replica = await startReplica(reads);
    try {
      const ada = await open(replica.url, "ada");
      await announce(CHANGE_SUBJECTS.received, ["short:ada", "medium:ada", "long:ada"]);
      await eventually(async () => (ada.heard.length >= 5 ? true : undefined));
      expect(ada.heard.slice(0, 3)).toEqual(
        Object.entries(contents).map(([id, content]) => ({ event: "notification_received", payload: { message: { _id: id, content } } })),
      );
      expect(ada.heard.slice(3).map(({ event }) => event)).toEqual(["unseen_count_changed", "unread_count_changed"]);
    } finally {
      await replica.stop();
    }
  });

  it("pings each socket every interval with a frame its client reads and answers, so it stays connected", async () => {
    const replica = await startReplica(fakeReads().reads, () => true, sessions, 300);
    try {
      const ada = await open(replica.url, "ada");
      let pings = 0;
      ada.socket.io.engine.on("ping", () => {
        pings += 1;
      });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(pings).toBeGreaterThanOrEqual(2);
      expect(ada.socket.connected).toBe(true);
    } finally {
      await replica.stop();
    }
  });

  it("pings sockets that connected at different moments together, so an idle process wakes once for many pings", async () => {
    const replica = await startReplica(fakeReads().reads, () => true, sessions, 1_000);
    try {
      const pingedAt = async (subscriberId: string) => {
        const { socket } = await open(replica.url, subscriberId);
        const times: number[] = [];
        socket.io.engine.on("ping", () => times.push(performance.now()));
        return times;
      };
      const ada = await pingedAt("ada");
      await new Promise((resolve) => setTimeout(resolve, 40));
      const grace = await pingedAt("grace");
      await new Promise((resolve) => setTimeout(resolve, 2_400));
      expect(ada.length).toBeGreaterThanOrEqual(2);
      expect(grace.length).toBeGreaterThanOrEqual(2);
      // Connected 40 ms apart, pinged within a few ms of each other, round after round.
      for (const round of [0, 1]) expect(Math.abs(ada[round]! - grace[round]!)).toBeLessThan(15);
    } finally {
      await replica.stop();
    }
  });

  it("closes a socket that stops answering pings once the timeout has passed, and keeps the ones that answer", async () => {
    const replica = await startReplica(fakeReads().reads, () => true, sessions, 300, 300);
    try {
      const ada = await open(replica.url, "ada");
      const grace = await open(replica.url, "grace");
      // Grace's client no longer answers pings, as a peer that vanished, nor gives up on the
      // server by itself: only the server can end the connection.
      const engine = grace.socket.io.engine as unknown as {
        _sendPacket(type: string, ...rest: unknown[]): void;
        _resetPingTimeout(): void;
        _pingTimeoutTimer: NodeJS.Timeout;
        _pingTimeoutTime: number;
      };
      const send = engine._sendPacket.bind(engine);
      engine._sendPacket = (type, ...rest) => {
        if (type !== "pong") send(type, ...rest);
      };
      engine._resetPingTimeout = () => {};
      clearTimeout(engine._pingTimeoutTimer);
      engine._pingTimeoutTime = Number.POSITIVE_INFINITY;
      let graceLeft = 0;
      let graceReason = "";
      grace.socket.on("disconnect", (reason) => {
        graceLeft = performance.now();
        graceReason = reason;
      });
      const silentFrom = performance.now();
      // The server drops its socket first; the client hears of it a moment later.
      await eventually(async () => (replica.live.sockets() === 1 && !grace.socket.connected ? true : undefined), 3_000);
      expect(graceReason).toBe("transport close");
      // Pinged within an interval and a step, then given the whole timeout to answer.
      expect(graceLeft - silentFrom).toBeGreaterThanOrEqual(300);
      expect(ada.socket.connected).toBe(true);
    } finally {
      await replica.stop();
    }
  });

  it("reads the counts of every subscriber connected here in one call when the whole environment changed", async () => {
    const { reads, calls } = fakeReads();
    const replica = await startReplica(reads);
    try {
      const opened = await Promise.all(["s1", "s2", "s3"].map((subscriberId) => open(replica.url, subscriberId)));
      await announce(CHANGE_SUBJECTS.feeds, EVERY_KEY);
      await eventually(async () => (opened.every(({ heard }) => heard.length === 2) ? true : undefined));
      expect(calls.counts).toHaveLength(1);
      expect([...calls.counts[0]!].sort()).toEqual(["s1", "s2", "s3"]);
      expect(opened.map(({ heard }) => heard.map(({ event }) => event))).toEqual(Array(3).fill(["unseen_count_changed", "unread_count_changed"]));
    } finally {
      await replica.stop();
    }
  });

  it("gathers a burst of announcements into few batched reads", async () => {
    const { reads, calls } = fakeReads();
    const replica = await startReplica(reads);
    try {
      const subscribers = Array.from({ length: 50 }, (_, index) => `burst${index}`);
      const opened = await Promise.all(subscribers.map((subscriberId) => open(replica.url, subscriberId)));
      const connection = await announcer.connected;
      for (const subscriberId of subscribers) {
        connection.publish(`${CHANGE_SUBJECTS.received}.${scope.environmentId}`, JSON.stringify([`m-${subscriberId}:${subscriberId}`]));
        connection.publish(`${CHANGE_SUBJECTS.feeds}.${scope.environmentId}`, JSON.stringify([subscriberId]));
      }
      await connection.flush();
      await eventually(async () => (opened.every(({ heard }) => heard.length >= 3) ? true : undefined));
      expect(calls.received.length).toBeLessThanOrEqual(5);
      expect(calls.received.flat().sort()).toEqual(subscribers.map((subscriberId) => `m-${subscriberId}`).sort());
      for (const { heard } of opened) expect(heard[0]!.event).toBe("notification_received");
    } finally {
      await replica.stop();
    }
  });

  it("emits batches in the order they left, even when a later one is read sooner", async () => {
    let calls = 0;
    const reads: LiveReads = {
      async counts(_, subscriberIds) {
        const call = calls++;
        // The first read is the slowest: its counts are the oldest.
        await new Promise((resolve) => setTimeout(resolve, call === 0 ? 300 : 10));
        return new Map(subscriberIds.map((subscriberId) => [subscriberId, countsOf(call)]));
      },
      received: async () => [],
    };
    const replica = await startReplica(reads);
    try {
      const { heard } = await open(replica.url, "ordered");
      await announce(CHANGE_SUBJECTS.feeds, ["ordered"]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await announce(CHANGE_SUBJECTS.feeds, ["ordered"]);
      await eventually(async () => (heard.length === 4 ? true : undefined));
      expect(heard.filter(({ event }) => event === "unread_count_changed").map(({ payload }) => (payload as { unreadCount: number }).unreadCount)).toEqual([
        0, 1,
      ]);
    } finally {
      await replica.stop();
    }
  });

  it("emits a write's new message with the counts read after its feed announcement, even when they came in two batches", async () => {
    const { reads, calls } = fakeReads(200);
    const replica = await startReplica(reads);
    try {
      const { heard } = await open(replica.url, "cara");
      await announceWithBatchBetween("cara", "m3-cara");
      await eventually(async () => (heard.length >= 3 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard.map(({ event }) => event)).toEqual(["notification_received", "unseen_count_changed", "unread_count_changed"]);
      expect(calls.counts).toEqual([["cara"]]);

      // A feed change after a batch left may postdate its counts: that subscriber's next new message waits for counts of its own.
      heard.length = 0;
      await announce(CHANGE_SUBJECTS.feeds, ["cara"]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await announce(CHANGE_SUBJECTS.feeds, ["cara"]);
      await announce(CHANGE_SUBJECTS.received, ["m4-cara:cara"]);
      await eventually(async () => (heard.length >= 5 ? true : undefined));
      expect(heard.map(({ event }) => event)).toEqual([
        "unseen_count_changed",
        "unread_count_changed",
        "notification_received",
        "unseen_count_changed",
        "unread_count_changed",
      ]);
      expect(calls.counts).toEqual([["cara"], ["cara"], ["cara"]]);
    } finally {
      await replica.stop();
    }
  });

  it("sends a new message that joined a batch whose counts could not be read with the next batch", async () => {
    const { reads: answering, calls } = fakeReads();
    let failed = false;
    const reads: LiveReads = {
      ...answering,
      async counts(asked, subscriberIds, contextKeys) {
        if (failed) return answering.counts(asked, subscriberIds, contextKeys);
        await new Promise((resolve) => setTimeout(resolve, 200));
        failed = true;
        throw new Error("messages is away");
      },
    };
    const replica = await startReplica(reads);
    try {
      const { heard } = await open(replica.url, "dora");
      await announceWithBatchBetween("dora", "m5-dora");
      await eventually(async () => (heard.length >= 3 ? true : undefined));
      expect(heard.map(({ event }) => event)).toEqual(["notification_received", "unseen_count_changed", "unread_count_changed"]);
      expect(calls.received).toEqual([["m5-dora"]]);
    } finally {
      await replica.stop();
    }
  });

  it("frames events of every length a websocket frame header tells apart, non-ASCII text included", async () => {
    // Up to 125 bytes, up to 65,535, and beyond: one, two and eight bytes of length.
    const contents = ["é", "é".repeat(1_000), "é".repeat(40_000)];
    const { reads } = fakeReads();
    const sized: LiveReads = {
      ...reads,
      received: async (_, messageIds) =>
        messageIds.map((id, index) => ({ subscriberId: id.split("-")[1]!, contextKeys: [], message: { _id: id, content: contents[index]!, cta: {} } })),
    };
    const replica = await startReplica(sized);
    try {
      const { heard } = await open(replica.url, "eli");
      await announce(CHANGE_SUBJECTS.received, ["m6-eli:eli", "m7-eli:eli", "m8-eli:eli"]);
      await eventually(async () => (heard.length >= 5 ? true : undefined));
      expect(heard.slice(0, 3).map(({ payload }) => (payload as { message: { content: string } }).message.content)).toEqual(contents);
      expect(heard.slice(3).map(({ event }) => event)).toEqual(["unseen_count_changed", "unread_count_changed"]);
    } finally {
      await replica.stop();
    }
  });

  it("serves a subscriber on every replica: no replica needs to have written the message", async () => {
    const { reads } = fakeReads();
    const [first, second] = [await startReplica(reads), await startReplica(reads)];
    try {
      const onFirst = await open(first.url, "eve");
      const onSecond = await open(second.url, "eve");
      await announce(CHANGE_SUBJECTS.received, ["m2-eve:eve"]);
      await eventually(async () => (onFirst.heard.length >= 3 && onSecond.heard.length >= 3 ? true : undefined));
      expect(onSecond.heard[0]).toEqual(onFirst.heard[0]);
    } finally {
      await first.stop();
      await second.stop();
    }
  });

  it("drops a handshake it cannot check, so the client retries it", async () => {
    let outage = true;
    const flaky: Pick<SessionTokens, "verify"> = {
      async verify(token) {
        if (outage) {
          outage = false;
          throw new Error("environments cannot be read");
        }
        return sessions.verify(token);
      },
    };
    const replica = await startReplica(fakeReads().reads, () => true, flaky);
    try {
      const token = await sessions.issue({ scope, subscriberId: "retry", subscriberDbId: hex24(), contextKeys: [] });
      const socket = connectSocket(replica.url, { transports: ["websocket"], query: { token }, forceNew: true, reconnectionDelay: 50 });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("connect_error", reject);
      });
      expect(outage).toBe(false);
    } finally {
      await replica.stop();
    }
  });

  it("refuses a missing, forged or foreign token and a refused origin", async () => {
    const { reads } = fakeReads();
    const replica = await startReplica(reads, () => false);
    const open2 = await startReplica(reads);
    try {
      const refusal = async (url: string, query: Record<string, string>) => {
        const socket = connectSocket(url, { transports: ["websocket"], query, reconnection: false, forceNew: true });
        sockets.push(socket);
        return new Promise<string>((resolve, reject) => {
          socket.once("connect", () => reject(new Error("connected")));
          socket.once("connect_error", (error) => resolve(error.message));
        });
      };
      expect(await refusal(open2.url, {})).toBe("Unauthorized");
      expect(await refusal(open2.url, { token: "not.a.token" })).toBe("Unauthorized");
      const foreign = await tokensOf().issue({ scope, subscriberId: "ada", subscriberDbId: hex24(), contextKeys: [] });
      expect(await refusal(open2.url, { token: foreign })).toBe("Unauthorized");
      const valid = await sessions.issue({ scope, subscriberId: "ada", subscriberDbId: hex24(), contextKeys: [] });
      expect(await refusal(replica.url, { token: valid })).toBe("Unauthorized");
      expect(open2.live.sockets()).toBe(0);
    } finally {
      await replica.stop();
      await open2.stop();
    }
  });

  it("closes a subscriber's socket past its bound as it connects, however many come at once; others' and later ones still connect", async () => {
    const replica = await startReplica(fakeReads().reads, () => true, sessions, 25_000, undefined, 3);
    try {
      const issue = (subscriberId: string, contextKeys: string[] = []) => sessions.issue({ scope, subscriberId, subscriberDbId: hex24(), contextKeys });
      const tokens = await Promise.all([issue("crowd"), issue("crowd"), issue("crowd", ["tenant:acme"]), issue("crowd"), issue("crowd")]);
      const outcomes = await Promise.all(
        tokens.map((token) => {
          const socket = connectSocket(replica.url, { transports: ["websocket"], query: { token }, reconnection: false, forceNew: true });
          sockets.push(socket);
          return new Promise<{ socket: Socket; closed: boolean }>((resolve) => {
            socket.once("connect", () => setTimeout(() => resolve({ socket, closed: !socket.connected }), 200));
            socket.once("connect_error", () => resolve({ socket, closed: true }));
          });
        }),
      );
      expect(outcomes.filter((outcome) => !outcome.closed)).toHaveLength(3);
      expect(replica.live.sockets()).toBe(3);
      await open(replica.url, "neighbour");
      expect(replica.live.sockets()).toBe(4);
      outcomes.find((outcome) => !outcome.closed)!.socket.close();
      await eventually(async () => (replica.live.sockets() === 3 ? true : undefined));
      await open(replica.url, "crowd");
      expect(replica.live.sockets()).toBe(4);
    } finally {
      await replica.stop();
    }
  });

  it("closes a socket when its session ends", async () => {
    const shortLived = tokensOf(400);
    const replica = await startReplica(fakeReads().reads, () => true, shortLived);
    try {
      const token = await shortLived.issue({ scope, subscriberId: "brief", subscriberDbId: hex24(), contextKeys: [] });
      const { socket } = await open(replica.url, "brief", token);
      const reason = await new Promise<string>((resolve) => socket.once("disconnect", resolve));
      expect(reason).toBe("io server disconnect");
      expect(replica.live.sockets()).toBe(0);
    } finally {
      await replica.stop();
    }
  });

  it("closes each socket when its own session ends, sessions ending at other times or gone before theirs left alone", async () => {
    const soon = tokensOf(300);
    const later = tokensOf(1_500);
    const both: Pick<SessionTokens, "verify"> = { verify: async (token) => (await soon.verify(token)) ?? later.verify(token) };
    const replica = await startReplica(fakeReads().reads, () => true, both);
    try {
      const opened = (token: string) => open(replica.url, "brief", token);
      const first = await opened(await soon.issue({ scope, subscriberId: "brief", subscriberDbId: hex24(), contextKeys: [] }));
      const leaving = await opened(await soon.issue({ scope, subscriberId: "brief", subscriberDbId: hex24(), contextKeys: [] }));
      const last = await opened(await later.issue({ scope, subscriberId: "brief", subscriberDbId: hex24(), contextKeys: [] }));
      const closed = (socket: Socket) => new Promise<string>((resolve) => socket.once("disconnect", resolve));
      const lastClosed = closed(last.socket);
      leaving.socket.close();
      expect(await closed(first.socket)).toBe("io server disconnect");
      expect(last.socket.connected).toBe(true);
      await eventually(async () => (replica.live.sockets() === 1 ? true : undefined));
      expect(await lastClosed).toBe("io server disconnect");
      expect(replica.live.sockets()).toBe(0);
    } finally {
      await replica.stop();
    }
  });
});
