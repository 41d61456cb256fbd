import type { Client } from "@connectrpc/connect";
import type { messagesV1, subscribersV1 } from "@notify/proto";
import { scopeHeaders, subscriberNotFound, type FollowedCache, type Scope, type Ticket } from "@notify/runtime";

export type SubscribersClient = Client<typeof subscribersV1.SubscriberService>;

/** BatchGetSubscribers takes at most this many ids per call. */
const BATCH_LIMIT = 1000;

/** Subscribers as the messages service needs them, read through the subscribers service. */
export interface SubscriberDirectory {
  /**
   * The subscriber with this external subscriberId, if it exists. Found subscribers are kept in
   * `copies`, which the subscribers service's change announcements keep current (a deleted or
   * changed subscriber is dropped before its write is answered; without NATS nothing is kept).
   * Lookups made in the same turn of the event loop share one BatchGetSubscribers call per
   * environment, so a burst of requests costs one hop, not one per request; a lookup of a
   * subscriber already being read joins that read unless a change of it was announced since
   * the read began.
   */
  find(scope: Scope, subscriberId: string): Promise<subscribersV1.Subscriber | undefined>;
  /** As find, but NOT_FOUND when the subscriber does not exist. */
  require(scope: Scope, subscriberId: string): Promise<subscribersV1.Subscriber>;
  /** The existing subscribers among these internal ids. */
  findByIds(scope: Scope, ids: readonly string[]): Promise<subscribersV1.Subscriber[]>;
  /**
   * The subscribers the messages (or notifications) are for, each once, found as `find` finds them (by external
   * id, through the kept copies); one that is gone, or was created again under the same
   * subscriberId since, is left out.
   */
  ofMessages(scope: Scope, messages: readonly Pick<messagesV1.Message, "subscriberId" | "externalSubscriberId">[]): Promise<subscribersV1.Subscriber[]>;
  /** The internal ids of up to `limit` subscribers matching any part of `match` (MatchSubscribers), and whether more match. */
  match(scope: Scope, match: SubscriberMatch, limit: number): Promise<{ ids: string[]; hasMore: boolean }>;
}

/** Whom the activity feed's subscriber filters name. */
export interface SubscriberMatch {
  subscriberIds: readonly string[];
  emails: readonly string[];
  search?: string | undefined;
}

interface Waiter {
  resolve(subscriber: subscribersV1.Subscriber | undefined): void;
  reject(error: unknown): void;
}

/** A lookup under way, and the ticket taken before it began. */
interface Flight {
  ticket: Ticket;
  found: Promise<subscribersV1.Subscriber | undefined>;
}

interface PendingLookups {
  scope: Scope;
  waiters: Map<string, Waiter[]>;
}

export function createSubscriberDirectory(client: SubscribersClient, copies: FollowedCache<subscribersV1.Subscriber>): SubscriberDirectory {
  const pending = new Map<string, PendingLookups>();
  const flights = new Map<string, Flight>();
  let scheduled = false;

  async function lookUp(batch: PendingLookups, subscriberIds: string[]): Promise<void> {
    try {
      const reply = await client.batchGetSubscribers({ subscriberIds }, { headers: scopeHeaders(batch.scope) });
      const found = new Map(reply.subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
      for (const id of subscriberIds) for (const waiter of batch.waiters.get(id)!) waiter.resolve(found.get(id));
    } catch (error) {
      for (const id of subscriberIds) for (const waiter of batch.waiters.get(id)!) waiter.reject(error);
    }
  }

  function flush() {
    scheduled = false;
    const batches = [...pending.values()];
    pending.clear();
    for (const batch of batches) {
      const ids = [...batch.waiters.keys()];
      for (let start = 0; start < ids.length; start += BATCH_LIMIT) void lookUp(batch, ids.slice(start, start + BATCH_LIMIT));
    }
  }

  function find(scope: Scope, subscriberId: string): Promise<subscribersV1.Subscriber | undefined> {
    return copies.readThrough(scope.environmentId, subscriberId, () => lookUpShared(scope, subscriberId));
  }

  function lookUpShared(scope: Scope, subscriberId: string): Promise<subscribersV1.Subscriber | undefined> {
    const key = `${scope.organizationId}/${scope.environmentId}\n${subscriberId}`;
    const flight = flights.get(key);
    if (flight && copies.unchangedSince(flight.ticket, scope.environmentId, subscriberId)) return flight.found;
    const started: Flight = { ticket: copies.ticket(), found: lookUpSoon(scope, subscriberId) };
    flights.set(key, started);
    const landed = () => {
      if (flights.get(key) === started) flights.delete(key);
    };
    started.found.then(landed, landed);
    return started.found;
  }

  function lookUpSoon(scope: Scope, subscriberId: string): Promise<subscribersV1.Subscriber | undefined> {
    const key = `${scope.organizationId}/${scope.environmentId}`;
    let batch = pending.get(key);
    if (!batch) {
      batch = { scope, waiters: new Map() };
      pending.set(key, batch);
    }
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    const waiters = batch.waiters.get(subscriberId) ?? [];
    batch.waiters.set(subscriberId, waiters);
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  }

  return {
    find,

    async require(scope, subscriberId) {
      const subscriber = await find(scope, subscriberId);
      if (!subscriber) throw subscriberNotFound(subscriberId);
      return subscriber;
    },

    async findByIds(scope, ids) {
      const unique = [...new Set(ids)];
      const replies = [];
      for (let start = 0; start < unique.length; start += BATCH_LIMIT) {
        replies.push(client.batchGetSubscribers({ ids: unique.slice(start, start + BATCH_LIMIT) }, { headers: scopeHeaders(scope) }));
      }
      return (await Promise.all(replies)).flatMap((reply) => reply.subscribers);
    },

    async match(scope, { subscriberIds, emails, search }, limit) {
      const reply = await client.matchSubscribers(
        { subscriberIds: [...subscriberIds], emails: [...emails], ...(search !== undefined ? { search } : {}), limit },
        { headers: scopeHeaders(scope) },
      );
      return { ids: reply.ids, hasMore: reply.hasMore };
    },

    async ofMessages(scope, messages) {
      const wanted = new Map(messages.map((message) => [message.subscriberId, message.externalSubscriberId]));
      const found = await Promise.all(
        [...wanted].map(([id, subscriberId]) => find(scope, subscriberId).then((subscriber) => (subscriber?.id === id ? subscriber : undefined))),
      );
      return found.filter((subscriber) => subscriber !== undefined);
    },
  };
}
