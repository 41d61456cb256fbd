import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { createCoalescer, repeatEvery, scopeHeaders, type Logger, type Redis, type Scope } from "@notify/runtime";

/** How long a gateway counts as alive after it last said so; it says so three times as often. */
const PROCESS_ALIVE_MS = 60_000;
/** A subscriber's record of the gateways holding its sockets outlives a gateway that died holding one by this long. */
const SUBSCRIBER_KEPT_MS = 24 * 3_600_000;
/** Presence changes sent to the subscribers service in one call. */
const PER_CALL = 1_000;

const processKey = (processId: string) => `notify:presence:process:${processId}`;
const subscriberKey = (environmentId: string, subscriberId: string) => `notify:presence:${environmentId}:${subscriberId}`;

export interface PresenceDeps {
  redis: Redis;
  subscribers: Pick<Client<typeof subscribersV1.SubscriberService>, "setSubscribersOnline">;
  log: Logger;
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
 * marks it offline only when no live gateway holds another. A gateway that dies holding sockets
 * leaves their subscribers online, as Novu's does; their clients reconnect elsewhere anyway.
 */
export function createPresence(deps: PresenceDeps): Presence {
  const { redis, log } = deps;
  const processId = randomBytes(8).toString("hex");
  const alive = () => redis.set(processKey(processId), "1", { PX: PROCESS_ALIVE_MS }).then(() => undefined);
  const heartbeat = repeatEvery(PROCESS_ALIVE_MS / 3, alive, (error) => log.warn({ err: error }, "presence heartbeat not written"));
  void alive().catch((error: unknown) => log.warn({ err: error }, "presence heartbeat not written"));

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
  const change = (scope: Scope, subscriberId: string, isOnline: boolean) => {
    changes.submit(`${scope.organizationId}/${scope.environmentId}`, { subscriberId, isOnline }).catch((error: unknown) => {
      log.warn({ err: error, environmentId: scope.environmentId, subscriberId }, "presence not recorded");
    });
  };

  /** Whether a live gateway other than this one holds a socket of the subscriber; Redis out of reach: none known. */
  async function heldElsewhere(scope: Scope, subscriberId: string): Promise<boolean> {
    try {
      const key = subscriberKey(scope.environmentId, subscriberId);
      const [, members] = (await redis.multi().sRem(key, processId).sMembers(key).exec()) as [unknown, string[]];
      const others = members.filter((member) => member !== processId);
      return others.length > 0 && (await redis.exists(others.map(processKey))) > 0;
    } catch (error) {
      log.warn({ err: error }, "presence of other gateways not read");
      return false;
    }
  }

  return {
    opened(scope, subscriberId) {
      const key = subscriberKey(scope.environmentId, subscriberId);
      redis
        .multi()
        .sAdd(key, processId)
        .pExpire(key, SUBSCRIBER_KEPT_MS)
        .exec()
        .catch((error: unknown) => log.warn({ err: error }, "presence not recorded in Redis"));
      change(scope, subscriberId, true);
    },
    closed(scope, subscriberId, heldAgain) {
      void heldElsewhere(scope, subscriberId).then((elsewhere) => {
        if (!elsewhere && !heldAgain()) change(scope, subscriberId, false);
      });
    },
    async stop() {
      await heartbeat.stop();
    },
  };
}
