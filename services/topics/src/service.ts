import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { commonV1, topicsV1, type subscribersV1 } from "@notify/proto";
import {
  alreadyExists,
  checkContextKeys,
  contextScopeOf,
  failedPrecondition,
  invalidField,
  keysetPage,
  notFound,
  objectId,
  readOffsetPage,
  scopeHeaders,
  scopeOf,
  subscriberNotFound,
  withTransaction,
  type Logger,
  type Pool,
  type Queryable,
  type Scope,
} from "@notify/runtime";
import { derivedIdentifier, identifierOf, subscriberOfDerived, subscriptionFromRow, summaryOf, topicFromRow, topicOfDerived } from "./mapping.js";
import * as store from "./store.js";
import { checkIdList, checkName, checkNewTopicKey, checkPreferences, checkRange } from "./validation.js";

/** Counts stop here: an exact count over millions of rows would cost more than the page itself. */
export const COUNT_CAP = 10_000;
/** Members shown on a topic; the rest are paged through ListSubscriptions. */
export const MEMBERS_SHOWN = 100;
/** Subscribers per add or remove call: one BatchGetSubscribers call resolves them all. */
export const MAX_SUBSCRIBERS_PER_CALL = 1000;
export const MAX_PAGE_SIZE = 100;

/** A cursor page's size (10 unless given, at most MAX_PAGE_SIZE); one cursor at most. */
function cursorPageSize(request: { limit: number; after?: string | undefined; before?: string | undefined }): number {
  const limit = request.limit === 0 ? 10 : request.limit;
  checkRange("limit", limit, 1, MAX_PAGE_SIZE);
  if (request.after !== undefined && request.before !== undefined) {
    throw invalidField("after", "after and before cannot be used together", request.after);
  }
  return limit;
}
export const MAX_MEMBER_PAGE = 1000;
export const MAX_EXCLUDED = 10_000;
export const MAX_TOPIC_KEYS = 100;

const ORDER_COLUMNS: Record<topicsV1.TopicOrder, store.TopicOrderColumn> = {
  [topicsV1.TopicOrder.UNSPECIFIED]: "id",
  [topicsV1.TopicOrder.CREATED_AT]: "created_at",
  [topicsV1.TopicOrder.UPDATED_AT]: "updated_at",
  [topicsV1.TopicOrder.KEY]: "key",
};

export interface TopicServiceDeps {
  pool: Pool;
  log: Logger;
  subscribers: Client<typeof subscribersV1.SubscriberService>;
}

const topicNotFound = (key: string) => notFound(`Topic with key ${key} not found`);
const subscriptionNotFound = (identifier: string) => notFound(`Subscription '${identifier}' was not found`);

/** What store.selectSubscriptionsByIdentifiers matches for these identifiers of the topic. */
const namesOf = (topicKey: string, identifiers: readonly string[]) => ({
  identifiers,
  derivedSubscriberIds: identifiers.map((identifier) => subscriberOfDerived(topicKey, identifier)),
});

/** A fan-out cursor: the topic being paged and the last internal subscriber id given out. */
const MEMBER_CURSOR = /^([0-9a-f]{24}):(.+)$/;

export function createTopicService({ pool, subscribers }: TopicServiceDeps): ServiceImpl<typeof topicsV1.TopicService> {
  /** Topics as replies show them: with their first members. */
  async function withMembers(db: Queryable, scope: Scope, rows: readonly store.TopicRow[]): Promise<topicsV1.Topic[]> {
    const members = rows.length
      ? await store.selectFirstMembers(
          db,
          scope.environmentId,
          rows.map((row) => row.id),
          MEMBERS_SHOWN,
        )
      : [];
    return rows.map((row) =>
      topicFromRow(
        row,
        members.filter((member) => member.topic_id === row.id).map((member) => member.external_subscriber_id),
      ),
    );
  }

  const oneWithMembers = async (db: Queryable, scope: Scope, row: store.TopicRow) => (await withMembers(db, scope, [row]))[0]!;

  /** The preferences of some subscriptions, by subscription id. */
  async function preferencesOf(db: Queryable, scope: Scope, rows: readonly store.SubscriptionRow[]): Promise<Map<string, store.PreferenceRow[]>> {
    const byId = new Map<string, store.PreferenceRow[]>();
    if (rows.length === 0) return byId;
    for (const preference of await store.selectPreferences(
      db,
      scope.environmentId,
      rows.map((row) => row.id),
    )) {
      const own = byId.get(preference.subscription_id);
      if (own) own.push(preference);
      else byId.set(preference.subscription_id, [preference]);
    }
    return byId;
  }

  /** One subscription as replies show it, with its preferences. */
  async function subscriptionWithPreferences(db: Queryable, scope: Scope, row: store.SubscriptionRow, topicKey: string, subscriber: subscribersV1.Subscriber) {
    return subscriptionFromRow(row, topicKey, summaryOf(subscriber), (await preferencesOf(db, scope, [row])).get(row.id));
  }

  /** The environment's subscribers among these external ids, in one call to the subscribers service. */
  async function lookUp(scope: Scope, context: HandlerContext, request: { subscriberIds?: string[]; ids?: string[] }) {
    if (!request.subscriberIds?.length && !request.ids?.length) return [];
    const reply = await subscribers.batchGetSubscribers(request, { headers: scopeHeaders(scope), signal: context.signal });
    return reply.subscribers;
  }

  return {
    async createTopic(request, context) {
      const scope = scopeOf(context);
      checkNewTopicKey(request.key);
      checkName(request.name);
      const row = await store.insertTopic(pool, scope.environmentId, {
        id: objectId(),
        organizationId: scope.organizationId,
        key: request.key,
        name: request.name,
      });
      if (!row) {
        throw alreadyExists(`Topic exists with key ${request.key} in the environment ${scope.environmentId} of the organization ${scope.organizationId}`);
      }
      return topicFromRow(row, []);
    },

    async upsertTopic(request, context) {
      const scope = scopeOf(context);
      checkNewTopicKey(request.key);
      if (request.name !== undefined) checkName(request.name);
      const inserted = await store.insertTopic(pool, scope.environmentId, {
        id: objectId(),
        organizationId: scope.organizationId,
        key: request.key,
        name: request.name ?? null,
      });
      if (inserted) return { topic: topicFromRow(inserted, []), created: true };
      if (request.failIfExists) throw alreadyExists(`Topic with key ${request.key} already exists`);
      const existing =
        request.name !== undefined
          ? await store.renameTopic(pool, scope.environmentId, request.key, request.name)
          : await store.selectTopic(pool, scope.environmentId, request.key);
      if (!existing) throw new ConnectError(`Topic with key ${request.key} was deleted meanwhile; retry`, Code.Aborted);
      return { topic: await oneWithMembers(pool, scope, existing), created: false };
    },

    async getTopic(request, context) {
      const scope = scopeOf(context);
      const row = await store.selectTopic(pool, scope.environmentId, request.key);
      if (!row) throw topicNotFound(request.key);
      return oneWithMembers(pool, scope, row);
    },

    async listTopics(request, context) {
      const scope = scopeOf(context);
      const pageSize = request.pageSize === 0 ? 10 : request.pageSize;
      checkRange("pageSize", pageSize, 1, MAX_PAGE_SIZE);
      checkRange("page", request.page, 0, 1_000_000);
      const filters = { key: request.key ?? null, name: request.name ?? null };
      const { rows, ...page } = await readOffsetPage(
        { page: request.page, limit: pageSize, countCap: COUNT_CAP },
        (offset) => store.selectTopicPage(pool, scope.environmentId, filters, offset, pageSize),
        (cap) => store.countTopics(pool, scope.environmentId, filters, cap),
      );
      return { topics: await withMembers(pool, scope, rows), ...page };
    },

    async searchTopics(request, context) {
      const scope = scopeOf(context);
      const limit = cursorPageSize(request);
      const orderBy = ORDER_COLUMNS[request.orderBy];
      if (orderBy === undefined) throw invalidField("orderBy", "orderBy must be one of _id, createdAt, updatedAt, key", request.orderBy);
      const descending = request.direction !== commonV1.SortDirection.ASC;
      const backwards = request.before !== undefined;
      const search = { key: request.key ?? null, name: request.name ?? null };
      const [fetched, totalCount] = await Promise.all([
        store.selectTopicSearchPage(pool, scope.environmentId, search, {
          orderBy,
          cursor: request.after ?? request.before,
          towardsLower: descending !== backwards,
          inclusive: request.includeCursor,
          limit,
        }),
        store.countTopicSearch(pool, scope.environmentId, search, COUNT_CAP),
      ]);
      const { page, cursors } = keysetPage(fetched, limit, request);
      return {
        topics: page.map((row) => topicFromRow(row, [])),
        ...cursors,
        totalCount,
        totalCountCapped: totalCount >= COUNT_CAP,
      };
    },

    async renameTopic(request, context) {
      const scope = scopeOf(context);
      checkName(request.name);
      const row = await store.renameTopic(pool, scope.environmentId, request.key, request.name);
      if (!row) throw topicNotFound(request.key);
      return oneWithMembers(pool, scope, row);
    },

    async deleteTopic(request, context) {
      const scope = scopeOf(context);
      await withTransaction(pool, async (tx) => {
        // Locked first, so no member can join between the check and the delete.
        const row = await store.selectTopicForUpdate(tx, scope.environmentId, request.key);
        if (!row) throw topicNotFound(request.key);
        if (!request.force && (await store.hasSubscriptions(tx, scope.environmentId, row.id))) {
          throw failedPrecondition(
            `Topic with key ${request.key} in the environment ${scope.environmentId} can't be deleted as it still has subscribers assigned`,
          );
        }
        await store.deleteTopic(tx, scope.environmentId, row.id);
      });
      return {};
    },

    async addSubscribers(request, context) {
      const scope = scopeOf(context);
      checkNewTopicKey(request.topicKey, "topicKey");
      const namedIds = request.named.map((entry) => entry.subscriberId);
      checkIdList("subscriberIds", [...request.subscriberIds, ...namedIds], MAX_SUBSCRIBERS_PER_CALL);
      checkIdList(
        "identifiers",
        request.named.map((entry) => entry.identifier),
        MAX_SUBSCRIBERS_PER_CALL,
      );
      for (const name of [request.name, request.topicNaming.value, ...request.named.map((entry) => entry.name)]) if (name !== undefined) checkName(name);
      const contextKeys = checkContextKeys(request.contextKeys);
      const preferences = checkPreferences(request.preferences);
      // A subscriber named twice keeps the first identifier; a named one is not also made bare.
      const named = new Map<string, topicsV1.NamedSubscription>();
      for (const entry of request.named) if (!named.has(entry.subscriberId)) named.set(entry.subscriberId, entry);
      const requested = [...new Set([...request.subscriberIds, ...namedIds])];
      const found = await lookUp(scope, context, { subscriberIds: requested });
      const foundIds = new Set(found.map((subscriber) => subscriber.subscriberId));
      const byId = new Map(found.map((subscriber) => [subscriber.id, subscriber]));
      const result = await withTransaction(pool, async (tx) => {
        const topic = await topicForMembers(tx, scope, request.topicKey, request.topicNaming);
        const refused = new Map<string, string>();
        const members: store.NewMember[] = [];
        for (const subscriber of found) {
          const entry = named.get(subscriber.subscriberId);
          const derived = derivedIdentifier(topic.key, subscriber.subscriberId, contextKeys);
          // Without contexts the derived identifier is derived when read; a scoped one is stored.
          const identifier = entry === undefined || entry.identifier === derived ? (contextKeys.length > 0 ? derived : null) : entry.identifier;
          // Another subscriber's derived identifier would name two subscriptions.
          if (identifier !== null && identifier !== derived && subscriberOfDerived(topic.key, identifier) !== null) {
            refused.set(subscriber.subscriberId, `Identifier '${identifier}' names another subscriber's subscription to topic '${topic.key}'`);
            continue;
          }
          members.push({
            id: objectId(),
            internalSubscriberId: subscriber.id,
            externalSubscriberId: subscriber.subscriberId,
            identifier,
            name: entry?.name ?? request.name ?? null,
          });
        }
        const made = await store.insertSubscriptions(tx, scope.environmentId, { id: topic.id, organizationId: scope.organizationId }, contextKeys, members);
        if (made.length > 0 && preferences.length > 0) await store.insertPreferences(tx, scope.environmentId, made, preferences);
        const rows = await store.selectSubscriptionsOfSubscribers(tx, scope.environmentId, topic.id, contextKeys, [...byId.keys()]);
        const rowOf = new Map(rows.map((row) => [row.external_subscriber_id, row]));
        for (const [subscriberId, entry] of named) {
          if (!foundIds.has(subscriberId) || refused.has(subscriberId)) continue;
          const row = rowOf.get(subscriberId);
          if (!row) refused.set(subscriberId, `Identifier '${entry.identifier}' names another subscription of topic '${topic.key}'`);
          else if (identifierOf(row, topic.key) !== entry.identifier) {
            refused.set(subscriberId, `Subscriber '${subscriberId}' is subscribed to topic '${topic.key}' already, as '${identifierOf(row, topic.key)}'`);
          }
        }
        return { topic: await oneWithMembers(tx, scope, topic), rows, refused, preferences: await preferencesOf(tx, scope, rows) };
      });
      const { refused } = result;
      return {
        topic: result.topic,
        succeeded: requested.filter((id) => foundIds.has(id) && !refused.has(id)),
        notFound: requested.filter((id) => !foundIds.has(id)),
        subscriptions: result.rows
          .filter((row) => !refused.has(row.external_subscriber_id))
          .map((row) => subscriptionFromRow(row, result.topic.key, summaryOf(byId.get(row.internal_subscriber_id)!), result.preferences.get(row.id))),
        conflicts: [...refused].map(([subscriberId, message]) => ({ subscriberId, identifier: named.get(subscriberId)!.identifier, message })),
      };
    },

    async removeSubscribers(request, context) {
      const scope = scopeOf(context);
      checkIdList("subscriberIds", [...request.subscriberIds, ...request.identifiers], MAX_SUBSCRIBERS_PER_CALL);
      const requested = [...new Set(request.subscriberIds)];
      const identifiers = [...new Set(request.identifiers)];
      const topic = await store.selectTopic(pool, scope.environmentId, request.topicKey);
      if (!topic) throw topicNotFound(request.topicKey);
      const found = await lookUp(scope, context, { subscriberIds: requested });
      // By external id: memberships left behind by a deleted subscriber of the same id go too.
      const deleted = requested.length ? await store.deleteSubscriptionsByExternalIds(pool, scope.environmentId, topic.id, requested) : [];
      const deletedNamed = identifiers.length
        ? await store.deleteSubscriptionsByIdentifiers(pool, scope.environmentId, topic.id, namesOf(topic.key, identifiers))
        : [];
      const namedMembers = await lookUp(scope, context, { ids: deletedNamed.map((row) => row.internal_subscriber_id) });
      const current = new Map([...found, ...namedMembers].map((subscriber) => [subscriber.id, subscriber]));
      const removed = [...deleted, ...deletedNamed].filter((row) => current.has(row.internal_subscriber_id));
      const removedIds = new Set(removed.map((row) => row.external_subscriber_id));
      const removedIdentifiers = new Set(deletedNamed.map((row) => identifierOf(row, topic.key)));
      const foundIds = new Set(found.map((subscriber) => subscriber.subscriberId));
      return {
        topic: await oneWithMembers(pool, scope, topic),
        removed: removed.map((row) => subscriptionFromRow(row, topic.key, summaryOf(current.get(row.internal_subscriber_id)!))),
        notFound: requested.filter((id) => !foundIds.has(id)),
        notSubscribed: requested.filter((id) => foundIds.has(id) && !removedIds.has(id)),
        unknownIdentifiers: identifiers.filter((identifier) => !removedIdentifiers.has(identifier)),
      };
    },

    async getSubscription(request, context) {
      const scope = scopeOf(context);
      if (request.identifier !== undefined) {
        const { row, topic, subscriber } = await namedSubscription(scope, context, request.topicKey, request.identifier);
        return subscriptionWithPreferences(pool, scope, row, topic.key, subscriber);
      }
      const contextKeys = checkContextKeys(request.contextKeys);
      const missing = () =>
        notFound(`Subscriber ${request.externalSubscriberId} not found for topic ${request.topicKey} in the environment ${scope.environmentId}`);
      const topic = await store.selectTopic(pool, scope.environmentId, request.topicKey);
      if (!topic) throw missing();
      const rows = await store.selectSubscriptionsByExternalId(pool, scope.environmentId, topic.id, contextKeys, request.externalSubscriberId);
      if (rows.length === 0) throw missing();
      // A membership counts only while its subscriber exists (a delete may have left one behind).
      const [subscriber] = await lookUp(scope, context, { subscriberIds: [request.externalSubscriberId] });
      const row = rows.find((candidate) => candidate.internal_subscriber_id === subscriber?.id);
      if (!row || !subscriber) throw missing();
      return subscriptionWithPreferences(pool, scope, row, topic.key, subscriber);
    },

    async updateSubscription(request, context) {
      const scope = scopeOf(context);
      if (request.name !== undefined) checkName(request.name);
      const preferences = checkPreferences(request.preferences);
      const named = await namedSubscription(scope, context, request.topicKey, request.identifier);
      const row = await withTransaction(pool, async (tx) => {
        if (request.replacePreferences) {
          await store.deletePreferences(tx, scope.environmentId, named.row.id);
          if (preferences.length > 0) await store.insertPreferences(tx, scope.environmentId, [named.row.id], preferences);
        }
        return request.name === undefined ? named.row : await store.renameSubscription(tx, scope.environmentId, named.row.id, request.name);
      });
      if (!row) throw subscriptionNotFound(request.identifier);
      return subscriptionWithPreferences(pool, scope, row, named.topic.key, named.subscriber);
    },

    async setSubscriptionPreference(request, context) {
      const scope = scopeOf(context);
      const contextKeys = checkContextKeys(request.contextKeys);
      const [preference] = checkPreferences([
        { workflowId: request.workflowId, enabled: true, ...(request.condition ? { condition: request.condition } : {}) },
      ]);
      const [subscriber] = await lookUp(scope, context, { subscriberIds: [request.subscriberId] });
      const rows = subscriber
        ? await store.selectSubscriberSubscriptionsByIdentifier(pool, scope.environmentId, request.subscriberId, contextKeys, {
            identifier: request.identifier,
            derivedTopicKey: topicOfDerived(request.subscriberId, request.identifier),
          })
        : [];
      const row = rows.find((candidate) => candidate.internal_subscriber_id === subscriber?.id);
      if (!row || !subscriber) throw subscriptionNotFound(request.identifier);
      await store.upsertPreference(pool, scope.environmentId, row.id, {
        workflowId: preference!.workflowId,
        enabled: request.enabled ?? null,
        condition: preference!.condition,
      });
      return subscriptionWithPreferences(pool, scope, row, row.topic_key, subscriber);
    },

    async listSubscriptions(request, context) {
      const scope = scopeOf(context);
      const limit = cursorPageSize(request);
      const topic = await store.selectTopic(pool, scope.environmentId, request.topicKey);
      if (!topic) throw topicNotFound(request.topicKey);
      const descending = request.direction !== commonV1.SortDirection.ASC;
      const backwards = request.before !== undefined;
      const filter = { externalSubscriberId: request.subscriberId ?? null, contextKeys: contextScopeOf(request) };
      const [fetched, totalCount] = await Promise.all([
        store.selectSubscriptionKeysetPage(pool, scope.environmentId, topic.id, {
          cursor: request.after ?? request.before,
          towardsLower: descending !== backwards,
          inclusive: request.includeCursor,
          limit,
          ...filter,
        }),
        store.countSubscriptions(pool, scope.environmentId, topic.id, filter, COUNT_CAP),
      ]);
      const { page, cursors } = keysetPage(fetched, limit, request);
      const [found, preferences] = await Promise.all([
        lookUp(scope, context, { ids: page.map((row) => row.internal_subscriber_id) }),
        preferencesOf(pool, scope, page),
      ]);
      const byId = new Map(found.map((subscriber) => [subscriber.id, summaryOf(subscriber)]));
      return {
        topic: await oneWithMembers(pool, scope, topic),
        // A membership counts only while its subscriber exists (a delete may have left one behind).
        subscriptions: page.flatMap((row) => {
          const subscriber = byId.get(row.internal_subscriber_id);
          return subscriber ? [subscriptionFromRow(row, topic.key, subscriber, preferences.get(row.id))] : [];
        }),
        ...cursors,
        totalCount,
        totalCountCapped: totalCount >= COUNT_CAP,
      };
    },

    async listSubscriberSubscriptions(request, context) {
      const scope = scopeOf(context);
      const limit = cursorPageSize(request);
      const [[subscriber], topic] = await Promise.all([
        lookUp(scope, context, { subscriberIds: [request.subscriberId] }),
        request.topicKey === undefined ? undefined : store.selectTopic(pool, scope.environmentId, request.topicKey),
      ]);
      if (!subscriber) throw subscriberNotFound(request.subscriberId);
      if (request.topicKey !== undefined && !topic) return { subscriptions: [], topics: [], totalCount: 0, totalCountCapped: false };
      const descending = request.direction !== commonV1.SortDirection.ASC;
      const backwards = request.before !== undefined;
      const filter = { topicId: topic?.id ?? null, contextKeys: contextScopeOf(request) };
      const [fetched, totalCount] = await Promise.all([
        store.selectSubscriberSubscriptionPage(pool, scope.environmentId, subscriber.id, {
          cursor: request.after ?? request.before,
          towardsLower: descending !== backwards,
          inclusive: request.includeCursor,
          limit,
          ...filter,
        }),
        store.countSubscriberSubscriptions(pool, scope.environmentId, subscriber.id, filter, COUNT_CAP),
      ]);
      const { page, cursors } = keysetPage(fetched, limit, request);
      const topics = page.length > 0 ? await store.selectTopicsByIds(pool, scope.environmentId, [...new Set(page.map((row) => row.topic_id))]) : [];
      const keyOf = new Map(topics.map((topic) => [topic.id, topic.key]));
      return {
        subscriptions: page.flatMap((row) => {
          const topicKey = keyOf.get(row.topic_id);
          return topicKey === undefined ? [] : [subscriptionFromRow(row, topicKey, summaryOf(subscriber))];
        }),
        topics: topics.map((topic) => topicFromRow(topic, [])),
        ...cursors,
        totalCount,
        totalCountCapped: totalCount >= COUNT_CAP,
      };
    },

    async pageMembers(request, context) {
      const scope = scopeOf(context);
      checkRange("limit", request.limit, 1, MAX_MEMBER_PAGE);
      checkIdList("topicKeys", request.topicKeys, MAX_TOPIC_KEYS);
      checkIdList("excludeSubscriberIds", request.excludeSubscriberIds, MAX_EXCLUDED);
      const cursor = request.after === undefined ? undefined : MEMBER_CURSOR.exec(request.after);
      if (cursor === null) throw invalidField("after", "after must be a cursor returned as next", request.after);
      const [, cursorTopicId, cursorSubscriberId] = cursor ?? [];
      const contextKeys = checkContextKeys(request.contextKeys);
      const topicRows = await store.selectTopicsByKeys(pool, scope.environmentId, [...new Set(request.topicKeys)]);
      const members: topicsV1.Member[] = [];
      for (const [index, topic] of topicRows.entries()) {
        // Topics are paged in id order; the cursor's topic resumes, earlier ones are done.
        if (cursorTopicId !== undefined && topic.id < cursorTopicId) continue;
        const page = await store.selectMemberPage(pool, scope.environmentId, topic.id, {
          after: topic.id === cursorTopicId ? cursorSubscriberId! : null,
          earlierTopicIds: topicRows.slice(0, index).map((earlier) => earlier.id),
          laterTopicIds: topicRows.slice(index + 1).map((later) => later.id),
          excludeExternalIds: request.excludeSubscriberIds,
          limit: request.limit - members.length,
          contextKeys,
          workflowId: request.workflowId,
        });
        for (const row of page) {
          members.push(
            create(topicsV1.MemberSchema, {
              internalSubscriberId: row.internal_subscriber_id,
              externalSubscriberId: row.external_subscriber_id,
              conditions: (row.conditions ?? []) as JsonObject[],
            }),
          );
        }
        if (members.length === request.limit) {
          return { members, next: `${topic.id}:${members.at(-1)!.internalSubscriberId}` };
        }
      }
      return { members };
    },

    async deleteSubscriberSubscriptions(request, context) {
      const scope = scopeOf(context);
      if (!request.internalSubscriberId) throw invalidField("internalSubscriberId", "internalSubscriberId is required");
      return { deleted: await store.deleteSubscriptionsOfSubscriber(pool, scope.environmentId, request.internalSubscriberId) };
    },
  };

  /** The subscription of the topic an identifier names, while its subscriber exists; NOT_FOUND otherwise. */
  async function namedSubscription(scope: Scope, context: HandlerContext, topicKey: string, identifier: string) {
    const topic = await store.selectTopic(pool, scope.environmentId, topicKey);
    if (!topic) throw subscriptionNotFound(identifier);
    const rows = await store.selectSubscriptionsByIdentifiers(pool, scope.environmentId, topic.id, namesOf(topic.key, [identifier]));
    // Rows left behind by a deleted subscriber share the derived identifier of a new one of the same id.
    const members = await lookUp(scope, context, { ids: rows.map((row) => row.internal_subscriber_id) });
    for (const row of rows) {
      const subscriber = members.find((member) => member.id === row.internal_subscriber_id);
      if (subscriber) return { row, topic, subscriber };
    }
    throw subscriptionNotFound(identifier);
  }

  /**
   * The topic new members join, created when missing and named as the request asks, and kept
   * from being deleted until the transaction ends.
   */
  async function topicForMembers(tx: Queryable, scope: Scope, key: string, naming: topicsV1.AddSubscribersRequest["topicNaming"]): Promise<store.TopicRow> {
    const existing = await store.selectTopicForShare(tx, scope.environmentId, key);
    if (existing) return naming.case === "topicName" ? ((await store.renameTopic(tx, scope.environmentId, key, naming.value)) ?? existing) : existing;
    const created = await store.insertTopic(tx, scope.environmentId, { id: objectId(), organizationId: scope.organizationId, key, name: naming.value ?? null });
    const topic = created ?? (await store.selectTopicForShare(tx, scope.environmentId, key));
    if (!topic) throw new ConnectError(`Topic with key ${key} was deleted meanwhile; retry`, Code.Aborted);
    return topic;
  }
}
