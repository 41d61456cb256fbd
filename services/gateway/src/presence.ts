import { createHash, randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { createCoalescer, repeatEvery, scopeHeaders, type Logger, type Redis, type Scope } from "@notify/runtime";

/** A subscriber's record of the gateways holding its sockets outlives a gateway that died holding one by this long. */
const SUBSCRIBER_KEPT_MS = 24 * 3_600_000;
/** Presence changes sent to the subscribers service in one call, and subscribers of a silent gateway swept at once. */
const PER_CALL = 1_000;
/**
 * Reads of a subscriber's holders after recording it offline, each followed by a correcting call
 * when they disagree: a socket opening and closing faster than the calls land is left to the next close.
 */
const MAX_PRESENCE_CHECKS = 4;

const processKey = (processId: string) => `notify:presence:process:${processId}`;
const subscriberKey = (environmentId: string, subscriberId: string) => `notify:presence:${environmentId}:${subscriberId}`;
/** The subscribers a gateway holds sockets of, as `organizationId/environmentId/subscriberId`. */
const heldKey = (processId: string) => `notify:presence:held:${processId}`;
/** The gateways of a deployment that may hold sockets, alive or not yet swept. */
const gatewaysKey = (deployment: string) => `notify:presence:gateways:${deployment}`;
/** Taken by the gateway sweeping a silent one, so two do not sweep it at once. */
const sweepKey = (processId: string) => `notify:presence:sweep:${processId}`;

interface Held {
  scope: Scope;
  subscriberId: string;
}

const heldText = ({ scope, subscriberId }: Held) => `${scope.organizationId}/${scope.environmentId}/${subscriberId}`;

/** An entry of a gateway's held set; organization and environment ids hold no "/", a subscriber id may. */
function heldOf(text: string): Held | undefined {
  const first = text.indexOf("/");
  const second = text.indexOf("/", first + 1);
  if (first < 1 || second < 0) return undefined;
  return { scope: { organizationId: text.slice(0, first), environmentId: text.slice(first + 1, second) }, subscriberId: text.slice(second + 1) };
}

/**
 * The name gateways share when they look after each other's subscribers: their database's
 * (host, port and name, not the credentials), so deployments that share a Redis keep apart.
 */
export function deploymentOf(databaseUrl: string): string {
  const { host, pathname } = new URL(databaseUrl);
  return createHash("sha256").update(`${host}${pathname}`).digest("hex").slice(0, 16);
}

export interface PresenceDeps {
  redis: Redis;
  subscribers: Pick<Client<typeof subscribersV1.SubscriberService>, "setSubscribersOnline">;
  log: Logger;
  /** deploymentOf(DATABASE_URL): the gateways that sweep each other's subscribers. */
  deployment: string;
  /** INBOX_PRESENCE_TIMEOUT_MS: how long a silent gateway's subscribers stay online. */
  timeoutMs: number;
}

export interface Presence {
  /** The subscriber's first Inbox socket on this gateway opened: it is online. */
  opened(scope: Scope, subscriberId: string): void;
  /**
   * Its last socket on this gateway closed: offline, last online now, unless another gateway
   * holds one of its sockets or `heldAgain()` says one opened here meanwhile.
   */
  closed(scope: Scope, subscriberId: string, heldAgain: () => boolean): void;
  stop(): Promise<void>;
}

/**
 * Inbox presence (Novu's subscriber isOnline and lastOnlineAt, which step conditions read), kept
 * as Novu's socket service keeps it, across gateways: each records in Redis which gateways hold
 * a subscriber's sockets and says it is alive, so one closing its last socket of a subscriber
 * marks it offline only when no live gateway holds another. A gateway that stops without closing
 * its sockets (killed, crashed, or stopping, when its clients reconnect elsewhere) goes silent:
 * once its word has run out, another gateway sweeps its subscribers, marking offline those no
 * live gateway holds a socket of. Novu's leaves them online until their next disconnect.
 */
export function createPresence(deps: PresenceDeps): Presence {
  const { redis, log, timeoutMs } = deps;
  const processId = randomBytes(8).toString("hex");
  const gateways = gatewaysKey(deps.deployment);
  /** The subscribers this gateway holds sockets of, by heldText. */
  const holding = new Map<string, Held>();
  /** Whether a heartbeat has been written: until then this gateway is new to the set, not swept from it. */
  let joined = false;
  const alive = async () => {
    const [, added] = (await redis
      .multi()
      .set(processKey(processId), "1", { PX: timeoutMs })
      .sAdd(gateways, processId)
      .pExpire(heldKey(processId), SUBSCRIBER_KEPT_MS)
      .exec()) as [unknown, number, unknown];
    if (added === 1 && holding.size > 0) {
      if (joined) {
        // Swept while alive (cut off from Redis, or too busy to say so, for longer than the
        // timeout): its subscribers were marked offline, and are recorded online again.
        log.warn({ subscribers: holding.size }, "presence swept while alive; recorded again");
        for (const held of holding.values()) hold(held);
      } else {
        // Joining with sockets already open (clients of a replaced gateway reconnect at once):
        // they were recorded online as they opened; Redis is written again in case it was out of
        // reach then, so a sweep would find them.
        for (const held of holding.values()) void recordHeld(held);
      }
    }
    joined = true;
  };

  // Per environment, in the order they happened: a reload's close and open land in one batch or in
  // batches that run one after another, so the open is never undone by the close before it.
  const changes = createCoalescer<{ subscriberId: string; isOnline: boolean }, void>({
    maxBatch: PER_CALL,
    maxInFlight: 1,
    run: async (key, items) => {
      const [organizationId, environmentId] = key.split("/") as [string, string];
      const latest = new Map(items.map((item) => [item.subscriberId, item.isOnline]));
      const headers = scopeHeaders({ organizationId, environmentId });
      for (const isOnline of [false, true]) {
        const subscriberIds = [...latest].flatMap(([subscriberId, online]) => (online === isOnline ? [subscriberId] : []));
        if (subscriberIds.length > 0) await deps.subscribers.setSubscribersOnline({ subscriberIds, isOnline }, { headers });
      }
      return items.map(() => undefined);
    },
  });
  const change = ({ scope, subscriberId }: Held, isOnline: boolean) =>
    changes.submit(`${scope.organizationId}/${scope.environmentId}`, { subscriberId, isOnline });
  const changeNow = (held: Held, isOnline: boolean) => {
    (isOnline ? change(held, true) : markOffline(held)).catch((error: unknown) => {
      log.warn({ err: error, environmentId: held.scope.environmentId, subscriberId: held.subscriberId }, "presence not recorded");
    });
  };

  /** Records in Redis that this gateway holds a socket of the subscriber; resolves once Redis has it or is found out of reach. */
  function recordHeld(held: Held): Promise<void> {
    const key = subscriberKey(held.scope.environmentId, held.subscriberId);
    return redis
      .multi()
      .sAdd(key, processId)
      .pExpire(key, SUBSCRIBER_KEPT_MS)
      .sAdd(heldKey(processId), heldText(held))
      .exec()
      .then(
        () => undefined,
        (error: unknown) => log.warn({ err: error }, "presence not recorded in Redis"),
      );
  }

  /**
   * Records that this gateway holds a socket of the subscriber: online, once Redis has it, so a
   * gateway that reads the holders after this online call lands finds this one among them.
   */
  function hold(held: Held): void {
    void recordHeld(held).then(() => changeNow(held, true));
  }

  /** Whether a live gateway is among `holders`, the gateways recorded holding a subscriber's sockets. */
  async function aliveAmong(holders: string[]): Promise<boolean> {
    return holders.length > 0 && (await redis.exists(holders.map(processKey))) > 0;
  }

  /** Takes `leaving` off the subscriber's record; answers whether a live gateway still holds one of its sockets. */
  async function heldByOthers({ scope, subscriberId }: Held, leaving: string): Promise<boolean> {
    const key = subscriberKey(scope.environmentId, subscriberId);
    const [, holders] = (await redis.multi().sRem(key, leaving).sMembers(key).exec()) as [unknown, string[]];
    return aliveAmong(holders);
  }

  /**
   * Records the subscriber offline, then reads whether a live gateway holds one of its sockets
   * after each change it recorded, and records the opposite while the two disagree: another
   * gateway's calls travel apart from this one's, so this one's may land after a newer one of
   * theirs (an online call for a socket opened meanwhile, an offline one for a socket closed since).
   */
  async function markOffline(held: Held): Promise<void> {
    const key = subscriberKey(held.scope.environmentId, held.subscriberId);
    let online = false;
    await change(held, online);
    for (let check = 0; check < MAX_PRESENCE_CHECKS; check += 1) {
      const holds = await aliveAmong(await redis.sMembers(key));
      if (holds === online) return;
      online = holds;
      await change(held, online);
    }
  }

  /**
   * Marks offline the subscribers of a silent gateway that no live gateway holds, a page at a
   * time; an entry leaves its held set once its change is recorded, so a sweep cut short (this
   * gateway dying too, the subscribers service out of reach) is taken up again by the next.
   */
  async function sweepGateway(silent: string): Promise<number> {
    let offline = 0;
    for (;;) {
      const entries = await redis.sRandMemberCount(heldKey(silent), PER_CALL);
      if (entries.length === 0) return offline;
      // Still sweeping it: no other gateway takes over while a page is under way.
      await redis.pExpire(sweepKey(silent), timeoutMs);
      await Promise.all(
        entries.map(async (entry) => {
          const held = heldOf(entry);
          if (!held || (await heldByOthers(held, silent))) return;
          await markOffline(held);
          offline += 1;
        }),
      );
      await redis.sRem(heldKey(silent), entries);
    }
  }

  /** Sweeps the deployment's gateways gone silent, each by one gateway at a time. */
  async function sweep(): Promise<void> {
    const others = (await redis.sMembers(gateways)).filter((id) => id !== processId);
    if (others.length === 0) return;
    const words = await redis.mGet(others.map(processKey));
    for (const [index, silent] of others.entries()) {
      if (words[index] !== null) continue;
      if ((await redis.set(sweepKey(silent), processId, { NX: true, PX: timeoutMs })) === null) continue;
      const offline = await sweepGateway(silent);
      await redis.multi().sRem(gateways, silent).del(heldKey(silent)).del(sweepKey(silent)).exec();
      log.info({ gateway: silent, offline }, "presence of a silent gateway's subscribers swept");
    }
  }
  const heartbeat = repeatEvery(timeoutMs / 3, alive, (error) => log.warn({ err: error }, "presence heartbeat not written"));
  void alive().catch((error: unknown) => log.warn({ err: error }, "presence heartbeat not written"));
  const sweeps = repeatEvery(timeoutMs / 3, sweep, (error) => log.warn({ err: error }, "presence of silent gateways not swept"));

  return {
    opened(scope, subscriberId) {
      const held = { scope, subscriberId };
      holding.set(heldText(held), held);
      hold(held);
    },
    closed(scope, subscriberId, heldAgain) {
      const held = { scope, subscriberId };
      holding.delete(heldText(held));
      redis.sRem(heldKey(processId), heldText(held)).catch((error: unknown) => log.warn({ err: error }, "presence not recorded in Redis"));
      void heldByOthers(held, processId).then(
        (elsewhere) => {
          if (!elsewhere && !heldAgain()) changeNow(held, false);
        },
        (error: unknown) => {
          // Redis out of reach: no other gateway known to hold one.
          log.warn({ err: error }, "presence of other gateways not read");
          if (!heldAgain()) changeNow(held, false);
        },
      );
    },
    async stop() {
      await sweeps.stop();
      await heartbeat.stop();
    },
  };
}
