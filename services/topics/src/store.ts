import { escapeLike, type Queryable } from "@notify/runtime";

/** A row of topics.topics, as pg returns it. */
export interface TopicRow {
  id: string;
  organization_id: string;
  environment_id: string;
  key: string;
  name: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A row of topics.subscriptions. */
export interface SubscriptionRow {
  id: string;
  organization_id: string;
  environment_id: string;
  topic_id: string;
  internal_subscriber_id: string;
  external_subscriber_id: string;
  /** Null: the derived tk_<topic key>:si_<subscriber id> (only subscriptions without contexts). */
  identifier: string | null;
  name: string | null;
  /** The keys of its context scope, sorted. */
  context_keys: string[];
  created_at: Date;
  updated_at: Date;
}

/** A row of topics.subscription_preferences. */
export interface PreferenceRow {
  subscription_id: string;
  workflow_id: string;
  enabled: boolean;
  condition: Record<string, unknown> | null;
}

/** A preference as written. */
export interface NewPreference {
  workflowId: string;
  enabled: boolean;
  condition: Record<string, unknown> | null;
}

export interface MemberRow {
  topic_id: string;
  internal_subscriber_id: string;
  external_subscriber_id: string;
  /** The conditions of its preferences for the workflow paged, when it takes part only through conditional ones; null: it takes part. */
  conditions: Record<string, unknown>[] | null;
}

export interface NewMember {
  id: string;
  internalSubscriberId: string;
  externalSubscriberId: string;
  /** None: the derived one. */
  identifier?: string | null;
  name?: string | null;
}

/** Inserts unless the key is taken; undefined then. */
export async function insertTopic(
  db: Queryable,
  environmentId: string,
  topic: { id: string; organizationId: string; key: string; name: string | null },
): Promise<TopicRow | undefined> {
  const { rows } = await db.query<TopicRow>(
    `INSERT INTO topics.topics (environment_id, id, organization_id, key, name) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (environment_id, key) DO NOTHING
     RETURNING *`,
    [environmentId, topic.id, topic.organizationId, topic.key, topic.name],
  );
  return rows[0];
}

export async function selectTopic(db: Queryable, environmentId: string, key: string): Promise<TopicRow | undefined> {
  const { rows } = await db.query<TopicRow>("SELECT * FROM topics.topics WHERE environment_id = $1 AND key = $2", [environmentId, key]);
  return rows[0];
}

/** The topic, kept from being deleted until the transaction ends (renames still pass). */
export async function selectTopicForShare(db: Queryable, environmentId: string, key: string): Promise<TopicRow | undefined> {
  const { rows } = await db.query<TopicRow>("SELECT * FROM topics.topics WHERE environment_id = $1 AND key = $2 FOR KEY SHARE", [environmentId, key]);
  return rows[0];
}

/** The topic, locked against every change and every new member until the transaction ends. */
export async function selectTopicForUpdate(db: Queryable, environmentId: string, key: string): Promise<TopicRow | undefined> {
  const { rows } = await db.query<TopicRow>("SELECT * FROM topics.topics WHERE environment_id = $1 AND key = $2 FOR UPDATE", [environmentId, key]);
  return rows[0];
}

/** Topics by key in id order; unknown keys are absent. */
export async function selectTopicsByKeys(db: Queryable, environmentId: string, keys: readonly string[]): Promise<TopicRow[]> {
  const { rows } = await db.query<TopicRow>("SELECT * FROM topics.topics WHERE environment_id = $1 AND key = ANY($2) ORDER BY id", [environmentId, keys]);
  return rows;
}

export async function renameTopic(db: Queryable, environmentId: string, key: string, name: string): Promise<TopicRow | undefined> {
  const { rows } = await db.query<TopicRow>("UPDATE topics.topics SET name = $3, updated_at = now() WHERE environment_id = $1 AND key = $2 RETURNING *", [
    environmentId,
    key,
    name,
  ]);
  return rows[0];
}

/** Deletes the topic; its memberships go with it (ON DELETE CASCADE). */
export async function deleteTopic(db: Queryable, environmentId: string, id: string): Promise<void> {
  await db.query("DELETE FROM topics.topics WHERE environment_id = $1 AND id = $2", [environmentId, id]);
}

export interface TopicFilters {
  key: string | null;
  name: string | null;
}

/** One page in creation order; fetches one extra row so the caller knows whether more follow. */
export async function selectTopicPage(db: Queryable, environmentId: string, filters: TopicFilters, offset: number, limit: number): Promise<TopicRow[]> {
  const { rows } = await db.query<TopicRow>(
    `SELECT * FROM topics.topics
      WHERE environment_id = $1 AND ($2::text IS NULL OR key = $2) AND ($3::text IS NULL OR name = $3)
      ORDER BY id
      LIMIT $4 OFFSET $5`,
    [environmentId, filters.key, filters.name, limit + 1, offset],
  );
  return rows;
}

/** Counts at most `cap` topics, so the count costs the same however many there are. */
export async function countTopics(db: Queryable, environmentId: string, filters: TopicFilters, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (
       SELECT 1 FROM topics.topics
        WHERE environment_id = $1 AND ($2::text IS NULL OR key = $2) AND ($3::text IS NULL OR name = $3)
        LIMIT $4
     ) capped`,
    [environmentId, filters.key, filters.name, cap],
  );
  return rows[0]!.count;
}

/** What a topic search orders by: a column of topics.topics, with the id breaking ties. */
export type TopicOrderColumn = "id" | "created_at" | "updated_at" | "key";

export interface TopicSearch {
  /** Case-insensitive substrings. */
  key: string | null;
  name: string | null;
}

const SEARCH_CONDITIONS = `($2::text IS NULL OR key ILIKE '%' || $2 || '%') AND ($3::text IS NULL OR name ILIKE '%' || $3 || '%')`;

const searchValues = (search: TopicSearch) => [search.key === null ? null : escapeLike(search.key), search.name === null ? null : escapeLike(search.name)];

/**
 * Keyset page of the topics the search matches, after (or, with `towardsLower`, below) the
 * `cursor` topic in (`orderBy`, id) order; `inclusive` takes the cursor's topic too. A cursor
 * that names no topic of the environment matches nothing. Fetches limit + 1 rows so the caller
 * knows whether the page has a neighbour in that direction.
 */
export async function selectTopicSearchPage(
  db: Queryable,
  environmentId: string,
  search: TopicSearch,
  page: { orderBy: TopicOrderColumn; cursor: string | undefined; towardsLower: boolean; inclusive: boolean; limit: number },
): Promise<TopicRow[]> {
  // Only the fixed column names and operators above are ever interpolated.
  const column = page.orderBy;
  const operator = `${page.towardsLower ? "<" : ">"}${page.inclusive ? "=" : ""}`;
  const direction = page.towardsLower ? "DESC" : "ASC";
  const { rows } = await db.query<TopicRow>(
    `SELECT * FROM topics.topics
      WHERE environment_id = $1 AND ${SEARCH_CONDITIONS}
        AND ($4::text IS NULL OR (${column}, id) ${operator} (SELECT ${column}, id FROM topics.topics WHERE environment_id = $1 AND id = $4))
      ORDER BY ${column} ${direction}, id ${direction}
      LIMIT $5`,
    [environmentId, ...searchValues(search), page.cursor ?? null, page.limit + 1],
  );
  return rows;
}

/** Counts at most `cap` topics the search matches. */
export async function countTopicSearch(db: Queryable, environmentId: string, search: TopicSearch, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (SELECT 1 FROM topics.topics WHERE environment_id = $1 AND ${SEARCH_CONDITIONS} LIMIT $4) capped`,
    [environmentId, ...searchValues(search), cap],
  );
  return rows[0]!.count;
}

/** The first `perTopic` members to join each topic, in joining order. */
export async function selectFirstMembers(db: Queryable, environmentId: string, topicIds: readonly string[], perTopic: number): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(
    `SELECT topic.id AS topic_id, first.internal_subscriber_id, first.external_subscriber_id
       FROM unnest($2::text[]) AS topic (id)
       CROSS JOIN LATERAL (
         SELECT internal_subscriber_id, external_subscriber_id FROM topics.subscriptions
          WHERE environment_id = $1 AND topic_id = topic.id
          ORDER BY id
          LIMIT $3
       ) AS first`,
    [environmentId, topicIds, perTopic],
  );
  return rows;
}

export async function hasSubscriptions(db: Queryable, environmentId: string, topicId: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM topics.subscriptions WHERE environment_id = $1 AND topic_id = $2) AS found",
    [environmentId, topicId],
  );
  return rows[0]!.found;
}

/**
 * Adds the members not in the topic's context scope yet, in one statement; a member whose
 * identifier another subscription of the topic holds is not added either. Answers the ids of the
 * subscriptions made.
 */
export async function insertSubscriptions(
  db: Queryable,
  environmentId: string,
  topic: { id: string; organizationId: string },
  contextKeys: readonly string[],
  members: readonly NewMember[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO topics.subscriptions (environment_id, organization_id, topic_id, context_keys, id, internal_subscriber_id, external_subscriber_id, identifier, name)
     SELECT $1, $2, $3, $4, member.id, member.internal_subscriber_id, member.external_subscriber_id, member.identifier, member.name
       FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS member (id, internal_subscriber_id, external_subscriber_id, identifier, name)
     ON CONFLICT DO NOTHING
     RETURNING id`,
    [
      environmentId,
      topic.organizationId,
      topic.id,
      contextKeys,
      members.map((member) => member.id),
      members.map((member) => member.internalSubscriberId),
      members.map((member) => member.externalSubscriberId),
      members.map((member) => member.identifier ?? null),
      members.map((member) => member.name ?? null),
    ],
  );
  return rows.map((row) => row.id);
}

/** Gives each of the subscriptions the same preferences (it has none yet). */
export async function insertPreferences(
  db: Queryable,
  environmentId: string,
  subscriptionIds: readonly string[],
  preferences: readonly NewPreference[],
): Promise<void> {
  await db.query(
    `INSERT INTO topics.subscription_preferences (environment_id, subscription_id, workflow_id, enabled, condition)
     SELECT $1, subscription.id, preference.workflow_id, preference.enabled, preference.condition
       FROM unnest($2::text[]) AS subscription (id)
       CROSS JOIN unnest($3::text[], $4::boolean[], $5::jsonb[]) AS preference (workflow_id, enabled, condition)`,
    [
      environmentId,
      subscriptionIds,
      preferences.map((preference) => preference.workflowId),
      preferences.map((preference) => preference.enabled),
      preferences.map((preference) => (preference.condition === null ? null : JSON.stringify(preference.condition))),
    ],
  );
}

/** Removes every preference of a subscription. */
export async function deletePreferences(db: Queryable, environmentId: string, subscriptionId: string): Promise<void> {
  await db.query("DELETE FROM topics.subscription_preferences WHERE environment_id = $1 AND subscription_id = $2", [environmentId, subscriptionId]);
}

/** Sets one workflow's preference of a subscription: what is null stays as it was (a new one is enabled, without a condition). */
export async function upsertPreference(
  db: Queryable,
  environmentId: string,
  subscriptionId: string,
  preference: { workflowId: string; enabled: boolean | null; condition: Record<string, unknown> | null },
): Promise<void> {
  await db.query(
    `INSERT INTO topics.subscription_preferences (environment_id, subscription_id, workflow_id, enabled, condition)
     VALUES ($1, $2, $3, coalesce($4, true), $5)
     ON CONFLICT (subscription_id, workflow_id) DO UPDATE
       SET enabled = coalesce($4, subscription_preferences.enabled),
           condition = coalesce($5, subscription_preferences.condition),
           updated_at = now()`,
    [environmentId, subscriptionId, preference.workflowId, preference.enabled, preference.condition === null ? null : JSON.stringify(preference.condition)],
  );
}

/** The preferences of some subscriptions, in workflow order per subscription. */
export async function selectPreferences(db: Queryable, environmentId: string, subscriptionIds: readonly string[]): Promise<PreferenceRow[]> {
  const { rows } = await db.query<PreferenceRow>(
    `SELECT subscription_id, workflow_id, enabled, condition FROM topics.subscription_preferences
      WHERE environment_id = $1 AND subscription_id = ANY($2)
      ORDER BY subscription_id, workflow_id`,
    [environmentId, subscriptionIds],
  );
  return rows;
}

/**
 * Which subscriptions of the topic some identifiers name: a stored identifier, or the derived one
 * of a subscription that has none (`derivedSubscriberIds[i]` is the subscriber id `identifiers[i]`
 * derives from, null when it has not the derived form).
 */
const NAMED_BY = `(identifier = ANY($3) OR (identifier IS NULL AND external_subscriber_id = ANY($4)))`;

export async function selectSubscriptionsByIdentifiers(
  db: Queryable,
  environmentId: string,
  topicId: string,
  names: { identifiers: readonly string[]; derivedSubscriberIds: readonly (string | null)[] },
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(`SELECT * FROM topics.subscriptions WHERE environment_id = $1 AND topic_id = $2 AND ${NAMED_BY}`, [
    environmentId,
    topicId,
    names.identifiers,
    names.derivedSubscriberIds,
  ]);
  return rows;
}

export async function deleteSubscriptionsByIdentifiers(
  db: Queryable,
  environmentId: string,
  topicId: string,
  names: { identifiers: readonly string[]; derivedSubscriberIds: readonly (string | null)[] },
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(`DELETE FROM topics.subscriptions WHERE environment_id = $1 AND topic_id = $2 AND ${NAMED_BY} RETURNING *`, [
    environmentId,
    topicId,
    names.identifiers,
    names.derivedSubscriberIds,
  ]);
  return rows;
}

/** Sets the name of one subscription (null: none). */
export async function renameSubscription(db: Queryable, environmentId: string, id: string, name: string | null): Promise<SubscriptionRow | undefined> {
  const { rows } = await db.query<SubscriptionRow>(
    "UPDATE topics.subscriptions SET name = $3, updated_at = now() WHERE environment_id = $1 AND id = $2 RETURNING *",
    [environmentId, id, name],
  );
  return rows[0];
}

/** The subscriptions of these subscribers in one context scope of the topic. */
export async function selectSubscriptionsOfSubscribers(
  db: Queryable,
  environmentId: string,
  topicId: string,
  contextKeys: readonly string[],
  internalSubscriberIds: readonly string[],
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(
    `SELECT * FROM topics.subscriptions
      WHERE environment_id = $1 AND topic_id = $2 AND context_keys = $3 AND internal_subscriber_id = ANY($4)
      ORDER BY id`,
    [environmentId, topicId, contextKeys, internalSubscriberIds],
  );
  return rows;
}

/** The topic's memberships recorded for an external subscriber id in one context scope (more than one only if stale). */
export async function selectSubscriptionsByExternalId(
  db: Queryable,
  environmentId: string,
  topicId: string,
  contextKeys: readonly string[],
  externalSubscriberId: string,
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(
    "SELECT * FROM topics.subscriptions WHERE environment_id = $1 AND topic_id = $2 AND context_keys = $3 AND external_subscriber_id = $4",
    [environmentId, topicId, contextKeys, externalSubscriberId],
  );
  return rows;
}

/**
 * A subscriber's subscriptions (by external id) in one context scope, in any topic, with their
 * topic's key: those stored with `names.identifier`, and the one without a stored identifier in
 * the topic `names.derivedTopicKey` (the topic whose derived identifier it is, if any).
 */
export async function selectSubscriberSubscriptionsByIdentifier(
  db: Queryable,
  environmentId: string,
  externalSubscriberId: string,
  contextKeys: readonly string[],
  names: { identifier: string; derivedTopicKey: string | null },
): Promise<(SubscriptionRow & { topic_key: string })[]> {
  const { rows } = await db.query<SubscriptionRow & { topic_key: string }>(
    `SELECT subscription.*, topic.key AS topic_key
       FROM topics.subscriptions AS subscription JOIN topics.topics AS topic ON topic.id = subscription.topic_id
      WHERE subscription.environment_id = $1 AND subscription.external_subscriber_id = $2 AND subscription.context_keys = $3
        AND (subscription.identifier = $4 OR (subscription.identifier IS NULL AND topic.key = $5))
      ORDER BY subscription.id`,
    [environmentId, externalSubscriberId, contextKeys, names.identifier, names.derivedTopicKey],
  );
  return rows;
}

/** Removes the memberships of these external subscriber ids, stale ones included. */
export async function deleteSubscriptionsByExternalIds(
  db: Queryable,
  environmentId: string,
  topicId: string,
  externalSubscriberIds: readonly string[],
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(
    "DELETE FROM topics.subscriptions WHERE environment_id = $1 AND topic_id = $2 AND external_subscriber_id = ANY($3) RETURNING *",
    [environmentId, topicId, externalSubscriberIds],
  );
  return rows;
}

export async function deleteSubscriptionsOfSubscriber(db: Queryable, environmentId: string, internalSubscriberId: string): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM topics.subscriptions WHERE environment_id = $1 AND internal_subscriber_id = $2", [
    environmentId,
    internalSubscriberId,
  ]);
  return rowCount ?? 0;
}

/**
 * Keyset page of a topic's memberships after (or, with `towardsLower`, below) the `cursor` id.
 * Fetches limit + 1 rows so the caller knows whether the page has a neighbour in that direction.
 */
export async function selectSubscriptionKeysetPage(
  db: Queryable,
  environmentId: string,
  topicId: string,
  query: {
    cursor: string | undefined;
    towardsLower: boolean;
    inclusive: boolean;
    limit: number;
    externalSubscriberId: string | null;
    contextKeys: readonly string[] | null;
  },
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(
    `SELECT * FROM topics.subscriptions
      WHERE environment_id = $1 AND topic_id = $2
        AND ($3::text IS NULL OR (CASE WHEN $4 THEN id < $3 ELSE id > $3 END) OR ($8 AND id = $3))
        AND ($6::text IS NULL OR external_subscriber_id = $6)
        AND ($7::text[] IS NULL OR context_keys = $7)
      ORDER BY CASE WHEN $4 THEN id END DESC, id ASC
      LIMIT $5`,
    [environmentId, topicId, query.cursor ?? null, query.towardsLower, query.limit + 1, query.externalSubscriberId, query.contextKeys, query.inclusive],
  );
  return rows;
}

/** Which of a subscriber's memberships a list shows: of one topic, of exactly these contexts (null: any). */
export interface SubscriberSubscriptionFilter {
  topicId: string | null;
  contextKeys: readonly string[] | null;
}

/** One keyset page (plus one row) of a subscriber's memberships across topics, in id order. */
export async function selectSubscriberSubscriptionPage(
  db: Queryable,
  environmentId: string,
  internalSubscriberId: string,
  query: { cursor: string | undefined; towardsLower: boolean; inclusive: boolean; limit: number } & SubscriberSubscriptionFilter,
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(
    `SELECT * FROM topics.subscriptions
      WHERE environment_id = $1 AND internal_subscriber_id = $2
        AND ($3::text IS NULL OR (CASE WHEN $4 THEN id < $3 ELSE id > $3 END) OR ($8 AND id = $3))
        AND ($6::text IS NULL OR topic_id = $6)
        AND ($7::text[] IS NULL OR context_keys = $7)
      ORDER BY CASE WHEN $4 THEN id END DESC, id ASC
      LIMIT $5`,
    [environmentId, internalSubscriberId, query.cursor ?? null, query.towardsLower, query.limit + 1, query.topicId, query.contextKeys, query.inclusive],
  );
  return rows;
}

/** Counts at most `cap` memberships of a subscriber. */
export async function countSubscriberSubscriptions(
  db: Queryable,
  environmentId: string,
  internalSubscriberId: string,
  filter: SubscriberSubscriptionFilter,
  cap: number,
): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (
       SELECT 1 FROM topics.subscriptions
        WHERE environment_id = $1 AND internal_subscriber_id = $2 AND ($4::text IS NULL OR topic_id = $4)
          AND ($5::text[] IS NULL OR context_keys = $5)
        LIMIT $3
     ) capped`,
    [environmentId, internalSubscriberId, cap, filter.topicId, filter.contextKeys],
  );
  return rows[0]!.count;
}

export async function selectTopicsByIds(db: Queryable, environmentId: string, ids: readonly string[]): Promise<TopicRow[]> {
  const { rows } = await db.query<TopicRow>("SELECT * FROM topics.topics WHERE environment_id = $1 AND id = ANY($2) ORDER BY id", [environmentId, ids]);
  return rows;
}

/** Counts at most `cap` memberships of a topic. */
export async function countSubscriptions(
  db: Queryable,
  environmentId: string,
  topicId: string,
  filter: { externalSubscriberId: string | null; contextKeys: readonly string[] | null },
  cap: number,
): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (
       SELECT 1 FROM topics.subscriptions
        WHERE environment_id = $1 AND topic_id = $2 AND ($3::text IS NULL OR external_subscriber_id = $3)
          AND ($5::text[] IS NULL OR context_keys = $5)
        LIMIT $4
     ) capped`,
    [environmentId, topicId, filter.externalSubscriberId, cap, filter.contextKeys],
  );
  return rows[0]!.count;
}

/** A subscription's preference for the workflow paged lets it take part: none, enabled, or a condition to answer. */
const TAKES_PART = (subscription: string) => `NOT EXISTS (
  SELECT 1 FROM topics.subscription_preferences AS off
   WHERE off.subscription_id = ${subscription}.id AND off.workflow_id = $7 AND NOT off.enabled AND off.condition IS NULL)`;

/**
 * Up to `limit` members of one topic's context scope in internal-id order after `after`, whose
 * preference for the workflow lets them take part, leaving out the excluded external ids and
 * anyone who takes part through one of `earlierTopicIds` (they were paged with that topic
 * already). A member whose preference here has a condition comes with it, and with those of its
 * subscriptions to `laterTopicIds`, unless one of those takes part without one. Walks the
 * (topic_id, context_keys, internal_subscriber_id) index, so a page costs the same at the start
 * of a topic of millions as at its end.
 */
export async function selectMemberPage(
  db: Queryable,
  environmentId: string,
  topicId: string,
  page: {
    after: string | null;
    earlierTopicIds: readonly string[];
    laterTopicIds: readonly string[];
    excludeExternalIds: readonly string[];
    limit: number;
    contextKeys: readonly string[];
    workflowId: string;
  },
): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(
    `SELECT member.topic_id, member.internal_subscriber_id, member.external_subscriber_id,
            CASE WHEN preference.condition IS NULL OR elsewhere.unconditional THEN NULL
                 ELSE jsonb_build_array(preference.condition) || coalesce(elsewhere.conditions, '[]') END AS conditions
       FROM topics.subscriptions AS member
       LEFT JOIN topics.subscription_preferences AS preference ON preference.subscription_id = member.id AND preference.workflow_id = $7
      CROSS JOIN LATERAL (
        SELECT bool_or(later_preference.condition IS NULL) AS unconditional, jsonb_agg(later_preference.condition) AS conditions
          FROM topics.subscriptions AS later
          LEFT JOIN topics.subscription_preferences AS later_preference
            ON later_preference.subscription_id = later.id AND later_preference.workflow_id = $7
         WHERE later.topic_id = ANY($9::text[]) AND later.context_keys = $8
           AND later.internal_subscriber_id = member.internal_subscriber_id AND ${TAKES_PART("later")}
      ) AS elsewhere
      WHERE member.environment_id = $1 AND member.topic_id = $2 AND member.context_keys = $8
        AND ($3::text IS NULL OR member.internal_subscriber_id > $3)
        AND member.external_subscriber_id <> ALL($4::text[])
        AND ${TAKES_PART("member")}
        AND NOT EXISTS (
          SELECT 1 FROM topics.subscriptions AS earlier
           WHERE earlier.topic_id = ANY($5::text[]) AND earlier.context_keys = $8
             AND earlier.internal_subscriber_id = member.internal_subscriber_id AND ${TAKES_PART("earlier")})
      ORDER BY member.internal_subscriber_id
      LIMIT $6`,
    [environmentId, topicId, page.after, page.excludeExternalIds, page.earlierTopicIds, page.limit, page.workflowId, page.contextKeys, page.laterTopicIds],
  );
  return rows;
}
