import { LRUCache } from "lru-cache";
import type { NatsConnection } from "nats";
import type { Logger } from "./log.js";
import { cacheLookups } from "./metrics.js";
import type { BackgroundNats } from "./nats.js";

/**
 * Change announcements: the service that owns a resource tells, over NATS, which of its
 * resources changed, so that services keeping copies of them (to spare a hop per request) drop
 * those copies. Subjects are `<subject>.<environmentId>`; the body is a JSON array of keys.
 */
export const CHANGE_SUBJECTS = {
  /** Keys: external subscriberIds. */
  subscribers: "notify.changes.subscribers",
  /** Keys: workflow ids and trigger identifiers (before and after a rename). */
  workflows: "notify.changes.workflows",
  /** Keys: external subscriberIds whose in-app feed (their messages) changed. */
  feeds: "notify.changes.feeds",
  /**
   * Keys: `<messageId>:<subscriberId>` of in-app messages that arrived in a feed (new, or back
   * from a snooze). Announced with `tooMany` "split": a follower needs every id.
   */
  received: "notify.changes.received",
} as const;

/**
 * What an announcement of more keys than one message holds says instead: "every", the whole
 * environment (its followers drop every copy of it), or "split", its keys in as many messages as
 * they need.
 */
export type TooMany = "every" | "split";

/** Announced instead of keys when a change may touch any key of the environment. */
export const EVERY_KEY = "every" as const;

export type ChangedKeys = readonly string[] | typeof EVERY_KEY;

/**
 * An announcement of keys longer than this names the whole environment instead: NATS refuses a
 * message over its max_payload (1 MB by default), which a batch of 10,000 long ids exceeds.
 */
const MAX_ANNOUNCEMENT_BYTES = 64 * 1024;

/** How long an announcer waits for the NATS server to take an announcement before answering anyway. */
const ANNOUNCE_WAIT_MS = 500;

export type Announce = (environmentId: string, keys: ChangedKeys) => Promise<void>;

/**
 * Announces through the connection once there is one (none yet: nothing to tell, since no
 * follower can be live without NATS either). Resolves when the server has the announcement, so
 * a write answered after it is already known to every live follower; a server that does not
 * answer within ANNOUNCE_WAIT_MS does not hold the write up (followers lose their connection too,
 * and stop trusting their copies). A process that keeps copies of what it announces (`own`)
 * drops them first: its own announcement reaches it only later.
 */
export function announcer(
  nats: () => NatsConnection | undefined,
  subject: string,
  own?: Pick<FollowedCache<object>, "forget">,
  tooMany: TooMany = "every",
): Announce {
  return async (environmentId, keys) => {
    own?.forget(environmentId, keys);
    const connection = nats();
    if (!connection || connection.isClosed() || (keys !== EVERY_KEY && keys.length === 0)) return;
    for (const body of announcementBodies(keys, tooMany)) connection.publish(`${subject}.${environmentId}`, body);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([connection.flush().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ANNOUNCE_WAIT_MS)))]);
    clearTimeout(timer);
  };
}

/** The bodies that announce `keys`, each at most MAX_ANNOUNCEMENT_BYTES long (unless one key is longer). */
function announcementBodies(keys: ChangedKeys, tooMany: TooMany): string[] {
  const whole = JSON.stringify(keys);
  if (whole.length <= MAX_ANNOUNCEMENT_BYTES || keys === EVERY_KEY) return [whole];
  if (tooMany === "every") return [JSON.stringify(EVERY_KEY)];
  const bodies: string[] = [];
  let part: string[] = [];
  let length = 2;
  for (const key of keys) {
    const size = JSON.stringify(key).length + 1;
    if (part.length > 0 && length + size > MAX_ANNOUNCEMENT_BYTES) {
      bodies.push(JSON.stringify(part));
      part = [];
      length = 2;
    }
    part.push(key);
    length += size;
  }
  bodies.push(JSON.stringify(part));
  return bodies;
}

export interface FollowedCacheOptions<V> {
  /** The cache's `cache` label in `notify_cache_lookups_total` (each `get` is a hit or a miss). */
  name: string;
  /** Keys kept (each with its parts). */
  max: number;
  /** A copy is read again after this long even if no change was announced, so a lost announcement heals. */
  ttlMs?: number;
  /** With `sizeOf`, the kept copies' sizes add up to at most this. */
  maxSize?: number;
  sizeOf?: (value: V) => number;
}

const COPY_TTL_MS = 60_000;

/** Taken before reading the owner: a copy read after a change announced meanwhile is not kept. */
export interface Ticket {
  sequence: number;
  at: number;
}

/**
 * Copies of another service's resources, trusted only while their change announcements are
 * followed: `setLive(false)` (connection lost) drops every copy and no copy is kept until
 * `setLive(true)`. A copy is also kept only when no change of its key was announced since its
 * ticket, so a read that raced an update or a delete never outlives it.
 *
 * A key may hold several copies, told apart by `part` (the pages of one subscriber's feed, say):
 * a change of the key drops them all, and a change of EVERY_KEY every copy of the environment.
 */
export function createFollowedCache<V extends object>({ name, max, ttlMs = COPY_TTL_MS, maxSize, sizeOf }: FollowedCacheOptions<V>) {
  const lookups = cacheLookups(name);
  const sizes = new WeakMap<V, number>();
  const sizeOfKept = (value: V) => {
    let size = sizes.get(value);
    if (size === undefined) sizes.set(value, (size = sizeOf!(value)));
    return size;
  };
  const copies = new LRUCache<string, Map<string, V>>({
    max,
    ttl: ttlMs,
    ...(maxSize !== undefined && sizeOf !== undefined
      ? {
          maxSize,
          sizeCalculation: (parts: Map<string, V>) =>
            Math.max(
              1,
              [...parts.values()].reduce((total, value) => total + sizeOfKept(value), 0),
            ),
        }
      : {}),
  });
  let sequence = 0;
  let live = false;
  /** Tickets up to this sequence are refused: a change they may have missed is no longer remembered. */
  let trustedAfter = -1;
  /** When each key last changed; an environment's own entry when EVERY_KEY did. */
  const changedAt = new LRUCache<string, number>({
    max,
    ttl: ttlMs,
    dispose: (changed, _key, reason) => {
      if (reason === "evict") trustedAfter = Math.max(trustedAfter, changed);
    },
  });
  const keyOf = (environmentId: string, key: string) => `${environmentId}\n${key}`;
  function get(environmentId: string, key: string, part = ""): V | undefined {
    const copy = live ? copies.get(keyOf(environmentId, key))?.get(part) : undefined;
    if (copy) lookups.hit();
    else lookups.miss();
    return copy;
  }
  const ticket = (): Ticket => ({ sequence, at: Date.now() });
  /** Whether what was read of `key` under the ticket is still current: no change of it announced since, and not too old to tell. */
  function unchangedSince(taken: Ticket, environmentId: string, key: string): boolean {
    if (!live || taken.sequence <= trustedAfter || Date.now() - taken.at >= ttlMs) return false;
    return (changedAt.get(keyOf(environmentId, key)) ?? -1) < taken.sequence && (changedAt.get(environmentId) ?? -1) < taken.sequence;
  }
  function set(taken: Ticket, environmentId: string, key: string, value: V, part = ""): void {
    if (!unchangedSince(taken, environmentId, key)) return;
    const cacheKey = keyOf(environmentId, key);
    const parts = copies.get(cacheKey);
    if (parts?.get(part) === value) return;
    // A new map: one that grew in place would keep the size it was first counted at. The key's
    // copies all go when its first one would have: none outlives the TTL.
    copies.set(cacheKey, new Map(parts).set(part, value), { noUpdateTTL: true });
  }

  return {
    get,
    ticket,
    set,
    unchangedSince,
    /** The kept copy of `key`, else what `read` finds (kept, under a ticket taken before the read). */
    async readThrough(environmentId: string, key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
      const copy = get(environmentId, key);
      if (copy) return copy;
      const taken = ticket();
      const found = await read();
      if (found) set(taken, environmentId, key, found);
      return found;
    },
    forget(environmentId: string, keys: ChangedKeys): void {
      if (keys === EVERY_KEY) {
        changedAt.set(environmentId, sequence);
        const prefix = keyOf(environmentId, "");
        for (const cacheKey of [...copies.keys()]) if (cacheKey.startsWith(prefix)) copies.delete(cacheKey);
      } else {
        for (const key of keys) {
          const cacheKey = keyOf(environmentId, key);
          changedAt.set(cacheKey, sequence);
          copies.delete(cacheKey);
        }
      }
      sequence += 1;
    },
    setLive(value: boolean): void {
      if (value === live) return;
      live = value;
      copies.clear();
      trustedAfter = sequence;
      sequence += 1;
    },
  };
}

export type FollowedCache<V extends object> = ReturnType<typeof createFollowedCache<V>>;

/**
 * How long a follower waits after (re)connecting before it keeps copies. An owner that was cut
 * off too announces only once it is connected (owners retry every 500 ms, nats.ts): a copy read
 * before then could miss a write the owner made meanwhile, and be answered until the TTL.
 */
const TRUST_AFTER_CONNECT_MS = 2_000;

/** A subject whose announcements a cache follows. */
export interface Followed {
  subject: string;
  /**
   * Its keys are not the cache's keys (the copies embed those resources, as a feed page embeds
   * its workflows): each announcement drops every copy of the environment.
   */
  dropsEnvironment?: boolean;
}

/** What an announcement's body says changed; undefined for a body that is not an announcement. */
export function changedKeysOf(body: unknown): ChangedKeys | undefined {
  if (body === EVERY_KEY) return EVERY_KEY;
  if (Array.isArray(body)) return body.filter((key): key is string => typeof key === "string");
  return undefined;
}

/**
 * Feeds `cache` the announcements of the followed subjects once the connection is made, and
 * keeps it live only while they can arrive: from TRUST_AFTER_CONNECT_MS after the server has the
 * subscriptions, off at a disconnect, and again that long after each reconnect. Resolves once
 * followed and trusted; a failure is logged, and the cache then stays unused (never live).
 */
export async function followChanges(
  nats: Pick<BackgroundNats, "connected">,
  followed: string | readonly Followed[],
  cache: Pick<FollowedCache<object>, "forget" | "setLive">,
  log: Logger,
): Promise<void> {
  const subjects = typeof followed === "string" ? [{ subject: followed }] : followed;
  try {
    const connection = await nats.connected;
    for (const { subject, dropsEnvironment } of subjects) {
      const prefix = `${subject}.`;
      connection.subscribe(`${subject}.*`, {
        callback: (error, message) => {
          if (error) return;
          try {
            const keys = changedKeysOf(JSON.parse(message.string()));
            if (keys) cache.forget(message.subject.slice(prefix.length), dropsEnvironment ? EVERY_KEY : keys);
          } catch (cause) {
            log.warn({ err: cause, subject: message.subject }, "unreadable change announcement");
          }
        },
      });
    }
    let trusting: NodeJS.Timeout | undefined;
    const trustSoon = () => {
      clearTimeout(trusting);
      trusting = setTimeout(() => cache.setLive(true), TRUST_AFTER_CONNECT_MS).unref();
    };
    const distrust = () => {
      clearTimeout(trusting);
      cache.setLive(false);
    };
    await connection.flush();
    trustSoon();
    void (async () => {
      for await (const status of connection.status()) {
        if (status.type === "disconnect") distrust();
        // A reconnect re-sends the subscriptions first; the flush's answer says the server has them.
        else if (status.type === "reconnect") void connection.flush().then(trustSoon, () => undefined);
      }
      distrust();
    })();
    await new Promise((resolve) => setTimeout(resolve, TRUST_AFTER_CONNECT_MS));
  } catch (error) {
    log.warn({ err: error, subjects: subjects.map(({ subject }) => subject) }, "changes are not followed: every lookup reads the owner");
  }
}
