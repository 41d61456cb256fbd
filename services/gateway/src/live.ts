import type { EventEmitter } from "node:events";
import type { Server as HttpServer } from "node:http";
import { CHANGE_SUBJECTS, changedKeysOf, EVERY_KEY, type BackgroundNats, type ChangedKeys, type Logger, type Scope } from "@notify/runtime";
import type { Subscription } from "nats";
import { Server, type Socket } from "socket.io";
import type { Presence } from "./presence.js";
import type { SessionTokens, SubscriberSession, VerifiedSession } from "./sessions.js";

/** A subscriber's counts as the count events carry them (each count capped, `hasMore` past the cap). */
export interface InboxCounts {
  unseenCount: number;
  unseenHasMore: boolean;
  unreadCount: number;
  unreadHasMore: boolean;
  unreadBySeverity: { high: number; medium: number; low: number; none: number };
}

/** A new in-app message as `notification_received` carries it: the raw message entity (protocol §4.3). */
export interface ReceivedMessage {
  /** The external subscriberId the message is for. */
  subscriberId: string;
  /** The message's context keys, sorted: only sessions with exactly these hear of it. */
  contextKeys: readonly string[];
  message: { _id: string } & Record<string, unknown>;
}

/**
 * What the events are read with. Each call is one batched RPC for many subscribers of one
 * environment, never one per socket.
 */
export interface LiveReads {
  /**
   * Counts of these subscribers (external ids) in sessions of these contexts; a subscriber missing
   * from the answer gets no count events.
   */
  counts(scope: Scope, subscriberIds: readonly string[], contextKeys: readonly string[]): Promise<Map<string, InboxCounts>>;
  /** The in-app messages with these ids, in the order asked; unknown ids are left out. */
  received(scope: Scope, messageIds: readonly string[]): Promise<ReceivedMessage[]>;
}

/** New in-app messages, by the external subscriberId they are for. */
export type ReceivedIds = ReadonlyMap<string, readonly string[]>;

/**
 * The new messages a received announcement names (its keys are `<messageId>:<subscriberId>`), by
 * subscriber; undefined for a body that is not one.
 */
export function receivedIdsOf(body: unknown): ReceivedIds | undefined {
  if (!Array.isArray(body)) return undefined;
  const received = new Map<string, string[]>();
  for (const key of body) {
    if (typeof key !== "string") continue;
    const colon = key.indexOf(":");
    if (colon <= 0) continue;
    const subscriberId = key.slice(colon + 1);
    const ids = received.get(subscriberId);
    if (ids) ids.push(key.slice(0, colon));
    else received.set(subscriberId, [key.slice(0, colon)]);
  }
  return received;
}

export interface LiveDeps {
  server: HttpServer;
  sessions: Pick<SessionTokens, "verify">;
  reads: LiveReads;
  nats: Pick<BackgroundNats, "connected">;
  log: Logger;
  /** Whether a page of `origin` (undefined outside browsers) may open the session's socket. */
  originAllowed: (origin: string | undefined, session: SubscriberSession) => boolean | Promise<boolean>;
  /** How often the server pings an idle socket (it is dropped when no pong comes back). */
  pingIntervalMs: number;
  /** How long a socket has to answer a ping; engine.io's own default unless given. */
  pingTimeoutMs?: number;
  /** Sockets one subscriber may hold open on this process, all its sessions together; a socket past them is closed as it connects. */
  maxSocketsPerSubscriber: number;
  /** Marks subscribers online while they hold a socket (presence.ts); absent: presence is not kept. */
  presence?: Presence;
  /** Whether the subscriber's Inbox budget has room for one more handshake (rate-limits.ts inboxAdmission), else it is dropped; absent: always. */
  admit?: (session: SubscriberSession) => boolean | Promise<boolean>;
}

export interface LiveEvents {
  /** Sockets connected to this process. */
  sockets(): number;
  close(): Promise<void>;
}

/** The subscribers of one environment with sockets on this process. */
interface LocalEnvironment {
  organizationId: string;
  /** Per external subscriberId, its sockets per context (their sessions' context keys, joined). */
  subscribers: Map<string, Map<string, number>>;
}

/** A session's contexts as one string: its context keys (sorted, without commas), joined. */
const contextOf = (contextKeys: readonly string[]) => contextKeys.join(",");

/** What changed in one environment since its last batch left. */
interface Pending {
  counts: Set<string> | typeof EVERY_KEY;
  received: Map<string, string[]>;
}

/** The batches of one environment under way: they emit in the order they left. */
interface Flow {
  inFlight: number;
  /** Settles once the last batch that left has emitted. */
  emitted: Promise<void>;
  /**
   * The batch under way, not emitted yet, that reads a subscriber's counts after the last change
   * of its feed came: its new messages announced meanwhile are emitted with that batch (see `changed`).
   */
  countedIn: Map<string, Late>;
}

/** New messages that joined a batch after it left, by subscriber. */
type Late = Map<string, string[]>;

/** How long a batch waits for the rest of the announcements of the write that started it. */
const GATHER_MS = 2;
/**
 * Batches of one environment read at once. A fan-out's pages are announced one after another:
 * each page's reads overlap the next page's write instead of waiting for the batch before.
 */
const MAX_BATCHES_IN_FLIGHT = 4;

type EngineSendOptions = Parameters<Socket["conn"]["write"]>[1];

/** One event of a socket.io connection: its name and its argument. */
type LiveEvent = readonly [name: string, payload: object];

/** Final, unmasked websocket text frames from server to client (RFC 6455 §5.2), one after another in one buffer. */
function textFramesOf(texts: readonly string[]): Buffer {
  const lengths = texts.map((text) => Buffer.byteLength(text));
  const headerOf = (length: number) => (length < 126 ? 2 : length < 65_536 ? 4 : 10);
  const frames = Buffer.allocUnsafe(lengths.reduce((total, length) => total + headerOf(length) + length, 0));
  let at = 0;
  texts.forEach((text, index) => {
    const length = lengths[index]!;
    const header = headerOf(length);
    frames[at] = 0x81;
    if (header === 2) frames[at + 1] = length;
    else if (header === 4) {
      frames[at + 1] = 126;
      frames.writeUInt16BE(length, at + 2);
    } else {
      frames[at + 1] = 127;
      frames.writeBigUInt64BE(BigInt(length), at + 2);
    }
    at += header;
    at += frames.write(text, at);
  });
  return frames;
}

/**
 * Events as the frames that carry them: each an Engine.IO message packet ("4") holding a
 * socket.io EVENT packet for the main namespace ("2", then the JSON array of the event's name and
 * its argument).
 */
const eventFramesOf = (events: readonly LiveEvent[]) => textFramesOf(events.map((event) => `42${JSON.stringify(event)}`));

/** Engine.IO's ping packet ("2") as its websocket frame, built once for every ping of every socket. */
const PING_FRAME = textFramesOf(["2"]);

/**
 * Pings written in one turn of the event loop. What a write leaves until the turn ends (its
 * request, its callback) outlives a young-generation collection when one turn writes to
 * thousands of sockets, and is then reclaimed only by a full one.
 */
const PINGS_PER_TURN = 256;

/** Engine.IO's default: how long a socket has to answer a ping, told to its client in the handshake. */
const DEFAULT_PING_TIMEOUT_MS = 20_000;

/**
 * Engine.IO's socket as far as its heartbeat and the events' writes go (private members of
 * engine.io, reached for `heartbeatsInStep` and `emitTo`).
 */
interface Heartbeating {
  readyState: string;
  /** Packets engine.io holds until its transport can take them. */
  writeBuffer: readonly unknown[];
  pingIntervalTimer?: NodeJS.Timeout | null;
  pingTimeoutTimer?: NodeJS.Timeout | null;
  /** Its websocket transport (the only one served), that transport's ws socket, and the TCP socket and frame reader of that. */
  transport: { socket: { _socket: { writable: boolean; write(frame: Buffer): boolean }; _receiver: { _mask: Buffer | undefined } } };
  onClose(reason: string): void;
}

/** The sockets that connected or answered within one step, pinged together. */
interface Cohort {
  /** Its sockets still to answer: one leaves as it answers (joining a newer cohort) or closes. */
  members: Set<Heartbeating>;
  /** Until when sockets join this cohort rather than a new one. */
  formingUntil: number;
}

/**
 * Pings the sockets in cohorts, in place of engine.io's timers. Engine.IO times each socket's next
 * ping from the moment its last pong came, so sockets that connected at different moments are
 * pinged at different moments and the process wakes once per ping and once per pong; and each
 * ping goes through its packet queue, events and timers, most of an idle socket's garbage. Here
 * the sockets that connected or answered within one step are pinged together, the frame built
 * once written straight to each one's TCP socket, and those that have not answered when the
 * timeout ends are closed together: a few wakeups per step, and little garbage. A socket's pings
 * come at most a step later than the interval it was told, well within the timeout its client
 * allows.
 */
function heartbeatsInStep(intervalMs: number, timeoutMs: number) {
  const stepMs = Math.max(1, Math.min(1_000, Math.floor(intervalMs / 10)));
  /** The cohort each open socket is in: the one that pinged it last, or the one it joined since. */
  const cohortOf = new Map<Heartbeating, Cohort>();
  let forming: Cohort | undefined;
  const timers = new Set<NodeJS.Timeout>();
  const after = (ms: number, then: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      then();
    }, ms);
    timer.unref();
    timers.add(timer);
  };
  /** Pings the cohort's sockets, PINGS_PER_TURN of them per turn; those that have not answered by the timeout are closed. */
  const ping = (cohort: Cohort, members = cohort.members.values()) => {
    for (let written = 0; written < PINGS_PER_TURN; written++) {
      const next = members.next();
      if (next.done) {
        after(timeoutMs, () => {
          for (const conn of cohort.members) if (conn.readyState === "open") conn.onClose("ping timeout");
        });
        return;
      }
      const tcp = next.value.transport.socket._socket;
      if (next.value.readyState === "open" && tcp.writable) tcp.write(PING_FRAME);
    }
    setImmediate(ping, cohort, members);
  };
  const join = (conn: Heartbeating) => {
    const now = performance.now();
    if (!forming || now >= forming.formingUntil) {
      const cohort: Cohort = { members: new Set(), formingUntil: now + stepMs };
      after(stepMs + intervalMs, () => ping(cohort));
      forming = cohort;
    }
    const current = cohortOf.get(conn);
    if (current === forming) return;
    current?.members.delete(conn);
    forming.members.add(conn);
    cohortOf.set(conn, forming);
  };
  return {
    /** A socket opened: engine.io's ping timer is stopped, and the socket joins this step's cohort. */
    open(conn: Heartbeating): void {
      clearTimeout(conn.pingIntervalTimer ?? undefined);
      clearTimeout(conn.pingTimeoutTimer ?? undefined);
      conn.pingIntervalTimer = null;
      conn.pingTimeoutTimer = null;
      join(conn);
    },
    /** The socket answered a ping: it is pinged again with the others that answered within this step. */
    answered(conn: Heartbeating): void {
      // ws keeps a frame's mask, a view of the chunk the frame was read in, until the next frame
      // comes: a ping interval later, long enough for a young-generation collection to move it
      // to the old generation, left there for a full one. Masks are read from each frame.
      conn.transport.socket._receiver._mask = undefined;
      join(conn);
    },
    closed(conn: Heartbeating): void {
      cohortOf.get(conn)?.members.delete(conn);
      cohortOf.delete(conn);
    },
    close(): void {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      cohortOf.clear();
    },
  };
}

/** The sockets of a subscriber's sessions of one context. */
const roomOf = (environmentId: string, subscriberId: string, context: string) => `${environmentId}:${subscriberId}\u0000${context}`;

/** Node's timers wait at most this long; a later end is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Closes sockets as their sessions end. */
interface Expiries {
  /** Disconnects the socket at `expiresAt` (it is refused on reconnecting with the same token); answers what cancels it. */
  closeAt(socket: Socket, expiresAt: Date): () => void;
  close(): void;
}

/**
 * One timer for every socket of the process, armed for the earliest end. A timer per socket is
 * one more object per idle socket for every garbage collection to walk, and since each socket's
 * delay differs by the moment it connected, Node keeps a timer list per socket in the queue that
 * every ping's timer goes through. Sessions end at whole seconds (the token's `exp`), so sockets
 * ending together share one entry.
 */
function expiriesOf(): Expiries {
  const byEnd = new Map<number, Set<Socket>>();
  let timer: NodeJS.Timeout | undefined;
  /** When the timer fires; Infinity when none is armed. */
  let armedFor = Number.POSITIVE_INFINITY;

  const arm = (end: number) => {
    clearTimeout(timer);
    armedFor = end;
    timer = setTimeout(fire, Math.min(Math.max(end - Date.now(), 0), LONGEST_TIMER_MS));
    timer.unref();
  };

  function fire(): void {
    timer = undefined;
    armedFor = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [end, sockets] of byEnd) {
      if (end > now) {
        next = Math.min(next, end);
        continue;
      }
      byEnd.delete(end);
      for (const socket of sockets) socket.disconnect(true);
    }
    if (next !== Number.POSITIVE_INFINITY) arm(next);
  }

  return {
    closeAt(socket, expiresAt) {
      const end = expiresAt.getTime();
      let sockets = byEnd.get(end);
      if (!sockets) byEnd.set(end, (sockets = new Set()));
      sockets.add(socket);
      if (end < armedFor) arm(end);
      // A bucket left empty is dropped; the timer armed for it finds nothing then and moves on.
      return () => {
        if (sockets.delete(socket) && sockets.size === 0 && byEnd.get(end) === sockets) byEnd.delete(end);
      };
    },
    close() {
      clearTimeout(timer);
      byEnd.clear();
    },
  };
}

/** A handshake's token: `auth.token` as socket.io clients send it, else `?token=` as @novu/js does. */
function tokenOf(handshake: Socket["handshake"]): string | undefined {
  const fromAuth: unknown = handshake.auth.token;
  if (typeof fromAuth === "string" && fromAuth) return fromAuth;
  const fromQuery = handshake.query.token;
  return typeof fromQuery === "string" && fromQuery ? fromQuery : undefined;
}

/** Subscribers whose counts one batched call asks at most, and messages one call reads. */
const READ_BATCH = 1_000;

function chunks<T>(items: readonly T[]): T[][] {
  const parts: T[][] = [];
  for (let start = 0; start < items.length; start += READ_BATCH) parts.push(items.slice(start, start + READ_BATCH));
  return parts;
}

/**
 * The Inbox's live events: a socket.io endpoint on the gateway's HTTP server, one room per
 * subscriber, fed by the messages service's announcements over NATS. Nothing is kept but the
 * sockets of this process, so any replica serves any subscriber. Announcements naming nobody
 * connected here cost no read; the others travel in batches per environment (a few under way at
 * once, the rest gathered meanwhile), so a burst costs a few batched reads however many
 * messages it announced.
 */
export function attachLiveEvents(deps: LiveDeps): LiveEvents {
  const { log, reads } = deps;
  const pingTimeout = deps.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
  const io = new Server(deps.server, {
    path: "/socket.io/",
    // The client opens a websocket directly: no long-polling buffers, no sticky sessions.
    transports: ["websocket"],
    serveClient: false,
    perMessageDeflate: false,
    httpCompression: false,
    // Clients send nothing but their handshake.
    maxHttpBufferSize: 16 * 1024,
    pingInterval: deps.pingIntervalMs,
    pingTimeout,
    connectTimeout: 10_000,
  });

  const environments = new Map<string, LocalEnvironment>();
  const expiries = expiriesOf();
  const heartbeats = heartbeatsInStep(deps.pingIntervalMs, pingTimeout);
  // One listener of each kind for every socket (`this` is the socket), no closure per socket.
  function pingAnswered(this: Heartbeating): void {
    heartbeats.answered(this);
  }
  function connClosed(this: Heartbeating): void {
    heartbeats.closed(this);
  }
  io.engine.on("connection", (conn: Heartbeating & EventEmitter) => {
    heartbeats.open(conn);
    conn.on("heartbeat", pingAnswered);
    conn.once("close", connClosed);
  });
  const pending = new Map<string, Pending>();
  const gathering = new Set<string>();
  const flows = new Map<string, Flow>();

  io.use((socket, next) => {
    const token = tokenOf(socket.handshake);
    void (async () => {
      const session = token === undefined ? undefined : await deps.sessions.verify(token);
      if (!session || !(await deps.originAllowed(socket.handshake.headers.origin, session))) return next(new Error("Unauthorized"));
      if (deps.admit && !(await deps.admit(session))) {
        // Spent with the Inbox's requests. Dropped rather than refused: socket.io clients take a
        // refusal as final (the Inbox would stay without live events until the page reloads), and
        // reconnect after a drop with backoff, so a client in a loop comes back no faster than that.
        log.debug({ environmentId: session.scope.environmentId, subscriberId: session.subscriberId }, "socket dropped: its subscriber's Inbox budget is spent");
        socket.conn.close();
        return;
      }
      socket.data = session;
      next();
    })().catch((error: unknown) => {
      // The token could not be checked (its environment could not be read): not a refusal, which
      // the client would take as final, but a dropped connection, which it retries with backoff.
      log.warn({ err: error }, "socket handshake failed");
      socket.conn.close();
    });
  });

  io.on("connection", (socket) => {
    // The request the socket was upgraded from is kept by engine.io for nothing once the
    // handshake is read: dropping it is most of an idle socket's memory.
    (socket.conn as { request: unknown }).request = undefined;
    const session = socket.data as VerifiedSession;
    const { environmentId, organizationId } = session.scope;
    const { subscriberId } = session;
    // Counted here, where connections are registered one at a time: a check during the handshake
    // would let a burst of them through together.
    if (socketsHeld(environmentId, subscriberId) >= deps.maxSocketsPerSubscriber) {
      log.debug({ environmentId, subscriberId }, "socket refused: its subscriber holds as many as it may on this process");
      socket.disconnect(true);
      return;
    }
    const context = contextOf(session.contextKeys);
    void socket.join(roomOf(environmentId, subscriberId, context));
    // A socket lives no longer than its session: the client reconnects with a new one, or not at all.
    const cancelExpiry = expiries.closeAt(socket, session.expiresAt);
    let local = environments.get(environmentId);
    if (!local) environments.set(environmentId, (local = { organizationId, subscribers: new Map() }));
    let contexts = local.subscribers.get(subscriberId);
    if (!contexts) {
      local.subscribers.set(subscriberId, (contexts = new Map()));
      deps.presence?.opened(session.scope, subscriberId);
    }
    contexts.set(context, (contexts.get(context) ?? 0) + 1);
    socket.once("disconnect", () => {
      cancelExpiry();
      const left = (contexts.get(context) ?? 1) - 1;
      if (left > 0) contexts.set(context, left);
      else contexts.delete(context);
      if (contexts.size === 0 && local.subscribers.get(subscriberId) === contexts) {
        local.subscribers.delete(subscriberId);
        // Not while this gateway stops: its clients reconnect to another, as Novu's socket service assumes.
        if (!closed) deps.presence?.closed(session.scope, subscriberId, () => socketsHeld(environmentId, subscriberId) > 0);
      }
      if (local.subscribers.size === 0 && environments.get(environmentId) === local) environments.delete(environmentId);
    });
  });

  /** The sockets a subscriber holds on this process, in every context. */
  function socketsHeld(environmentId: string, subscriberId: string): number {
    let held = 0;
    for (const count of environments.get(environmentId)?.subscribers.get(subscriberId)?.values() ?? []) held += count;
    return held;
  }

  function pendingOf(environmentId: string): Pending {
    let changes = pending.get(environmentId);
    if (!changes) pending.set(environmentId, (changes = { counts: new Set(), received: new Map() }));
    return changes;
  }

  /**
   * Notes a change of the environment's feeds for the next batch, if it names anybody connected
   * here. New messages of a subscriber whose counts a batch under way reads after its feed last
   * changed join that batch instead (read and emitted before its counts): a write announces its
   * feeds before its new messages, so those counts already include them. Under load the two
   * announcements of a write often fall into two batches, and the second read every count again.
   */
  function changed(environmentId: string, keys: ChangedKeys, received?: ReceivedIds): void {
    const local = environments.get(environmentId);
    if (!local) return;
    const countedIn = flows.get(environmentId)?.countedIn;
    let changes: Pending | undefined;
    if (keys === EVERY_KEY) {
      changes = pendingOf(environmentId);
      changes.counts = EVERY_KEY;
      countedIn?.clear();
    } else {
      for (const key of keys) {
        if (!local.subscribers.has(key)) continue;
        changes ??= pendingOf(environmentId);
        if (changes.counts !== EVERY_KEY) changes.counts.add(key);
        countedIn?.delete(key);
      }
    }
    for (const [subscriberId, ids] of received ?? []) {
      if (!local.subscribers.has(subscriberId) || ids.length === 0) continue;
      const late = countedIn?.get(subscriberId);
      const into = late ?? (changes ??= pendingOf(environmentId)).received;
      const known = into.get(subscriberId);
      if (known) known.push(...ids);
      else into.set(subscriberId, [...ids]);
    }
    if (changes) schedule(environmentId);
  }

  /**
   * A batch leaves GATHER_MS after the first change that makes one: a write announces its feeds
   * and its new messages as two NATS messages, which then travel as one batch.
   */
  function schedule(environmentId: string): void {
    if (gathering.has(environmentId)) return;
    gathering.add(environmentId);
    setTimeout(() => {
      gathering.delete(environmentId);
      send(environmentId);
    }, GATHER_MS);
  }

  /**
   * Starts reading the environment's pending batch unless MAX_BATCHES_IN_FLIGHT are under way
   * (then it grows until one ends). Batches read at once, so a fan-out's pages are read while
   * later ones are still being written, but emit one after another in the order they left, so a
   * socket never hears older counts after newer ones.
   */
  function send(environmentId: string): void {
    let flow = flows.get(environmentId);
    if (!flow) flows.set(environmentId, (flow = { inFlight: 0, emitted: Promise.resolve(), countedIn: new Map() }));
    const changes = pending.get(environmentId);
    const local = environments.get(environmentId);
    if (!changes || flow.inFlight >= MAX_BATCHES_IN_FLIGHT) return;
    pending.delete(environmentId);
    const current = flow;
    current.inFlight += 1;
    const scope: Scope | undefined = local && { organizationId: local.organizationId, environmentId };
    const counted = new Set(!local ? [] : changes.counts === EVERY_KEY ? local.subscribers.keys() : changes.counts);
    for (const subscriberId of changes.received.keys()) counted.add(subscriberId);
    const late: Late = new Map();
    for (const subscriberId of counted) current.countedIn.set(subscriberId, late);
    // Counts are per context: the subscribers counted, grouped by the contexts of their sockets.
    const byContext = new Map<string, string[]>();
    for (const subscriberId of counted) {
      for (const context of local?.subscribers.get(subscriberId)?.keys() ?? []) {
        const subscriberIds = byContext.get(context);
        if (subscriberIds) subscriberIds.push(subscriberId);
        else byContext.set(context, [subscriberId]);
      }
    }
    const reading = scope && read(scope, changes.received, counted, byContext);
    const previous = current.emitted;
    current.emitted = (async () => {
      const events = await reading;
      await previous;
      // New messages announced from here on wait for a batch of their own.
      for (const subscriberId of counted) if (current.countedIn.get(subscriberId) === late) current.countedIn.delete(subscriberId);
      if (!events) {
        // The batch's reads failed: the messages that joined it go on with the next batch.
        if (late.size > 0) changed(environmentId, [], late);
        return;
      }
      const joined = late.size > 0 ? await readReceived(scope!, late) : [];
      events(joined ?? []);
    })().finally(() => {
      current.inFlight -= 1;
      if (pending.has(environmentId)) send(environmentId);
      else if (current.inFlight === 0 && flows.get(environmentId) === current) flows.delete(environmentId);
    });
  }

  /**
   * Sends a subscriber's events, in order, to its sockets on this process: framed once for them
   * all and written to each socket at once (a write per event costs each socket a system call per
   * event). A room's `emit` would build a broadcast, walk the payload for binary data and frame it
   * on every call. The frames go straight to the socket's TCP socket, as the pings do, unless
   * engine.io still holds packets for it (they must go first): then as one packet whose
   * websocket frames engine.io writes as they are, the way socket.io's own broadcasts go. Either
   * way the bytes go out in the order they were written: the socket is never anything but an
   * uncompressed websocket, whose frames ws writes to that same TCP socket as they come.
   */
  function emitTo(environmentId: string, subscriberId: string, context: string, events: readonly LiveEvent[]): void {
    const ids = io.sockets.adapter.rooms.get(roomOf(environmentId, subscriberId, context));
    if (!ids || events.length === 0) return;
    const frames = eventFramesOf(events);
    for (const id of ids) {
      const socket = io.sockets.sockets.get(id);
      if (!socket) continue;
      const conn = socket.conn as unknown as Heartbeating;
      const tcp = conn.transport.socket._socket;
      if (conn.readyState === "open" && conn.writeBuffer.length === 0 && tcp.writable) tcp.write(frames);
      // engine.io's types leave out the option its websocket transport reads.
      else socket.conn.write(frames, { wsPreEncodedFrame: [frames] } as EngineSendOptions);
    }
  }

  /** The new messages `received` names, undefined when they could not be read. */
  async function readReceived(scope: Scope, received: ReadonlyMap<string, readonly string[]>): Promise<ReceivedMessage[] | undefined> {
    try {
      const messageIds = [...received.values()].flat();
      return (await Promise.all(chunks(messageIds).map((ids) => reads.received(scope, ids)))).flat();
    } catch (error) {
      // Best effort, as the announcements are: the client reads its feed again as it reconnects or acts.
      log.warn({ err: error, environmentId: scope.environmentId, subscribers: received.size }, "live events not sent");
      return undefined;
    }
  }

  /**
   * Reads what a batch's events need; answers the function that emits them, given the messages
   * that joined the batch since it left (undefined when a read failed).
   */
  async function read(
    scope: Scope,
    received: ReadonlyMap<string, readonly string[]>,
    counted: ReadonlySet<string>,
    byContext: ReadonlyMap<string, readonly string[]>,
  ): Promise<((joined: readonly ReceivedMessage[]) => void) | undefined> {
    const countsOf = async ([context, subscriberIds]: [string, readonly string[]]) => {
      const contextKeys = context === "" ? [] : context.split(",");
      const answers = await Promise.all(chunks(subscriberIds).map((part) => reads.counts(scope, part, contextKeys)));
      return { context, answers };
    };
    const [messages, counts] = await Promise.all([
      readReceived(scope, received),
      Promise.all([...byContext].map(countsOf)).catch((error: unknown) => {
        // Best effort, as the announcements are: the client reads its counts again as it reconnects or acts.
        log.warn({ err: error, environmentId: scope.environmentId, subscribers: counted.size }, "live events not sent");
        return undefined;
      }),
    ]);
    if (!messages || !counts) return undefined;
    return (joined) => {
      // Protocol §4.2: a new message first, then the unseen count, then the unread counts. Each
      // goes to the subscriber's sessions of one context: a message to those of its own.
      const events = new Map<string, { subscriberId: string; context: string; list: LiveEvent[] }>();
      const eventsOf = (subscriberId: string, context: string) => {
        const key = `${subscriberId}\u0000${context}`;
        let entry = events.get(key);
        if (!entry) events.set(key, (entry = { subscriberId, context, list: [] }));
        return entry.list;
      };
      for (const { subscriberId, contextKeys, message } of [...messages, ...joined]) {
        if (counted.has(subscriberId)) eventsOf(subscriberId, contextOf(contextKeys)).push(["notification_received", { message }]);
      }
      for (const { context, answers } of counts) {
        for (const [subscriberId, count] of answers.flatMap((answer) => [...answer])) {
          if (!counted.has(subscriberId)) continue;
          eventsOf(subscriberId, context).push(
            ["unseen_count_changed", { unseenCount: count.unseenCount, hasMore: count.unseenHasMore }],
            [
              "unread_count_changed",
              { unreadCount: count.unreadCount, counts: { total: count.unreadCount, severity: count.unreadBySeverity }, hasMore: count.unreadHasMore },
            ],
          );
        }
      }
      for (const { subscriberId, context, list } of events.values()) emitTo(scope.environmentId, subscriberId, context, list);
    };
  }

  const subscriptions: Subscription[] = [];
  let closed = false;
  void (async () => {
    const connection = await deps.nats.connected;
    if (closed) return;
    const follow = (subject: string, onBody: (environmentId: string, body: unknown) => void) => {
      const prefix = `${subject}.`;
      subscriptions.push(
        connection.subscribe(`${subject}.*`, {
          callback: (error, message) => {
            if (error) return;
            try {
              onBody(message.subject.slice(prefix.length), JSON.parse(message.string()));
            } catch (cause) {
              log.warn({ err: cause, subject: message.subject }, "unreadable change announcement");
            }
          },
        }),
      );
    };
    follow(CHANGE_SUBJECTS.feeds, (environmentId, body) => {
      const keys = changedKeysOf(body);
      if (keys) changed(environmentId, keys);
    });
    follow(CHANGE_SUBJECTS.received, (environmentId, body) => {
      const received = receivedIdsOf(body);
      if (received) changed(environmentId, [], received);
    });
    // Whatever was announced while NATS was away is lost: every connected subscriber's counts are read again.
    for await (const status of connection.status()) {
      if (status.type === "reconnect") for (const environmentId of environments.keys()) changed(environmentId, EVERY_KEY);
    }
  })().catch((error: unknown) => log.warn({ err: error }, "live events do not follow the feeds"));

  return {
    sockets: () => io.engine.clientsCount,
    async close() {
      closed = true;
      for (const subscription of subscriptions) subscription.unsubscribe();
      expiries.close();
      heartbeats.close();
      // Closing the transports, not disconnecting the sockets: a client told it was disconnected
      // on purpose never reconnects, and @novu/js then hears nothing more until the page reloads.
      io.engine.close();
    },
  };
}
