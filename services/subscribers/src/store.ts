import { CHANNELS, escapeLike, type ChannelName, type Queryable } from "@notify/runtime";

/** A row of subscribers.subscribers, as pg returns it. */
export interface SubscriberRow {
  id: string;
  organization_id: string;
  environment_id: string;
  subscriber_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  avatar: string | null;
  locale: string | null;
  timezone: string | null;
  data: Record<string, unknown> | null;
  channels: StoredChannel[];
  is_online: boolean | null;
  last_online_at: Date | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** A subscriber channel as the channels column holds it. */
export interface StoredChannel {
  providerId: string;
  integrationId: string;
  /** The identifier the write named, when it named one. */
  integrationIdentifier?: string;
  credentials: StoredCredentials;
}

export interface StoredCredentials {
  webhookUrl?: string;
  channel?: string;
  deviceTokens: string[];
  alertUid?: string;
  title?: string;
  imageUrl?: string;
  state?: string;
  externalUrl?: string;
}

/** The columns a client can write. */
export type ProfileColumns = Pick<SubscriberRow, "first_name" | "last_name" | "email" | "phone" | "avatar" | "locale" | "timezone" | "data" | "is_online">;

export const PROFILE_COLUMNS = [
  "first_name",
  "last_name",
  "email",
  "phone",
  "avatar",
  "locale",
  "timezone",
  "data",
  "is_online",
] as const satisfies readonly (keyof ProfileColumns)[];

const profileValues = (profile: ProfileColumns) => PROFILE_COLUMNS.map((column) => profile[column]);

const COLUMN_TYPES: Record<(typeof PROFILE_COLUMNS)[number], string> = {
  first_name: "text",
  last_name: "text",
  email: "text",
  phone: "text",
  avatar: "text",
  locale: "text",
  timezone: "text",
  data: "jsonb",
  is_online: "boolean",
};

/** `$first::text[], …` for unnest over the profile columns, starting at parameter `first`. */
const profileArrays = (first: number) => PROFILE_COLUMNS.map((column, index) => `$${first + index}::${COLUMN_TYPES[column]}[]`).join(", ");

/** One array per profile column, for unnest. */
const profileColumnsOf = (profiles: readonly ProfileColumns[]) =>
  PROFILE_COLUMNS.map((column) => profiles.map((profile) => (column === "data" && profile.data ? JSON.stringify(profile.data) : profile[column])));

export async function selectSubscriber(db: Queryable, environmentId: string, subscriberId: string): Promise<SubscriberRow | undefined> {
  const { rows } = await db.query<SubscriberRow>("SELECT * FROM subscribers.subscribers WHERE environment_id = $1 AND subscriber_id = $2", [
    environmentId,
    subscriberId,
  ]);
  return rows[0];
}

export async function selectSubscriberForUpdate(db: Queryable, environmentId: string, subscriberId: string): Promise<SubscriberRow | undefined> {
  const { rows } = await db.query<SubscriberRow>("SELECT * FROM subscribers.subscribers WHERE environment_id = $1 AND subscriber_id = $2 FOR UPDATE", [
    environmentId,
    subscriberId,
  ]);
  return rows[0];
}

export async function selectSubscribersByIds(
  db: Queryable,
  environmentId: string,
  subscriberIds: readonly string[],
  ids: readonly string[],
): Promise<SubscriberRow[]> {
  const { rows } = await db.query<SubscriberRow>(
    "SELECT * FROM subscribers.subscribers WHERE environment_id = $1 AND (subscriber_id = ANY($2) OR id = ANY($3))",
    [environmentId, subscriberIds, ids],
  );
  return rows;
}

/** What a message is composed from: a subscriber without its scope, version and timestamps. */
export type RecipientRow = Pick<SubscriberRow, "id" | "subscriber_id" | "channels" | keyof ProfileColumns>;

const RECIPIENT_COLUMNS = `id, subscriber_id, channels, ${PROFILE_COLUMNS.join(", ")}`;

/** The environment's subscribers after `after` (from the first when undefined), in id order (the (environment_id, id) index); one more than `limit`, to tell whether more follow. */
export async function selectRecipientPage(db: Queryable, environmentId: string, after: string | undefined, limit: number): Promise<RecipientRow[]> {
  const { rows } = await db.query<RecipientRow>(
    `SELECT ${RECIPIENT_COLUMNS} FROM subscribers.subscribers
      WHERE environment_id = $1 AND ($2::text IS NULL OR id > $2)
      ORDER BY id
      LIMIT $3`,
    [environmentId, after ?? null, limit + 1],
  );
  return rows;
}

export async function selectRecipientsByIds(db: Queryable, environmentId: string, ids: readonly string[]): Promise<RecipientRow[]> {
  const { rows } = await db.query<RecipientRow>(`SELECT ${RECIPIENT_COLUMNS} FROM subscribers.subscribers WHERE environment_id = $1 AND id = ANY($2)`, [
    environmentId,
    ids,
  ]);
  return rows;
}

/** Creates the subscribers that do not exist yet, with the given profiles, in one statement. */
export async function insertMissingSubscribers(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  rows: readonly { id: string; subscriberId: string; profile: ProfileColumns }[],
): Promise<void> {
  await db.query(
    `INSERT INTO subscribers.subscribers (environment_id, organization_id, id, subscriber_id, ${PROFILE_COLUMNS.join(", ")})
     SELECT $1, $2, v.* FROM unnest($3::text[], $4::text[], ${profileArrays(5)})
       AS v(id, subscriber_id, ${PROFILE_COLUMNS.join(", ")})
     ON CONFLICT (environment_id, subscriber_id) DO NOTHING`,
    [environmentId, organizationId, rows.map((row) => row.id), rows.map((row) => row.subscriberId), ...profileColumnsOf(rows.map((row) => row.profile))],
  );
}

/**
 * Applies the non-null fields of each profile to the existing subscriber, bumping the version
 * only of rows that actually change, in one statement.
 */
export async function applyProfiles(db: Queryable, environmentId: string, rows: readonly { subscriberId: string; profile: ProfileColumns }[]): Promise<void> {
  const merged = PROFILE_COLUMNS.map((column) => `COALESCE(v.${column}, s.${column})`);
  await db.query(
    `UPDATE subscribers.subscribers s
        SET ${PROFILE_COLUMNS.map((column, index) => `${column} = ${merged[index]}`).join(", ")},
            version = s.version + 1, updated_at = now()
       FROM unnest($2::text[], ${profileArrays(3)}) AS v(subscriber_id, ${PROFILE_COLUMNS.join(", ")})
      WHERE s.environment_id = $1 AND s.subscriber_id = v.subscriber_id
        AND (${PROFILE_COLUMNS.map((column) => `s.${column}`).join(", ")}) IS DISTINCT FROM (${merged.join(", ")})`,
    [environmentId, rows.map((row) => row.subscriberId), ...profileColumnsOf(rows.map((row) => row.profile))],
  );
}

/** Inserts unless the subscriber id is taken; undefined then. */
export async function insertSubscriber(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; subscriberId: string; profile: ProfileColumns },
): Promise<SubscriberRow | undefined> {
  const { rows } = await db.query<SubscriberRow>(
    `INSERT INTO subscribers.subscribers
       (environment_id, id, organization_id, subscriber_id, ${PROFILE_COLUMNS.join(", ")})
     VALUES ($1, $2, $3, $4, ${PROFILE_COLUMNS.map((_, index) => `$${index + 5}`).join(", ")})
     ON CONFLICT (environment_id, subscriber_id) DO NOTHING
     RETURNING *`,
    [environmentId, row.id, row.organizationId, row.subscriberId, ...profileValues(row.profile)],
  );
  return rows[0];
}

/** The parameter of `updateSubscriberProfile` that holds the new is_online. */
const IS_ONLINE_PARAMETER = `$${PROFILE_COLUMNS.indexOf("is_online") + 3}`;

/** Writes the whole profile and bumps the version; a subscriber going offline was last online now (Novu's lastOnlineAt). */
export async function updateSubscriberProfile(db: Queryable, environmentId: string, id: string, profile: ProfileColumns): Promise<SubscriberRow> {
  const { rows } = await db.query<SubscriberRow>(
    `UPDATE subscribers.subscribers
        SET ${PROFILE_COLUMNS.map((column, index) => `${column} = $${index + 3}`).join(", ")},
            last_online_at = CASE WHEN is_online IS DISTINCT FROM false AND ${IS_ONLINE_PARAMETER}::boolean IS false THEN now() ELSE last_online_at END,
            version = version + 1, updated_at = now()
      WHERE environment_id = $1 AND id = $2
      RETURNING *`,
    [environmentId, id, ...profileValues(profile)],
  );
  return rows[0]!;
}

/**
 * Sets the Inbox presence of subscribers not already in that state; going offline, they were last
 * online now. Answers how many changed.
 */
export async function updateOnlineStatus(db: Queryable, environmentId: string, subscriberIds: readonly string[], isOnline: boolean): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE subscribers.subscribers
        SET is_online = $3, last_online_at = CASE WHEN $3 THEN last_online_at ELSE now() END, version = version + 1, updated_at = now()
      WHERE environment_id = $1 AND subscriber_id = ANY ($2::text[]) AND is_online IS DISTINCT FROM $3`,
    [environmentId, subscriberIds, isOnline],
  );
  return rowCount ?? 0;
}

export async function deleteSubscriber(db: Queryable, environmentId: string, subscriberId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>("DELETE FROM subscribers.subscribers WHERE environment_id = $1 AND subscriber_id = $2 RETURNING id", [
    environmentId,
    subscriberId,
  ]);
  return rows[0]?.id;
}

/** One page in creation order; fetches one extra row so the caller knows whether more follow. */
export async function selectSubscriberPage(db: Queryable, environmentId: string, offset: number, limit: number): Promise<SubscriberRow[]> {
  const { rows } = await db.query<SubscriberRow>("SELECT * FROM subscribers.subscribers WHERE environment_id = $1 ORDER BY id LIMIT $2 OFFSET $3", [
    environmentId,
    limit + 1,
    offset,
  ]);
  return rows;
}

export interface SearchFilters {
  /** Case-insensitive match on a part of the email. */
  email?: string;
  /** Case-insensitive match on a part of the phone. */
  phone?: string;
  subscriberId?: string;
  /** Case-insensitive match on the first name, last name or both. */
  name?: string;
}

// As Novu searches: email and phone by case-insensitive substring, the subscriber id exactly.
const FILTER_CONDITIONS = (first: number) => `
        AND ($${first}::text IS NULL OR email ILIKE '%' || $${first} || '%')
        AND ($${first + 1}::text IS NULL OR phone ILIKE '%' || $${first + 1} || '%')
        AND ($${first + 2}::text IS NULL OR subscriber_id = $${first + 2})
        AND ($${first + 3}::text IS NULL OR concat_ws(' ', first_name, last_name) ILIKE '%' || $${first + 3} || '%')`;

/**
 * A cursor must name a subscriber of the environment: as Novu answers an unknown cursor, its
 * page and its count are empty (an unknown id still sorts among the ids, so it would page).
 */
const CURSOR_KNOWN = (environment: number, cursor: number) =>
  `($${cursor}::text IS NULL OR EXISTS (SELECT 1 FROM subscribers.subscribers c WHERE c.environment_id = $${environment} AND c.id = $${cursor}))`;

const filterValues = (filters: SearchFilters) => [
  filters.email === undefined ? null : escapeLike(filters.email),
  filters.phone === undefined ? null : escapeLike(filters.phone),
  filters.subscriberId ?? null,
  filters.name === undefined ? null : escapeLike(filters.name),
];

/**
 * Keyset page after (or, with `towardsLower`, below) the `cursor` id. Fetches limit + 1 rows
 * so the caller knows whether the page has a neighbour in that direction.
 */
export async function selectSubscriberKeysetPage(
  db: Queryable,
  environmentId: string,
  query: { cursor: string | undefined; towardsLower: boolean; inclusive: boolean; byUpdatedAt: boolean; limit: number; filters: SearchFilters },
): Promise<SubscriberRow[]> {
  // The direction is spelled out (not a CASE) so the planner walks the (environment_id, id) or
  // (environment_id, updated_at, id) index; only these fixed operators and names are interpolated.
  const [comparison, order] = query.towardsLower ? ["<", "DESC"] : [">", "ASC"];
  const operator = `${comparison}${query.inclusive ? "=" : ""}`;
  const after = query.byUpdatedAt
    ? `(updated_at, id) ${operator} (SELECT c.updated_at, c.id FROM subscribers.subscribers c WHERE c.environment_id = $1 AND c.id = $2)`
    : `id ${operator} $2`;
  const { rows } = await db.query<SubscriberRow>(
    `SELECT * FROM subscribers.subscribers
      WHERE environment_id = $1
        AND ($2::text IS NULL OR ${after}) AND ${CURSOR_KNOWN(1, 2)}${FILTER_CONDITIONS(4)}
      ORDER BY ${query.byUpdatedAt ? `updated_at ${order}, ` : ""}id ${order}
      LIMIT $3`,
    [environmentId, query.cursor ?? null, query.limit + 1, ...filterValues(query.filters)],
  );
  return rows;
}

/**
 * Counts at most `cap` rows, so the count costs the same for ten subscribers or ten million; none
 * when a `cursor` is given that names no subscriber of the environment.
 */
export async function countSubscribers(db: Queryable, environmentId: string, cap: number, filters: SearchFilters = {}, cursor?: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (
       SELECT 1 FROM subscribers.subscribers WHERE environment_id = $1 AND ${CURSOR_KNOWN(1, 7)}${FILTER_CONDITIONS(3)} LIMIT $2
     ) capped`,
    [environmentId, cap, ...filterValues(filters), cursor ?? null],
  );
  return rows[0]!.count;
}

/** Locks the environment's subscribers among these external ids, in id order so concurrent batches cannot deadlock. */
export interface SubscriberMatch {
  subscriberIds: readonly string[];
  emails: readonly string[];
  /** An email containing it (whatever the case) or a subscriberId equal to it. */
  search: string | null;
}

/** The ids of up to `limit` subscribers that match any part of `match`. */
export async function selectMatchingSubscriberIds(db: Queryable, environmentId: string, match: SubscriberMatch, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM subscribers.subscribers
      WHERE environment_id = $1
        AND (subscriber_id = ANY($2) OR email = ANY($3)
             OR ($4::text IS NOT NULL AND (subscriber_id = $4 OR email ILIKE '%' || $5 || '%')))
      LIMIT $6`,
    [environmentId, match.subscriberIds, match.emails, match.search, match.search === null ? null : escapeLike(match.search), limit],
  );
  return rows.map((row) => row.id);
}

export async function selectSubscribersForUpdate(db: Queryable, environmentId: string, subscriberIds: readonly string[]): Promise<SubscriberRow[]> {
  const { rows } = await db.query<SubscriberRow>(
    "SELECT * FROM subscribers.subscribers WHERE environment_id = $1 AND subscriber_id = ANY($2) ORDER BY id FOR UPDATE",
    [environmentId, subscriberIds],
  );
  return rows;
}

/** Writes the channels of many subscribers and bumps their versions, in one statement. */
export async function updateChannels(
  db: Queryable,
  environmentId: string,
  changes: readonly { id: string; channels: readonly StoredChannel[] }[],
): Promise<SubscriberRow[]> {
  const { rows } = await db.query<SubscriberRow>(
    `UPDATE subscribers.subscribers s
        SET channels = v.channels, version = s.version + 1, updated_at = now()
       FROM unnest($2::text[], $3::jsonb[]) AS v(id, channels)
      WHERE s.environment_id = $1 AND s.id = v.id
      RETURNING s.*`,
    [environmentId, changes.map((change) => change.id), changes.map((change) => JSON.stringify(change.channels))],
  );
  return rows;
}

/** A row of subscribers.subscriber_preferences; a null channel is "not set at this layer". */
export interface PreferenceRow {
  subscriber_id: string;
  /** Null for the global row. */
  workflow_id: string | null;
  email: boolean | null;
  sms: boolean | null;
  in_app: boolean | null;
  chat: boolean | null;
  push: boolean | null;
  schedule: unknown;
}

/** The channels a preference row has a column for: every channel. */
export const PREFERENCE_CHANNELS = CHANNELS;

export type PreferenceChannel = ChannelName;

/** A value per channel: a choice to store, or for clearing, whether to clear it; null leaves it. */
export type PerChannel<T> = Record<PreferenceChannel, T | null>;

const PREFERENCE_COLUMNS = "subscriber_id, workflow_id, email, sms, in_app, chat, push, schedule";

/** Every preference row of one subscriber in one context scope (global and per workflow). */
export async function selectPreferences(db: Queryable, environmentId: string, subscriberId: string, contextKeys: readonly string[]): Promise<PreferenceRow[]> {
  const { rows } = await db.query<PreferenceRow>(
    `SELECT ${PREFERENCE_COLUMNS} FROM subscribers.subscriber_preferences WHERE environment_id = $1 AND subscriber_id = $2 AND context_keys = $3`,
    [environmentId, subscriberId, contextKeys],
  );
  return rows;
}

/** The global rows and the rows of one workflow of many subscribers, in one context scope. */
export async function selectWorkflowPreferences(
  db: Queryable,
  environmentId: string,
  subscriberIds: readonly string[],
  workflowId: string,
  contextKeys: readonly string[],
): Promise<PreferenceRow[]> {
  const { rows } = await db.query<PreferenceRow>(
    `SELECT ${PREFERENCE_COLUMNS} FROM subscribers.subscriber_preferences
      WHERE environment_id = $1 AND subscriber_id = ANY($2) AND context_keys = $4 AND (workflow_id IS NULL OR workflow_id = $3)`,
    [environmentId, subscriberIds, workflowId, contextKeys],
  );
  return rows;
}

/** Unsets the flagged channels in every per-workflow row of the subscriber in one context scope. */
export async function clearWorkflowChoices(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  contextKeys: readonly string[],
  clear: PerChannel<true>,
): Promise<void> {
  await db.query(
    `UPDATE subscribers.subscriber_preferences
        SET ${PREFERENCE_CHANNELS.map((channel, index) => `${channel} = CASE WHEN $${index + 4}::boolean THEN NULL ELSE ${channel} END`).join(", ")},
            updated_at = now()
      WHERE environment_id = $1 AND subscriber_id = $2 AND context_keys = $3 AND workflow_id IS NOT NULL`,
    [environmentId, subscriberId, contextKeys, ...PREFERENCE_CHANNELS.map((channel) => clear[channel] ?? false)],
  );
}

/** Choices (and a schedule) to store over one preference row of a subscriber; a null workflow is the global row. */
export interface PreferenceWrite {
  workflowId: string | null;
  choices: PerChannel<boolean>;
  schedule: unknown;
}

/** What names a preference row: the subscriber, the context scope, the workflow (null: global). */
const PREFERENCE_KEY = "(subscriber_id, context_keys, workflow_id)";

/**
 * Stores each write over its row of the subscriber in one context scope, creating rows that are
 * missing. Writes must name distinct rows (one statement cannot update a row twice).
 */
export async function upsertPreferences(
  db: Queryable,
  environmentId: string,
  subscriber: { organizationId: string; subscriberId: string; contextKeys: readonly string[] },
  writes: readonly PreferenceWrite[],
): Promise<void> {
  await db.query(
    `INSERT INTO subscribers.subscriber_preferences AS p
       (environment_id, organization_id, subscriber_id, context_keys, workflow_id, ${PREFERENCE_CHANNELS.join(", ")}, schedule)
     SELECT $1, $2, $3, $${PREFERENCE_CHANNELS.length + 6}, w.workflow_id, ${PREFERENCE_CHANNELS.map((channel) => `w.${channel}`).join(", ")}, w.schedule
       FROM unnest($4::text[], ${PREFERENCE_CHANNELS.map((_, index) => `$${index + 5}::boolean[]`).join(", ")}, $${PREFERENCE_CHANNELS.length + 5}::jsonb[])
         AS w(workflow_id, ${PREFERENCE_CHANNELS.join(", ")}, schedule)
     ON CONFLICT ${PREFERENCE_KEY} DO UPDATE
        SET ${PREFERENCE_CHANNELS.map((channel) => `${channel} = COALESCE(EXCLUDED.${channel}, p.${channel})`).join(", ")},
            schedule = COALESCE(EXCLUDED.schedule, p.schedule),
            updated_at = now()`,
    [
      environmentId,
      subscriber.organizationId,
      subscriber.subscriberId,
      writes.map((write) => write.workflowId),
      ...PREFERENCE_CHANNELS.map((channel) => writes.map((write) => write.choices[channel])),
      writes.map((write) => (write.schedule === null ? null : JSON.stringify(write.schedule))),
      subscriber.contextKeys,
    ],
  );
}

/**
 * Stores the schedule on the global row (of one context scope) of the subscriber with that
 * external id unless one is stored there already; answers the stored schedule, or undefined for an
 * unknown subscriber.
 */
export async function insertScheduleIfAbsent(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  contextKeys: readonly string[],
  schedule: unknown,
): Promise<{ schedule: unknown } | undefined> {
  const { rows } = await db.query<{ schedule: unknown }>(
    `INSERT INTO subscribers.subscriber_preferences AS p (environment_id, organization_id, subscriber_id, context_keys, workflow_id, schedule)
     SELECT s.environment_id, s.organization_id, s.id, $4, NULL, $3::jsonb
       FROM subscribers.subscribers s
      WHERE s.environment_id = $1 AND s.subscriber_id = $2
     ON CONFLICT ${PREFERENCE_KEY} DO UPDATE
        SET schedule = COALESCE(p.schedule, EXCLUDED.schedule),
            updated_at = CASE WHEN p.schedule IS NULL THEN now() ELSE p.updated_at END
     RETURNING p.schedule`,
    [environmentId, subscriberId, JSON.stringify(schedule), contextKeys],
  );
  return rows[0];
}
