import type { JsonObject } from "@bufbuild/protobuf";
import { textArray, type ChannelName, type Queryable, type SeverityName } from "@notify/runtime";

export type StatusName = "sent" | "error" | "warning";
export type MarkAsName = "read" | "seen" | "unread" | "unseen";

/** A row of messages.messages, as pg returns it. */
export interface MessageRow {
  id: string;
  organization_id: string;
  environment_id: string;
  notification_id: string;
  subscriber_id: string;
  external_subscriber_id: string;
  template_id: string;
  template_identifier: string | null;
  message_template_id: string;
  step_id: string;
  job_id: string | null;
  transaction_id: string;
  channel: ChannelName;
  content: string | unknown[] | null;
  subject: string | null;
  title: string | null;
  email: string | null;
  phone: string | null;
  direct_webhook_url: string | null;
  provider_id: string | null;
  device_tokens: string[];
  cta: Record<string, unknown>;
  avatar: string | null;
  actor: { type: string; data?: string } | null;
  feed_id: string | null;
  feed_identifier: string | null;
  status: StatusName;
  error_id: string | null;
  error_text: string | null;
  read: boolean;
  seen: boolean;
  last_seen_date: Date | null;
  last_read_date: Date | null;
  delivered_at: Date[];
  snoozed_until: Date | null;
  /** JSON text, as reads answer it (see messageColumns). */
  payload: string | null;
  overrides: string | null;
  created_at: Date;
  updated_at: Date;
  archived: boolean;
  archived_at: Date | null;
  first_seen_date: Date | null;
  severity: SeverityName;
  tags: string[];
  data: Record<string, unknown> | null;
  context_keys: string[];
}

/**
 * Every column a read answers, named rather than `*`. The hot reads (countMessages and
 * selectFeedPages) are named statements, planned once per connection of the
 * prepared-read pool; a prepared statement's result must keep its shape, and a later migration
 * that adds a column would otherwise fail every running replica's prepared reads ("cached plan
 * must not change result type") until it restarts.
 */
const MESSAGE_COLUMN_NAMES: Record<keyof MessageRow, true> = {
  id: true,
  organization_id: true,
  environment_id: true,
  notification_id: true,
  subscriber_id: true,
  external_subscriber_id: true,
  template_id: true,
  template_identifier: true,
  message_template_id: true,
  step_id: true,
  job_id: true,
  transaction_id: true,
  channel: true,
  content: true,
  subject: true,
  title: true,
  email: true,
  phone: true,
  direct_webhook_url: true,
  provider_id: true,
  device_tokens: true,
  cta: true,
  avatar: true,
  actor: true,
  feed_id: true,
  feed_identifier: true,
  status: true,
  error_id: true,
  error_text: true,
  read: true,
  seen: true,
  last_seen_date: true,
  last_read_date: true,
  delivered_at: true,
  snoozed_until: true,
  payload: true,
  overrides: true,
  created_at: true,
  updated_at: true,
  archived: true,
  archived_at: true,
  first_seen_date: true,
  severity: true,
  tags: true,
  data: true,
  context_keys: true,
};

/** Columns read as their JSON text: nothing here looks into them, and the RPC carries them as text. */
const READ_AS_TEXT = new Set(["payload", "overrides"]);

/** The message columns, each prefixed with a table alias when given. */
const messageColumns = (alias = "") =>
  Object.keys(MESSAGE_COLUMN_NAMES)
    .map((name) => (READ_AS_TEXT.has(name) ? `${alias}${name}::text AS ${name}` : `${alias}${name}`))
    .join(", ");

/** The message columns the Inbox answers: payloads and overrides stay in the database. */
const inboxColumns = (alias = "") =>
  Object.keys(MESSAGE_COLUMN_NAMES)
    .map((name) => (READ_AS_TEXT.has(name) ? `NULL::text AS ${name}` : `${alias}${name}`))
    .join(", ");

/** What the messages of one group share: every written column but the recipient's. */
export type MessageGroupRow = Pick<
  MessageRow,
  | "template_id"
  | "template_identifier"
  | "message_template_id"
  | "step_id"
  | "job_id"
  | "transaction_id"
  | "channel"
  | "content"
  | "subject"
  | "title"
  | "email"
  | "phone"
  | "direct_webhook_url"
  | "provider_id"
  | "device_tokens"
  | "cta"
  | "avatar"
  | "actor"
  | "feed_id"
  | "feed_identifier"
  | "status"
  | "error_id"
  | "error_text"
  | "delivered_at"
  | "severity"
  | "tags"
  | "context_keys"
> & {
  data: Record<string, unknown> | null;
  payload: Record<string, unknown> | null;
  overrides: Record<string, unknown> | null;
  /** What tells apart one step's messages to one subscriber on one channel ('' where there is one). */
  destination: string;
  grp: number;
  /** What a notification the group creates keeps. */
  notification: NotificationTraitsRow;
};

/** What a notification keeps of its trigger and workflow, as Novu's does. */
export interface NotificationTraitsRow {
  severity: SeverityName;
  critical: boolean;
  tags: readonly string[];
  /** The topics the trigger named, for a subscriber reached through them; null for none. */
  topics: readonly { topicId: string; topicKey: string }[] | null;
}

/** Each shared column with its SQL type, to read groups back out of their JSON document. */
const GROUP_COLUMNS = [
  ["template_id", "text"],
  ["template_identifier", "text"],
  ["message_template_id", "text"],
  ["step_id", "text"],
  ["job_id", "text"],
  ["transaction_id", "text"],
  ["channel", "text"],
  ["content", "jsonb"],
  ["subject", "text"],
  ["title", "text"],
  ["email", "text"],
  ["phone", "text"],
  ["direct_webhook_url", "text"],
  ["provider_id", "text"],
  ["device_tokens", "text[]"],
  ["cta", "jsonb"],
  ["avatar", "text"],
  ["actor", "jsonb"],
  ["feed_id", "text"],
  ["feed_identifier", "text"],
  ["status", "text"],
  ["error_id", "text"],
  ["error_text", "text"],
  ["delivered_at", "timestamptz[]"],
  ["payload", "json"],
  ["overrides", "json"],
  ["severity", "text"],
  ["tags", "text[]"],
  ["data", "jsonb"],
  ["context_keys", "text[]"],
  ["destination", "text"],
] as const satisfies readonly (readonly [keyof MessageGroupRow, string])[];

/** One message of a group: its own ids and recipient, and the index of its group. */
export interface RecipientRow {
  id: string;
  notification_id: string;
  subscriber_id: string;
  external_subscriber_id: string;
  grp: number;
}

/** What a notification takes from the group that makes it. */
export type NotificationGroupRow = Pick<MessageGroupRow, "grp" | "transaction_id" | "template_id" | "template_identifier" | "payload" | "notification">;

export interface NewNotificationRow {
  id: string;
  subscriber_id: string;
  external_subscriber_id: string;
  /** The group whose transaction, workflow and payload the notification takes. */
  grp: number;
}

/** What identifies a message for idempotency (besides the environment). */
export interface MessageKey {
  transaction_id: string;
  subscriber_id: string;
  step_id: string;
  channel: ChannelName;
  destination: string;
}

type NotificationKey = { id: string; transaction_id: string; subscriber_id: string };

/**
 * The notifications INSERT: per-row values travel as arrays and the few groups as one JSON
 * document, so the database parses each shared value (payload above all) once per group, not
 * once per row. `tail` decides what an existing notification does to it.
 */
function insertNotificationsStatement(
  tail: string,
  environmentId: string,
  organizationId: string,
  groups: readonly NotificationGroupRow[],
  rows: readonly NewNotificationRow[],
): [string, unknown[]] {
  return [
    `INSERT INTO messages.notifications
       (environment_id, organization_id, id, transaction_id, subscriber_id, external_subscriber_id, template_id, template_identifier, payload,
        severity, critical, tags, topics)
     SELECT $1, $2, r.id, g.transaction_id, r.subscriber_id, r.external_subscriber_id, g.template_id, g.template_identifier, g.payload,
            g.severity, g.critical, g.tags, g.topics
       FROM unnest($4::text[], $5::text[], $6::text[], $7::int[]) AS r(id, subscriber_id, external_subscriber_id, grp)
       JOIN json_to_recordset($3::json) AS g(grp int, transaction_id text, template_id text, template_identifier text, payload json,
                                             severity text, critical boolean, tags text[], topics jsonb)
         ON g.grp = r.grp
     ${tail}`,
    [
      environmentId,
      organizationId,
      JSON.stringify(
        groups.map(({ grp, transaction_id, template_id, template_identifier, payload, notification }) => ({
          grp,
          transaction_id,
          template_id,
          template_identifier,
          payload,
          ...notification,
        })),
      ),
      textArray(rows.map((row) => row.id)),
      textArray(rows.map((row) => row.subscriber_id)),
      textArray(rows.map((row) => row.external_subscriber_id)),
      rows.map((row) => row.grp),
    ],
  ];
}

/**
 * Creates notifications that are all new, in one statement: one that exists already fails it
 * with a unique violation (Postgres then needs no conflict check per row, nor ids answered).
 */
export async function insertNewNotifications(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  groups: readonly NotificationGroupRow[],
  rows: readonly NewNotificationRow[],
): Promise<void> {
  await db.query(...insertNotificationsStatement("", environmentId, organizationId, groups, rows));
}

/**
 * Creates the notifications that do not exist yet, in one statement, and answers the ids of those
 * it created (the caller chose every id, so an id missing from the answer names a notification
 * that existed).
 */
export async function insertMissingNotifications(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  groups: readonly NotificationGroupRow[],
  rows: readonly NewNotificationRow[],
): Promise<Set<string>> {
  const { rows: inserted } = await db.query<{ id: string }>(
    ...insertNotificationsStatement(
      "ON CONFLICT (environment_id, transaction_id, subscriber_id) DO NOTHING RETURNING id",
      environmentId,
      organizationId,
      groups,
      rows,
    ),
  );
  return new Set(inserted.map((row) => row.id));
}

export async function selectNotificationIds(
  db: Queryable,
  environmentId: string,
  keys: readonly { transaction_id: string; subscriber_id: string }[],
): Promise<NotificationKey[]> {
  const { rows } = await db.query<NotificationKey>(
    `SELECT n.id, n.transaction_id, n.subscriber_id
       FROM unnest($2::text[], $3::text[]) AS k(transaction_id, subscriber_id)
       JOIN messages.notifications n
         ON n.environment_id = $1 AND n.transaction_id = k.transaction_id AND n.subscriber_id = k.subscriber_id`,
    [environmentId, keys.map((key) => key.transaction_id), keys.map((key) => key.subscriber_id)],
  );
  return rows;
}

/** What the jobs of one step job group share. */
export interface StepJobGroupRow extends NotificationGroupRow {
  step_id: string;
  message_template_id: string;
  type: string;
  status: StepJobStatus;
  digest: Record<string, unknown> | null;
  /** A delay's or digest's job: the active steps behind it, as the run's workflow has them. */
  later: LaterStepRow[] | null;
  /** A channel step's job: the provider it carries from the trigger. */
  provider_id: string | null;
  /** The details the change adds, without ids: each job's are made from its new row's id. */
  details: { detail: string; status: string; raw?: string; at: string }[];
}

/** A step behind a delay or digest, as its job keeps it. */
export interface LaterStepRow {
  stepId: string;
  type: string;
  providerId?: string;
}

/** One job of a group: its notification, and the id it takes should it be new. */
export interface StepJobRow {
  id: string;
  notification_id: string;
  grp: number;
}

export const STEP_JOB_STATUSES = ["delayed", "merged", "completed", "skipped", "canceled", "failed"] as const;
export type StepJobStatus = (typeof STEP_JOB_STATUSES)[number];

/** How far on a status is: a job moves only to a further one (a digest merged into another may still complete, when it passes to this job). */
const stepJobProgress = (status: string) => `CASE ${status} WHEN 'delayed' THEN 1 WHEN 'merged' THEN 2 ELSE 3 END`;

/**
 * Creates or moves on step jobs, in one statement; answers how many it created or moved. A
 * change to a status no further than the job's changes nothing, so a redelivered run adds no
 * detail twice. Each added detail's id is made from the row id this call chose (unique per call).
 */
export async function upsertStepJobs(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  groups: readonly StepJobGroupRow[],
  rows: readonly StepJobRow[],
): Promise<number> {
  const { rowCount } = await db.query(
    `INSERT INTO messages.step_jobs AS j
       (environment_id, organization_id, id, notification_id, step_id, message_template_id, type, status, digest, later, provider_id, details)
     SELECT $1, $2, r.id, r.notification_id, g.step_id, g.message_template_id, g.type, g.status, g.digest, g.later, g.provider_id,
            (SELECT coalesce(jsonb_agg(d.value || jsonb_build_object('id', left(md5(r.id || '/' || d.n), 24)) ORDER BY d.n), '[]')
               FROM jsonb_array_elements(g.details) WITH ORDINALITY AS d(value, n))
       FROM unnest($4::text[], $5::text[], $6::int[]) AS r(id, notification_id, grp)
       JOIN jsonb_to_recordset($3::jsonb) AS g(grp int, step_id text, message_template_id text, type text, status text, digest jsonb, later jsonb,
                                              provider_id text, details jsonb)
         ON g.grp = r.grp
     ON CONFLICT (notification_id, step_id) DO UPDATE
        SET status = EXCLUDED.status,
            digest = coalesce(EXCLUDED.digest, j.digest),
            later = coalesce(EXCLUDED.later, j.later),
            provider_id = coalesce(j.provider_id, EXCLUDED.provider_id),
            details = j.details || EXCLUDED.details,
            updated_at = now()
      WHERE ${stepJobProgress("EXCLUDED.status")} > ${stepJobProgress("j.status")}`,
    [
      environmentId,
      organizationId,
      JSON.stringify(
        groups.map(({ grp, step_id, message_template_id, type, status, digest, later, provider_id, details }) => ({
          grp,
          step_id,
          message_template_id,
          type,
          status,
          digest,
          later,
          provider_id,
          details,
        })),
      ),
      textArray(rows.map((row) => row.id)),
      textArray(rows.map((row) => row.notification_id)),
      rows.map((row) => row.grp),
    ],
  );
  return rowCount ?? 0;
}

/**
 * Cancels the waiting (delayed or merged) step jobs of the transaction's next `limit`
 * notifications after subscriber `after` (by internal id); answers how many, and the last
 * subscriber walked (null when the walk is done).
 */
export async function cancelWaitingStepJobs(
  db: Queryable,
  environmentId: string,
  transactionId: string,
  after: string,
  limit: number,
): Promise<{ canceled: number; last: string | null }> {
  const { rows } = await db.query<{ canceled: number; walked: number; last: string | null }>(
    `WITH walked AS (
       SELECT id, subscriber_id FROM messages.notifications
        WHERE environment_id = $1 AND transaction_id = $2 AND subscriber_id > $3
        ORDER BY subscriber_id
        LIMIT $4
     ), changed AS (
       UPDATE messages.step_jobs s SET status = 'canceled', updated_at = now()
         FROM walked w
        WHERE s.notification_id = w.id AND s.status IN ('delayed', 'merged')
        RETURNING 1
     )
     SELECT (SELECT count(*)::int FROM changed) AS canceled, (SELECT count(*)::int FROM walked) AS walked,
            (SELECT max(subscriber_id) FROM walked) AS last`,
    [environmentId, transactionId, after, limit],
  );
  const row = rows[0]!;
  return { canceled: row.canceled, last: row.walked < limit ? null : row.last };
}

/**
 * Makes the merged digest jobs of these transactions' subscribers and steps wait again (delayed):
 * their digests passed to them. Answers how many.
 */
export async function resumeMergedDigestJobs(
  db: Queryable,
  environmentId: string,
  digests: readonly { transactionId: string; subscriberId: string; stepId: string }[],
): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE messages.step_jobs s SET status = 'delayed', updated_at = now()
       FROM unnest($2::text[], $3::text[], $4::text[]) AS d(transaction_id, subscriber_id, step_id)
       JOIN messages.notifications n
         ON n.environment_id = $1 AND n.transaction_id = d.transaction_id AND n.subscriber_id = d.subscriber_id
      WHERE s.environment_id = $1 AND s.notification_id = n.id AND s.step_id = d.step_id AND s.type = 'digest' AND s.status = 'merged'`,
    [environmentId, digests.map((digest) => digest.transactionId), digests.map((digest) => digest.subscriberId), digests.map((digest) => digest.stepId)],
  );
  return rowCount ?? 0;
}

/** A row of messages.step_jobs, with its notification's fields its execution details name. */
export interface StepJobRecord {
  id: string;
  organization_id: string;
  environment_id: string;
  notification_id: string;
  transaction_id: string;
  template_id: string;
  subscriber_id: string;
  step_id: string;
  message_template_id: string;
  type: string;
  status: string;
  digest_json: string | null;
  later: LaterStepRow[] | null;
  provider_id: string | null;
  details: { id: string; detail: string; status: string; raw?: string; at: string }[];
  created_at: Date;
  updated_at: Date;
}

const STEP_JOB_COLUMNS = `s.id, s.organization_id, s.environment_id, s.notification_id, n.transaction_id, n.template_id, n.subscriber_id,
  s.step_id, s.message_template_id, s.type, s.status, s.digest::text AS digest_json, s.later, s.provider_id, s.details, s.created_at, s.updated_at`;

/** The step jobs of these notifications, at most `limit` each, oldest first. */
export async function selectStepJobs(db: Queryable, environmentId: string, notificationIds: readonly string[], limit: number): Promise<StepJobRecord[]> {
  const { rows } = await db.query<StepJobRecord>(
    `SELECT ${STEP_JOB_COLUMNS}
       FROM unnest($2::text[]) AS k(notification_id)
       JOIN messages.notifications n ON n.environment_id = $1 AND n.id = k.notification_id
      CROSS JOIN LATERAL (
        SELECT * FROM messages.step_jobs j WHERE j.notification_id = n.id ORDER BY j.created_at, j.id LIMIT $3
      ) s
      ORDER BY s.created_at, s.id`,
    [environmentId, textArray(notificationIds), limit],
  );
  return rows;
}

/** The step jobs of one notification of one subscriber (by the caller's subscriberId), at most `limit`, oldest first. */
export async function selectSubscriberStepJobs(
  db: Queryable,
  environmentId: string,
  notificationId: string,
  externalSubscriberId: string,
  limit: number,
): Promise<StepJobRecord[]> {
  const { rows } = await db.query<StepJobRecord>(
    `SELECT ${STEP_JOB_COLUMNS}
       FROM messages.notifications n
       JOIN messages.step_jobs s ON s.notification_id = n.id
      WHERE n.environment_id = $1 AND n.id = $2 AND n.external_subscriber_id = $3
      ORDER BY s.created_at, s.id
      LIMIT $4`,
    [environmentId, notificationId, externalSubscriberId, limit],
  );
  return rows;
}

/** The messages INSERT, groups as for notifications; `tail` decides what an existing key does to it. */
function insertMessagesStatement(
  tail: string,
  environmentId: string,
  organizationId: string,
  groups: readonly MessageGroupRow[],
  rows: readonly RecipientRow[],
): [string, unknown[]] {
  const names = GROUP_COLUMNS.map(([name]) => name);
  const record = GROUP_COLUMNS.map(([name, type]) => `${name} ${type}`).join(", ");
  // An in-app message is delivered as it is written, as Novu's are: its deliveredAt starts with that moment.
  const insertedValue = (name: (typeof names)[number]) =>
    name === "delivered_at" ? "CASE WHEN g.channel = 'in_app' AND cardinality(g.delivered_at) = 0 THEN ARRAY[now()] ELSE g.delivered_at END" : `g.${name}`;
  return [
    `INSERT INTO messages.messages (environment_id, organization_id, id, notification_id, subscriber_id, external_subscriber_id, ${names.join(", ")})
     SELECT $1, $2, r.id, r.notification_id, r.subscriber_id, r.external_subscriber_id, ${names.map(insertedValue).join(", ")}
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::int[]) AS r(id, notification_id, subscriber_id, external_subscriber_id, grp)
       JOIN json_to_recordset($3::json) AS g(grp int, ${record}) ON g.grp = r.grp
     ${tail}`,
    [
      environmentId,
      organizationId,
      JSON.stringify(groups),
      textArray(rows.map((row) => row.id)),
      textArray(rows.map((row) => row.notification_id)),
      textArray(rows.map((row) => row.subscriber_id)),
      textArray(rows.map((row) => row.external_subscriber_id)),
      rows.map((row) => row.grp),
    ],
  ];
}

/** Inserts messages that are all new, in one statement: an existing key fails it with a unique violation. */
export async function insertNewMessages(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  groups: readonly MessageGroupRow[],
  rows: readonly RecipientRow[],
): Promise<void> {
  await db.query(...insertMessagesStatement("", environmentId, organizationId, groups, rows));
}

/** Inserts in one statement, skipping rows whose key exists already; answers the ids of the rows it inserted. */
export async function insertMissingMessages(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  groups: readonly MessageGroupRow[],
  rows: readonly RecipientRow[],
): Promise<Set<string>> {
  const { rows: inserted } = await db.query<{ id: string }>(
    ...insertMessagesStatement(
      "ON CONFLICT (environment_id, transaction_id, subscriber_id, step_id, channel, destination) DO NOTHING RETURNING id",
      environmentId,
      organizationId,
      groups,
      rows,
    ),
  );
  return new Set(inserted.map((row) => row.id));
}

export async function selectMessageIdsByKeys(
  db: Queryable,
  environmentId: string,
  keys: readonly MessageKey[],
): Promise<({ id: string; notification_id: string; created_at: Date } & MessageKey)[]> {
  const { rows } = await db.query<{ id: string; notification_id: string; created_at: Date } & MessageKey>(
    `SELECT m.id, m.notification_id, m.created_at, m.transaction_id, m.subscriber_id, m.step_id, m.channel, m.destination
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS k(transaction_id, subscriber_id, step_id, channel, destination)
       JOIN messages.messages m
         ON m.environment_id = $1 AND m.transaction_id = k.transaction_id AND m.subscriber_id = k.subscriber_id
        AND m.step_id = k.step_id AND m.channel = k.channel AND m.destination = k.destination`,
    [
      environmentId,
      keys.map((key) => key.transaction_id),
      keys.map((key) => key.subscriber_id),
      keys.map((key) => key.step_id),
      keys.map((key) => key.channel),
      keys.map((key) => key.destination),
    ],
  );
  return rows;
}

/** Seeing a message: now its last seen time, and its first unless it had one. */
const SEES = "seen = true, last_seen_date = now(), first_seen_date = COALESCE(first_seen_date, now())";

/**
 * What each mark does: the columns it sets, and (for mark-all) the flag and value a message must
 * have to be changed by it, i.e. the opposite state. Setting seen stamps last_seen_date and
 * setting read stamps last_read_date; "unread" leaves an already-seen date as it was.
 */
const MARKS: Record<MarkAsName, { set: string; flag: "read" | "seen"; from: boolean }> = {
  read: { set: `read = true, last_read_date = now(), ${SEES}`, flag: "read", from: false },
  seen: { set: SEES, flag: "seen", from: false },
  unread: {
    set: "read = false, seen = true, last_seen_date = CASE WHEN seen THEN last_seen_date ELSE now() END, first_seen_date = COALESCE(first_seen_date, now())",
    flag: "read",
    from: true,
  },
  // An archived message is never unseen: unseeing it unarchives it.
  unseen: { set: "read = false, seen = false, archived = false, archived_at = NULL", flag: "seen", from: true },
};

/** Marks the subscriber's messages among `ids` (any channel); returns them as updated. */
export async function markMessages(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  ids: readonly string[],
  markAs: MarkAsName,
): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `UPDATE messages.messages SET ${MARKS[markAs].set}, updated_at = now()
      WHERE environment_id = $1 AND subscriber_id = $2 AND id = ANY($3::text[])
      RETURNING ${messageColumns()}`,
    [environmentId, subscriberId, ids],
  );
  return rows;
}

export interface MarkAllScope {
  subscriberId: string;
  markAs: MarkAsName;
  /** Only messages of these feeds; null for every feed. */
  feedIdentifiers: readonly string[] | null;
}

/**
 * The id that closes the next mark-all chunk: the `rows`-th id after `after` among the
 * subscriber's in-app messages still in the opposite state; undefined when fewer remain. Both
 * mark-all statements bound ids with row comparisons over the flag index's columns, so the
 * planner walks exactly that index range rather than an id range of the whole table.
 */
export async function selectMarkAllChunkEnd(
  db: Queryable,
  environmentId: string,
  scope: MarkAllScope,
  after: string,
  rows: number,
): Promise<string | undefined> {
  const { flag, from } = MARKS[scope.markAs];
  const { rows: found } = await db.query<{ id: string }>(
    `SELECT id FROM messages.messages
      WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app' AND ${flag} = $3
        AND (environment_id, subscriber_id, ${flag}, id) > ($1, $2, $3, $4)
        AND ($5::text[] IS NULL OR feed_identifier = ANY($5::text[]))
      ORDER BY id OFFSET $6 LIMIT 1`,
    [environmentId, scope.subscriberId, from, after, scope.feedIdentifiers, rows - 1],
  );
  return found[0]?.id;
}

/**
 * Marks the subscriber's in-app messages with ids in (after, upTo] (no upper end when null)
 * that are in the opposite state, in one statement; returns how many changed. A message changed
 * concurrently is re-checked by Postgres before the update, so the count is exact.
 */
export async function markAllInRange(db: Queryable, environmentId: string, scope: MarkAllScope, after: string, upTo: string | null): Promise<number> {
  const { set, flag, from } = MARKS[scope.markAs];
  const { rowCount } = await db.query(
    `UPDATE messages.messages SET ${set}, updated_at = now()
      WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app' AND ${flag} = $3
        AND (environment_id, subscriber_id, ${flag}, id) > ($1, $2, $3, $4)
        AND ($5::text IS NULL OR (environment_id, subscriber_id, ${flag}, id) <= ($1, $2, $3, $5::text))
        AND ($6::text[] IS NULL OR feed_identifier = ANY($6::text[]))`,
    [environmentId, scope.subscriberId, from, after, upTo, scope.feedIdentifiers],
  );
  return rowCount ?? 0;
}

export interface CountQuery {
  /** Internal subscriber id. */
  subscriberId: string;
  seen: boolean;
  limit: number;
}

/** A count by any of the feed's filters (the Notification Center's tabs and bells). */
export interface FilteredCountQuery {
  /** Internal subscriber id. */
  subscriberId: string;
  feedIdentifiers: readonly string[] | null;
  read: boolean | null;
  seen: boolean | null;
  limit: number;
}

/**
 * For each query, the subscriber's in-app messages with seen = query.seen, counted up to its
 * limit and no further (the seen index holds them as one range), in one statement for them all.
 */
export async function countMessages(db: Queryable, environmentId: string, queries: readonly CountQuery[]): Promise<number[]> {
  const { rows } = await db.query<{ count: number }>({
    name: "messages.count-messages",
    text: `SELECT (SELECT count(*) FROM (
                     SELECT 1 FROM messages.messages m
                      WHERE m.environment_id = $1 AND m.subscriber_id = q.subscriber_id AND m.channel = 'in_app' AND m.seen = q.seen
                      LIMIT q.max
                   ) capped) AS count
             FROM unnest($2::text[], $3::boolean[], $4::int[]) WITH ORDINALITY AS q(subscriber_id, seen, max, position)
            ORDER BY q.position`,
    values: [environmentId, queries.map((query) => query.subscriberId), queries.map((query) => query.seen), queries.map((query) => query.limit)],
  });
  return rows.map((row) => row.count);
}

/** One feed page to read: a subscriber's in-app messages, optionally of some feeds, read or seen, or with a payload containing some values. */
export interface FeedQuery {
  subscriberId: string;
  feedIdentifiers: readonly string[] | null;
  read: boolean | null;
  seen: boolean | null;
  payload: JsonObject | null;
  offset: number;
  limit: number;
}

/**
 * The feed queries as parallel arrays, unnested in query order. Each query's feed identifiers
 * travel as one JSON array (a text[][] would have to be rectangular).
 */
const FEED_QUERIES = `unnest($2::text[], $3::jsonb[], $4::boolean[], $5::boolean[], $6::int[], $7::int[], $8::jsonb[])
  WITH ORDINALITY AS q(subscriber_id, feeds, read, seen, max, skip, payload, position)`;

/** A query's messages: the range of the feed index, then its filters. */
const FEED_CONDITIONS = `m.environment_id = $1 AND m.subscriber_id = q.subscriber_id AND m.channel = 'in_app'
  AND (q.feeds IS NULL OR m.feed_identifier IN (SELECT jsonb_array_elements_text(q.feeds)))
  AND (q.read IS NULL OR m.read = q.read) AND (q.seen IS NULL OR m.seen = q.seen)
  AND (q.payload IS NULL OR m.payload::jsonb @> q.payload)`;

const SELECT_FEED_PAGES = `SELECT q.position, page.* FROM ${FEED_QUERIES}
  CROSS JOIN LATERAL (
    SELECT ${messageColumns("m.")} FROM messages.messages m WHERE ${FEED_CONDITIONS}
     ORDER BY m.created_at DESC, m.id DESC LIMIT q.max OFFSET q.skip
  ) page
 ORDER BY q.position, page.created_at DESC, page.id DESC`;

/**
 * One feed page per query (newest first, one extra row so the caller knows whether more follow),
 * in one statement for them all; the rows of query i carry position i + 1. One statement per
 * feed cost a round trip each: most of the service's CPU for the feeds of many subscribers.
 */
export async function selectFeedPages(db: Queryable, environmentId: string, queries: readonly FeedQuery[]): Promise<(MessageRow & { position: number })[]> {
  const { rows } = await db.query<MessageRow & { position: number }>({
    name: "messages.select-feed-pages",
    text: SELECT_FEED_PAGES,
    values: feedQueryValues(environmentId, queries, 1),
  });
  return rows;
}

/** The values of FEED_QUERIES: each query's rows up to its limit and `extraRows` more. */
function feedQueryValues(environmentId: string, queries: readonly FeedQuery[], extraRows: number): unknown[] {
  return [
    environmentId,
    queries.map((query) => query.subscriberId),
    queries.map((query) => (query.feedIdentifiers ? JSON.stringify(query.feedIdentifiers) : null)),
    queries.map((query) => query.read),
    queries.map((query) => query.seen),
    queries.map((query) => query.limit + extraRows),
    queries.map((query) => query.offset),
    queries.map((query) => (query.payload ? JSON.stringify(query.payload) : null)),
  ];
}

const COUNT_FILTERED = `SELECT (SELECT count(*) FROM (SELECT 1 FROM messages.messages m WHERE ${FEED_CONDITIONS} LIMIT q.max) capped)::int AS count
  FROM ${FEED_QUERIES}
 ORDER BY q.position`;

/**
 * For each query, the subscriber's in-app messages that pass its filters, counted up to its
 * limit, in one statement for them all. An unseen count alone goes through countMessages: its
 * one condition is a range of the seen index.
 */
export async function countFilteredMessages(db: Queryable, environmentId: string, queries: readonly FilteredCountQuery[]): Promise<number[]> {
  const { rows } = await db.query<{ count: number }>({
    name: "messages.count-filtered-messages",
    text: COUNT_FILTERED,
    values: feedQueryValues(
      environmentId,
      queries.map((query) => ({ ...query, offset: 0, payload: null })),
      0,
    ),
  });
  return rows.map((row) => row.count);
}

export interface ListFilters {
  channel: ChannelName | null;
  /** Internal subscriber id. */
  subscriberId: string | null;
  transactionIds: readonly string[] | null;
  /** Sorted: a message's context keys must be exactly these. */
  contextKeys: readonly string[] | null;
}

const LIST_CONDITIONS = `
  environment_id = $1 AND ($2::text IS NULL OR channel = $2) AND ($3::text IS NULL OR subscriber_id = $3)
  AND ($4::text[] IS NULL OR transaction_id = ANY($4::text[])) AND ($5::text[] IS NULL OR context_keys = $5::text[])`;

const listValues = (environmentId: string, filters: ListFilters) => [
  environmentId,
  filters.channel,
  filters.subscriberId,
  filters.transactionIds,
  filters.contextKeys,
];

/** One page of the environment's messages, newest first, plus one extra row. */
export async function selectMessagePage(db: Queryable, environmentId: string, filters: ListFilters, offset: number, limit: number): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${messageColumns()} FROM messages.messages WHERE ${LIST_CONDITIONS}
      ORDER BY created_at DESC, id DESC LIMIT $6 OFFSET $7`,
    [...listValues(environmentId, filters), limit + 1, offset],
  );
  return rows;
}

export async function countListedMessages(db: Queryable, environmentId: string, filters: ListFilters, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (SELECT 1 FROM messages.messages WHERE ${LIST_CONDITIONS} LIMIT $6) capped`,
    [...listValues(environmentId, filters), cap],
  );
  return rows[0]!.count;
}

/** What a delete took away: how many messages, and whose feeds lost in-app ones (subscriberIds). */
export interface DeletedMessages {
  deleted: number;
  feeds: string[];
}

const DELETED_MESSAGES = `SELECT count(*)::int AS deleted,
       coalesce(array_agg(DISTINCT external_subscriber_id) FILTER (WHERE channel = 'in_app'), '{}') AS feeds
  FROM gone`;

export async function deleteMessage(db: Queryable, environmentId: string, id: string): Promise<DeletedMessages> {
  const { rows } = await db.query<DeletedMessages>(
    `WITH gone AS (DELETE FROM messages.messages WHERE environment_id = $1 AND id = $2 RETURNING channel, external_subscriber_id)
     ${DELETED_MESSAGES}`,
    [environmentId, id],
  );
  return rows[0]!;
}

/** Hard-deletes the transaction's messages (of one channel when given). */
export async function deleteTransactionMessages(
  db: Queryable,
  environmentId: string,
  transactionId: string,
  channel: ChannelName | null,
): Promise<DeletedMessages> {
  const { rows } = await db.query<DeletedMessages>(
    `WITH gone AS (
       DELETE FROM messages.messages WHERE environment_id = $1 AND transaction_id = $2 AND ($3::text IS NULL OR channel = $3)
       RETURNING channel, external_subscriber_id
     )
     ${DELETED_MESSAGES}`,
    [environmentId, transactionId, channel],
  );
  return rows[0]!;
}

/** Whether the transaction has any message left, of any channel. */
export async function transactionHasMessages(db: Queryable, environmentId: string, transactionId: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM messages.messages WHERE environment_id = $1 AND transaction_id = $2 LIMIT 1", [
    environmentId,
    transactionId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Where a walk of a subscriber's notifications stopped: the last one it reached (its created_at as Postgres prints it, exactly). */
export interface NotificationWalkPoint {
  createdAt: string;
  id: string;
}

/**
 * Deletes up to `limit` of a subscriber's in-app messages and up to `limit` of its others, and
 * answers how many went and where the walk of its notifications stopped. The in-app ones are
 * found through the feed's index; the others through the subscriber's notifications, newest
 * first from `from` (itself included, its rest may be left), which every message of another
 * channel keeps (retention deletes them together): no index on every message's subscriber is
 * needed, and each call walks on from where the last one stopped.
 */
export async function deleteSubscriberMessages(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  limit: number,
  from: NotificationWalkPoint | undefined,
): Promise<{ inApp: number; others: number; reached: NotificationWalkPoint | undefined }> {
  const { rows } = await db.query<{ in_app: number; others: number; reached_at: string | null; reached_id: string | null }>(
    `WITH in_app AS (
       SELECT id FROM messages.messages WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app' LIMIT $3
     ), walked AS (
       SELECT m.id, n.created_at, n.id AS notification_id FROM messages.notifications n
         JOIN messages.messages m ON m.environment_id = $1 AND m.transaction_id = n.transaction_id AND m.subscriber_id = $2 AND m.channel <> 'in_app'
        WHERE n.environment_id = $1 AND n.subscriber_id = $2 AND ($4::timestamptz IS NULL OR (n.created_at, n.id) <= ($4::timestamptz, $5::text))
        ORDER BY n.created_at DESC, n.id DESC
        LIMIT $3
     ), gone AS (
       DELETE FROM messages.messages WHERE id IN (SELECT id FROM in_app UNION ALL SELECT id FROM walked)
       RETURNING channel = 'in_app' AS in_app
     ), reached AS (
       SELECT created_at::text AS at, notification_id FROM walked ORDER BY created_at, notification_id LIMIT 1
     )
     SELECT (SELECT count(*) FROM gone WHERE in_app)::int AS in_app, (SELECT count(*) FROM gone WHERE NOT in_app)::int AS others,
            (SELECT at FROM reached) AS reached_at, (SELECT notification_id FROM reached) AS reached_id`,
    [environmentId, subscriberId, limit, from?.createdAt ?? null, from?.id ?? null],
  );
  const row = rows[0]!;
  return {
    inApp: row.in_app,
    others: row.others,
    reached: row.reached_at !== null && row.reached_id !== null ? { createdAt: row.reached_at, id: row.reached_id } : undefined,
  };
}

export interface AttemptRow {
  id: string;
  message_id: string;
  attempt: number;
  provider_id: string;
  status: "success" | "failed";
  error_id: string | null;
  error_text: string | null;
  provider_message_id: string | null;
  detail: string;
  started_at: Date;
  duration_ms: number;
}

/**
 * Records attempts of the environment's messages and moves each message's status in one
 * statement: only attempts not recorded before change anything, a success sets `sent` and
 * appends deliveredAt, and a failure never overrides a delivery. Answers how many were new.
 * Messages are found by id only (a lateral lookup, then the attempts' own environment): given the
 * environment as a constant, a plan made from statistics older than its messages (a new
 * installation) read every message of the environment to find a batch's few.
 */
export async function recordDeliveryAttempts(db: Queryable, environmentId: string, attempts: readonly AttemptRow[]): Promise<number> {
  const { rowCount } = await db.query({
    name: "messages.record-delivery-attempts",
    text: `WITH input AS (
       SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::int[])
         AS a(id, message_id, attempt, provider_id, status, error_id, error_text, provider_message_id, detail, started_at, duration_ms)
     ), recorded AS (
       INSERT INTO messages.delivery_attempts
         (id, organization_id, environment_id, message_id, notification_id, external_subscriber_id, attempt, provider_id, status,
          error_id, error_text, provider_message_id, detail, started_at, duration_ms)
       SELECT a.id, m.organization_id, m.environment_id, m.id, m.notification_id, m.external_subscriber_id, a.attempt, a.provider_id, a.status,
              a.error_id, a.error_text, a.provider_message_id, a.detail, a.started_at, a.duration_ms
         FROM input a
        -- By its primary key alone, the environment checked after: with statistics from before
        -- the environment's messages were written, a condition on it inside could lead the
        -- planner to walk another index by environment_id, through all of them.
        CROSS JOIN LATERAL (
          SELECT * FROM messages.messages m WHERE m.id = a.message_id LIMIT 1
        ) m
        WHERE m.environment_id = $1
       -- An attempt is recorded once; only a success replaces a failure of the same attempt: the
       -- call's own worker learned it went out after another had taken its outcome for unknown.
       ON CONFLICT (message_id, attempt) DO UPDATE
          SET status = excluded.status, error_id = NULL, error_text = NULL, provider_message_id = excluded.provider_message_id,
              detail = excluded.detail, started_at = excluded.started_at, duration_ms = excluded.duration_ms
        WHERE delivery_attempts.status = 'failed' AND excluded.status = 'success'
       RETURNING message_id, environment_id, status, error_id, error_text, provider_message_id, created_at
     )
     UPDATE messages.messages m
        SET status = CASE WHEN r.status = 'success' THEN 'sent' ELSE 'error' END,
            error_id = CASE WHEN r.status = 'success' THEN NULL ELSE r.error_id END,
            error_text = CASE WHEN r.status = 'success' THEN NULL ELSE r.error_text END,
            provider_message_id = COALESCE(r.provider_message_id, m.provider_message_id),
            delivered_at = CASE WHEN r.status = 'success' THEN m.delivered_at || r.created_at ELSE m.delivered_at END,
            updated_at = now()
       FROM recorded r
      WHERE m.id = r.message_id AND m.environment_id = r.environment_id AND (r.status = 'success' OR cardinality(m.delivered_at) = 0)`,
    values: [
      environmentId,
      attempts.map((row) => row.id),
      attempts.map((row) => row.message_id),
      attempts.map((row) => row.attempt),
      attempts.map((row) => row.provider_id),
      attempts.map((row) => row.status),
      attempts.map((row) => row.error_id),
      attempts.map((row) => row.error_text),
      attempts.map((row) => row.provider_message_id),
      attempts.map((row) => row.detail),
      attempts.map((row) => row.started_at),
      attempts.map((row) => row.duration_ms),
    ],
  });
  return rowCount ?? 0;
}

export interface ProviderEventRow {
  id: string;
  provider_message_id: string;
  status: string;
  occurred_at: Date;
  external_id: string | null;
  attempts: number | null;
  response: string | null;
  raw: string;
}

/**
 * Records a provider's events of the environment's messages it sent, each found by the provider
 * message id a send attempt kept; an event recorded before (the same text for the same message)
 * is not recorded again. Answers the positions (from 1) of the events that named a message.
 */
export async function recordProviderEvents(db: Queryable, environmentId: string, providerId: string, events: readonly ProviderEventRow[]): Promise<number[]> {
  const { rows } = await db.query<{ position: string }>(
    `WITH input AS (
       SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::int[], $9::text[], $10::text[]) WITH ORDINALITY
         AS e(id, provider_message_id, status, occurred_at, external_id, attempts, response, raw, position)
     ), matched AS (
       SELECT e.*, m.organization_id, m.id AS message_id, m.notification_id, m.external_subscriber_id
         FROM input e
        CROSS JOIN LATERAL (
          SELECT a.message_id FROM messages.delivery_attempts a
           WHERE a.environment_id = $1 AND a.provider_id = $2 AND a.provider_message_id = e.provider_message_id
           LIMIT 1
        ) a
         JOIN messages.messages m ON m.id = a.message_id
     ), recorded AS (
       INSERT INTO messages.provider_events
         (id, organization_id, environment_id, message_id, notification_id, external_subscriber_id, provider_id, provider_message_id,
          status, occurred_at, external_id, attempts, response, raw, event_key)
       SELECT id, organization_id, $1, message_id, notification_id, external_subscriber_id, $2, provider_message_id,
              status, occurred_at, external_id, attempts, response, raw, sha256(convert_to(raw, 'UTF8'))
         FROM matched
       ON CONFLICT (message_id, event_key) DO NOTHING
     )
     SELECT position FROM matched ORDER BY position`,
    [
      environmentId,
      providerId,
      events.map((row) => row.id),
      textArray(events.map((row) => row.provider_message_id)),
      events.map((row) => row.status),
      events.map((row) => row.occurred_at),
      events.map((row) => row.external_id),
      events.map((row) => row.attempts),
      events.map((row) => row.response),
      events.map((row) => row.raw),
    ],
  );
  return rows.map((row) => Number(row.position));
}

/** What both kinds of execution detail name: the message and where it went. */
interface ExecutionDetailContext {
  id: string;
  message_id: string;
  provider_id: string;
  organization_id: string;
  environment_id: string;
  notification_id: string;
  template_id: string;
  subscriber_id: string;
  job_id: string | null;
  transaction_id: string;
  channel: ChannelName;
  created_at: Date;
}

/** An execution detail: a send attempt, or an event its provider reported afterwards. */
export type ExecutionDetailRow =
  | (ExecutionDetailContext & { kind: "attempt" } & AttemptRow)
  | (ExecutionDetailContext & { kind: "event" } & Omit<ProviderEventRow, "id">);

/** A notification named with its subscriber's subscriberId (execution details are kept under both). */
export interface SubscriberNotification {
  notificationId: string;
  externalSubscriberId: string;
}

/**
 * The attempts at each notification's messages to its subscriber and their providers' events,
 * oldest first, at most `limit` per notification: each a range of the two tables' notification
 * indexes. The columns of the kind a row is not are null.
 */
export async function selectExecutionDetails(
  db: Queryable,
  environmentId: string,
  notifications: readonly SubscriberNotification[],
  limit: number,
): Promise<ExecutionDetailRow[]> {
  const { rows } = await db.query<ExecutionDetailRow>(
    `SELECT d.*, m.template_id, m.subscriber_id, m.job_id, m.transaction_id, m.channel
       FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(notification_id, external_subscriber_id, position)
      CROSS JOIN LATERAL (
        (SELECT 'attempt' AS kind, a.id, a.message_id, a.provider_id, a.organization_id, a.environment_id, a.notification_id, a.created_at,
                a.attempt, a.status, a.error_id, a.error_text, a.provider_message_id, a.detail, a.started_at, a.duration_ms,
                NULL::timestamptz AS occurred_at, NULL AS external_id, NULL::int AS attempts, NULL AS response, NULL AS raw
           FROM messages.delivery_attempts a
          WHERE a.environment_id = $1 AND a.notification_id = k.notification_id AND a.external_subscriber_id = k.external_subscriber_id
          ORDER BY a.created_at, a.id
          LIMIT $4)
        UNION ALL
        (SELECT 'event', e.id, e.message_id, e.provider_id, e.organization_id, e.environment_id, e.notification_id, e.created_at,
                NULL, e.status, NULL, NULL, e.provider_message_id, NULL, NULL, NULL,
                e.occurred_at, e.external_id, e.attempts, e.response, e.raw
           FROM messages.provider_events e
          WHERE e.environment_id = $1 AND e.notification_id = k.notification_id AND e.external_subscriber_id = k.external_subscriber_id
          ORDER BY e.created_at, e.id
          LIMIT $4)
        ORDER BY created_at, id
        LIMIT $4
      ) d
      JOIN messages.messages m ON m.id = d.message_id
      ORDER BY k.position, d.created_at, d.id`,
    [
      environmentId,
      textArray(notifications.map((notification) => notification.notificationId)),
      textArray(notifications.map((notification) => notification.externalSubscriberId)),
      limit,
    ],
  );
  return rows;
}

/** A row of messages.notifications, its payload as JSON text. */
export interface NotificationRow {
  id: string;
  organization_id: string;
  environment_id: string;
  transaction_id: string;
  subscriber_id: string;
  external_subscriber_id: string;
  template_id: string;
  template_identifier: string | null;
  payload: string | null;
  created_at: Date;
  severity: string;
  critical: boolean;
  tags: string[];
  topics: { topicId: string; topicKey: string }[] | null;
}

const NOTIFICATION_COLUMNS = `n.id, n.organization_id, n.environment_id, n.transaction_id, n.subscriber_id, n.external_subscriber_id,
  n.template_id, n.template_identifier, n.payload::text AS payload, n.created_at, n.severity, n.critical, n.tags, n.topics`;

/** What the activity feed narrows to; null matches every notification. */
export interface NotificationFilters {
  /** Internal subscriber ids, each once. */
  subscriberIds: readonly string[] | null;
  /** Each once. */
  templateIds: readonly string[] | null;
  transactionId: string | null;
  /** Notifications with a message on any of these channels, or the job of a step on one that sent nothing. */
  channels: readonly ChannelName[] | null;
  /** Sorted: notifications whose messages' context keys are exactly these. */
  contextKeys: readonly string[] | null;
  /** Notifications made at or after this time. */
  createdAfter: Date | null;
  /** Notifications made at or before this time. */
  createdBefore: Date | null;
  /** Each once. */
  severities: readonly SeverityName[] | null;
  /** Notifications of subscribers reached through the topic with this key. */
  topicKey: string | null;
}

/**
 * The notifications that pass every filter, newest first; `narrowing` adds a condition. The
 * channel and context checks probe each candidate's messages by their unique key (a lateral
 * subquery with a limit, which the planner runs per candidate rather than hashing every message
 * of the table), and are planned away when neither is asked for. A channel is also found in the
 * jobs of the candidate's steps that sent nothing (skipped by conditions or preferences), by
 * theirs, when the messages had none: Novu's filter reads the notification's step types.
 */
const filteredNotifications = (narrowing: string, keyColumn?: "subscriber_id" | "template_id") => `
  SELECT ${NOTIFICATION_COLUMNS} FROM messages.notifications n
    LEFT JOIN LATERAL (
      (SELECT true AS found FROM messages.messages m
        WHERE ($5::text[] IS NOT NULL OR $8::text[] IS NOT NULL) AND m.environment_id = $1 AND m.transaction_id = n.transaction_id
          AND m.subscriber_id = n.subscriber_id AND ($5::text[] IS NULL OR m.channel = ANY($5::text[]))
          AND ($8::text[] IS NULL OR m.context_keys = $8::text[])
        LIMIT 1)
      UNION ALL
      (SELECT true FROM messages.step_jobs j
        WHERE $5::text[] IS NOT NULL AND $8::text[] IS NULL AND j.notification_id = n.id AND j.type = ANY($5::text[])
        LIMIT 1)
      LIMIT 1) c ON true
   WHERE n.environment_id = $1 AND ${narrowing}
     ${keyColumn === "subscriber_id" ? "" : "AND ($2::text[] IS NULL OR n.subscriber_id = ANY($2::text[]))"}
     ${keyColumn === "template_id" ? "" : "AND ($3::text[] IS NULL OR n.template_id = ANY($3::text[]))"}
     AND ($4::text IS NULL OR n.transaction_id = $4)
     AND ($9::timestamptz IS NULL OR n.created_at >= $9) AND ($10::timestamptz IS NULL OR n.created_at <= $10)
     AND ($11::text[] IS NULL OR n.severity = ANY($11::text[]))
     AND ($12::text IS NULL OR n.topics @> jsonb_build_array(jsonb_build_object('topicKey', $12::text)))
     AND (($5::text[] IS NULL AND $8::text[] IS NULL) OR c.found)
   ORDER BY n.created_at DESC, n.id DESC`;

/**
 * The first `offset + limit` of each subscriber's (or workflow's) notifications, each list a walk
 * of its index in order, merged: a page reads no more than that per key, however many
 * notifications the others have, and never sorts more than those.
 */
const perKey = (column: "subscriber_id" | "template_id", keys: string) => `
  SELECT p.* FROM unnest(${keys}) AS k(key)
   CROSS JOIN LATERAL (${filteredNotifications(`n.${column} = k.key`, column)} LIMIT $6::int + $7::int) p
   ORDER BY p.created_at DESC, p.id DESC LIMIT $6 OFFSET $7`;

/** One page of the environment's notifications that pass the filters, newest first, plus one extra row. */
export async function selectNotificationPage(
  db: Queryable,
  environmentId: string,
  filters: NotificationFilters,
  offset: number,
  limit: number,
): Promise<NotificationRow[]> {
  const statement = filters.subscriberIds
    ? perKey("subscriber_id", "$2::text[]")
    : filters.templateIds
      ? perKey("template_id", "$3::text[]")
      : `${filteredNotifications("true")} LIMIT $6 OFFSET $7`;
  const { rows } = await db.query<NotificationRow>(statement, [
    environmentId,
    filters.subscriberIds && textArray(filters.subscriberIds),
    filters.templateIds && textArray(filters.templateIds),
    filters.transactionId,
    filters.channels && textArray(filters.channels),
    limit + 1,
    offset,
    filters.contextKeys && textArray(filters.contextKeys),
    filters.createdAfter,
    filters.createdBefore,
    filters.severities && textArray(filters.severities),
    filters.topicKey,
  ]);
  return rows;
}

export async function selectNotification(db: Queryable, environmentId: string, id: string): Promise<NotificationRow | undefined> {
  const { rows } = await db.query<NotificationRow>(`SELECT ${NOTIFICATION_COLUMNS} FROM messages.notifications n WHERE n.environment_id = $1 AND n.id = $2`, [
    environmentId,
    id,
  ]);
  return rows[0];
}

/** The messages of each notification, oldest first, at most `limit` per notification (by the messages' unique key). */
export async function selectNotificationMessages(
  db: Queryable,
  environmentId: string,
  notifications: readonly Pick<NotificationRow, "transaction_id" | "subscriber_id">[],
  limit: number,
): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `SELECT m.* FROM unnest($2::text[], $3::text[]) AS k(transaction_id, subscriber_id)
       CROSS JOIN LATERAL (
         SELECT ${messageColumns()} FROM messages.messages
          WHERE environment_id = $1 AND transaction_id = k.transaction_id AND subscriber_id = k.subscriber_id
          ORDER BY created_at, id
          LIMIT $4) m`,
    [
      environmentId,
      textArray(notifications.map((notification) => notification.transaction_id)),
      textArray(notifications.map((notification) => notification.subscriber_id)),
      limit,
    ],
  );
  return rows;
}

/** How many notifications the environment made since each of two times (`week` later than `month`). */
export async function countNotificationsSince(db: Queryable, environmentId: string, week: Date, month: Date): Promise<{ weekly: number; monthly: number }> {
  const { rows } = await db.query<{ weekly: number; monthly: number }>(
    `SELECT (count(*) FILTER (WHERE created_at >= $2))::int AS weekly, count(*)::int AS monthly
       FROM messages.notifications WHERE environment_id = $1 AND created_at >= $3`,
    [environmentId, week, month],
  );
  return rows[0]!;
}

export interface ActivityDayRow {
  date: string;
  count: number;
  template_ids: string[];
  channels: ChannelName[];
}

/**
 * Per UTC day since `since`, newest first: the messages made, their workflows and channels. The
 * messages are counted per day, workflow and channel first (hashed, a few groups a day), so only
 * those groups are sorted, not every message.
 */
export async function selectActivityDays(db: Queryable, environmentId: string, since: Date): Promise<ActivityDayRow[]> {
  const { rows } = await db.query<ActivityDayRow>(
    `SELECT g.date, sum(g.count)::int AS count, array_agg(DISTINCT g.template_id) AS template_ids, array_agg(DISTINCT g.channel) AS channels
       FROM (SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, template_id, channel, count(*) AS count
               FROM messages.messages WHERE environment_id = $1 AND created_at >= $2
              GROUP BY 1, 2, 3) g
      GROUP BY g.date ORDER BY g.date DESC`,
    [environmentId, since],
  );
  return rows;
}

/** Which of a subscriber's in-app messages an Inbox call concerns; null and empty lists match all. */
export interface InboxFilter {
  /** Every group must intersect the message's tags. */
  tagGroups: readonly (readonly string[])[];
  read: boolean | null;
  seen: boolean | null;
  archived: boolean | null;
  /** true: snoozed until a time to come; false: not snoozed, or its snooze is due. */
  snoozed: boolean | null;
  severities: readonly SeverityName[] | null;
  /** JSON documents: for every group, the message's data contains one of them. */
  dataGroups: readonly (readonly string[])[];
  createdGte: Date | null;
  createdLte: Date | null;
  /** The session's context keys, sorted: a message's must be exactly these; null for every context. */
  contextKeys: readonly string[] | null;
  /** Only the messages of this feed (its _id). */
  feedId: string | null;
}

/** A snooze that is still to come. */
const SNOOZED = "(m.snoozed_until IS NOT NULL AND m.snoozed_until > now())";

/**
 * The filter as SQL over `m`, its values appended to `values`. The flags are written as
 * literals, not parameters, so the planner can use the partial indexes whose predicates name
 * them (the unread and not-archived ones); everything else is a parameter.
 */
function inboxConditions(filter: InboxFilter, values: unknown[]): string {
  const parameter = (value: unknown, type: string) => {
    values.push(value);
    return `$${values.length}::${type}`;
  };
  const flag = (column: string, value: boolean | null) => (value === null ? "" : ` AND ${value ? "" : "NOT "}m.${column}`);
  let sql = flag("read", filter.read) + flag("seen", filter.seen) + flag("archived", filter.archived);
  if (filter.snoozed !== null) sql += filter.snoozed ? ` AND ${SNOOZED}` : ` AND NOT ${SNOOZED}`;
  if (filter.severities) sql += ` AND m.severity = ANY(${parameter(filter.severities, "text[]")})`;
  if (filter.createdGte) sql += ` AND m.created_at >= ${parameter(filter.createdGte, "timestamptz")}`;
  if (filter.createdLte) sql += ` AND m.created_at <= ${parameter(filter.createdLte, "timestamptz")}`;
  for (const group of filter.tagGroups) sql += ` AND m.tags && ${parameter(group, "text[]")}`;
  for (const group of filter.dataGroups) sql += ` AND m.data @> ANY(${parameter(group, "jsonb[]")})`;
  if (filter.contextKeys) sql += ` AND m.context_keys = ${parameter(filter.contextKeys, "text[]")}`;
  if (filter.feedId !== null) sql += ` AND m.feed_id = ${parameter(filter.feedId, "text")}`;
  return sql;
}

/** The subscriber's in-app messages (parameters $1 and $2). */
const INBOX_MESSAGES = "m.environment_id = $1 AND m.subscriber_id = $2 AND m.channel = 'in_app'";

export interface InboxPage {
  filter: InboxFilter;
  /** Start after this message of the subscriber's (none: an empty page); null for the newest. */
  after: string | null;
  offset: number;
  limit: number;
}

/** One page of the subscriber's in-app messages matching the filter, newest first, plus one extra row. */
export async function selectInboxPage(db: Queryable, environmentId: string, subscriberId: string, page: InboxPage): Promise<MessageRow[]> {
  const values: unknown[] = [environmentId, subscriberId];
  let sql = `SELECT ${inboxColumns("m.")} FROM messages.messages m WHERE ${INBOX_MESSAGES}${inboxConditions(page.filter, values)}`;
  if (page.after !== null) {
    values.push(page.after);
    sql += ` AND (m.created_at, m.id) < (SELECT c.created_at, c.id FROM messages.messages c
               WHERE c.environment_id = $1 AND c.subscriber_id = $2 AND c.channel = 'in_app' AND c.id = $${values.length}::text)`;
  }
  values.push(page.limit + 1, page.offset);
  sql += ` ORDER BY m.created_at DESC, m.id DESC LIMIT $${values.length - 1} OFFSET $${values.length}`;
  const { rows } = await db.query<MessageRow>(sql, values);
  return rows;
}

/** One subscriber's first page (no cursor) of a list. */
export interface InboxFirstPage {
  /** Internal subscriber id. */
  subscriberId: string;
  offset: number;
  limit: number;
}

/**
 * The first pages of many subscribers' lists with one filter (newest first, one extra row each),
 * in one statement for them all; the rows of page i carry position i + 1. A statement per page
 * cost a round trip each: the larger part of a batch's CPU.
 */
export async function selectInboxFirstPages(
  db: Queryable,
  environmentId: string,
  filter: InboxFilter,
  pages: readonly InboxFirstPage[],
): Promise<(MessageRow & { position: number })[]> {
  const values: unknown[] = [environmentId, pages.map((page) => page.subscriberId), pages.map((page) => page.limit + 1), pages.map((page) => page.offset)];
  const { rows } = await db.query<MessageRow & { position: number }>(
    `SELECT q.position, page.* FROM unnest($2::text[], $3::int[], $4::int[]) WITH ORDINALITY AS q(subscriber_id, max, skip, position)
      CROSS JOIN LATERAL (
        SELECT ${inboxColumns("m.")} FROM messages.messages m
         WHERE m.environment_id = $1 AND m.subscriber_id = q.subscriber_id AND m.channel = 'in_app'${inboxConditions(filter, values)}
         ORDER BY m.created_at DESC, m.id DESC LIMIT q.max OFFSET q.skip
      ) page
      ORDER BY q.position, page.created_at DESC, page.id DESC`,
    values,
  );
  return rows;
}

/** For each filter, the subscriber's in-app messages matching it, counted up to `limit` and no further, in one statement. */
export async function countInboxMessages(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  filters: readonly InboxFilter[],
  limit: number,
): Promise<number[]> {
  const values: unknown[] = [environmentId, subscriberId, limit];
  const counts = filters.map(
    (filter, index) =>
      `(SELECT count(*) FROM (SELECT 1 FROM messages.messages m WHERE ${INBOX_MESSAGES}${inboxConditions(filter, values)} LIMIT $3) capped) AS c${index}`,
  );
  const { rows } = await db.query<Record<string, number>>(`SELECT ${counts.join(", ")}`, values);
  return filters.map((_, index) => rows[0]![`c${index}`]!);
}

export type InboxChangeName = "read" | "unread" | "seen" | "archive" | "unarchive" | "snooze" | "unsnooze" | "complete" | "revert";

/** What one state change sets, with the values its placeholders (from $4) stand for. */
export interface InboxChangeArguments {
  snoozeUntil: Date | null;
  actionType: "primary" | "secondary" | null;
  /** The action's result.payload; null keeps the one it has. */
  actionPayload: JsonObject | null;
  /** Novu's v1 message action: the action alone, though the message has no button of its type. */
  v1Action: boolean;
}

/** The action's status, result.type and result.payload in a call to action stored as its proto JSON ($4: status, $5: type, $6: payload or null). */
const SETS_ACTION = `cta = cta || jsonb_build_object('action',
  COALESCE(cta->'action', '{}') || jsonb_build_object('status', $4::text, 'result', COALESCE(cta->'action'->'result', '{}') || jsonb_build_object('type', $5::text)
    || CASE WHEN $6::jsonb IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('payload', $6::jsonb) END))`;

/**
 * Acting on a button reads an unread message, as Novu's Inbox treats the click (its client marks
 * nothing itself); a message read already keeps its read and seen times.
 */
const READS_UNREAD = `read = true, last_read_date = CASE WHEN read THEN last_read_date ELSE now() END,
  seen = seen OR NOT read, last_seen_date = CASE WHEN read THEN last_seen_date ELSE now() END,
  first_seen_date = CASE WHEN read THEN first_seen_date ELSE COALESCE(first_seen_date, now()) END`;

/** A message whose call to action has a button of the action's type ($5). */
const HAS_ACTION_BUTTON = `m.cta->'action'->'buttons' @> jsonb_build_array(jsonb_build_object('type', $5::text))`;

/** An action's status set: by the Inbox, on a button the message has, reading it; by a v1 message action, alone. */
const actionChange = (status: "done" | "pending", args: InboxChangeArguments): [string, unknown[], string | undefined] =>
  args.v1Action
    ? [SETS_ACTION, [status, args.actionType, args.actionPayload], undefined]
    : [`${SETS_ACTION}, ${READS_UNREAD}`, [status, args.actionType, args.actionPayload], HAS_ACTION_BUTTON];

/**
 * Each change as Novu's Inbox applies it (its message repository's transitions): the columns
 * it sets, the values of its placeholders, and what the message must be for the change to apply
 * (Novu refuses to unsnooze a message not snoozed, or to act on a button it does not have).
 */
const INBOX_CHANGES: Record<InboxChangeName, (args: InboxChangeArguments) => [set: string, values: unknown[], only?: string | undefined]> = {
  read: () => [`read = true, last_read_date = now(), ${SEES}`, []],
  unread: () => [`read = false, last_read_date = NULL, archived = false, archived_at = NULL, ${SEES}`, []],
  seen: () => [SEES, []],
  archive: () => [`read = true, last_read_date = COALESCE(last_read_date, now()), archived = true, archived_at = now(), ${SEES}`, []],
  unarchive: () => ["archived = false, archived_at = NULL", []],
  snooze: (args) => [`snoozed_until = $4::timestamptz, archived = false, archived_at = NULL, ${SEES}`, [args.snoozeUntil]],
  unsnooze: () => ["snoozed_until = NULL", [], "m.snoozed_until IS NOT NULL"],
  complete: (args) => actionChange("done", args),
  revert: (args) => actionChange("pending", args),
};

/**
 * Changes one of the subscriber's in-app messages; answers it as changed, undefined when it is not
 * one of theirs or the change does not apply to it (inboxMessageExists tells which).
 */
export async function updateInboxMessage(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  id: string,
  change: InboxChangeName,
  args: InboxChangeArguments,
  contextKeys: readonly string[] | null,
): Promise<MessageRow | undefined> {
  const [set, values, only] = INBOX_CHANGES[change](args);
  const inContext = contextKeys ? ` AND m.context_keys = $${4 + values.length}::text[]` : "";
  const { rows } = await db.query<MessageRow>(
    `UPDATE messages.messages m SET ${set}, updated_at = now()
      WHERE m.environment_id = $1 AND m.subscriber_id = $2 AND m.id = $3 AND m.channel = 'in_app'${inContext}${only ? ` AND ${only}` : ""}
      RETURNING ${inboxColumns("m.")}`,
    [environmentId, subscriberId, id, ...values, ...(contextKeys ? [contextKeys] : [])],
  );
  return rows[0];
}

/** Whether the subscriber has this in-app message (in these contexts, when given). */
export async function inboxMessageExists(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  id: string,
  contextKeys: readonly string[] | null,
): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM messages.messages m
      WHERE m.environment_id = $1 AND m.subscriber_id = $2 AND m.id = $3 AND m.channel = 'in_app'${contextKeys ? " AND m.context_keys = $4::text[]" : ""}`,
    [environmentId, subscriberId, id, ...(contextKeys ? [contextKeys] : [])],
  );
  return rows.length > 0;
}

export type InboxBulkChangeName = "seen" | "read" | "archive" | "archive_read";

/** Each bulk change: what it sets, and which messages it changes (only those it changes, so the count is what changed). */
const INBOX_BULK_CHANGES: Record<InboxBulkChangeName, { set: string; of: string }> = {
  seen: { set: SEES, of: "NOT m.seen" },
  read: { set: `read = true, last_read_date = now(), ${SEES}`, of: "NOT m.read" },
  archive: { set: `read = true, last_read_date = COALESCE(last_read_date, now()), archived = true, archived_at = now(), ${SEES}`, of: "NOT m.archived" },
  archive_read: { set: "archived = true, archived_at = now()", of: "m.read AND NOT m.archived" },
};

/** The messages a bulk change concerns: those named (when any are) that match the filter. */
function bulkConditions(ids: readonly string[] | null, filter: InboxFilter, values: unknown[]): string {
  let sql = inboxConditions(filter, values);
  if (ids) {
    values.push(ids);
    sql += ` AND m.id = ANY($${values.length}::text[])`;
  }
  return sql;
}

/**
 * Changes at most `limit` of the subscriber's matching in-app messages that the change would
 * change, in one statement; answers how many changed (fewer than `limit`: none are left).
 */
export async function bulkUpdateInboxMessages(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  change: InboxBulkChangeName,
  ids: readonly string[] | null,
  filter: InboxFilter,
  limit: number,
): Promise<number> {
  const values: unknown[] = [environmentId, subscriberId, limit];
  const { set, of } = INBOX_BULK_CHANGES[change];
  const { rowCount } = await db.query(
    `UPDATE messages.messages t SET ${set}, updated_at = now()
       FROM (SELECT m.id FROM messages.messages m WHERE ${INBOX_MESSAGES} AND ${of}${bulkConditions(ids, filter, values)} LIMIT $3) picked
      WHERE t.environment_id = $1 AND t.id = picked.id`,
    values,
  );
  return rowCount ?? 0;
}

/** Deletes at most `limit` of the subscriber's matching in-app messages in one statement; answers how many. */
export async function deleteInboxMessages(
  db: Queryable,
  environmentId: string,
  subscriberId: string,
  ids: readonly string[] | null,
  filter: InboxFilter,
  limit: number,
): Promise<number> {
  const values: unknown[] = [environmentId, subscriberId, limit];
  const { rowCount } = await db.query(
    `DELETE FROM messages.messages t
      USING (SELECT m.id FROM messages.messages m WHERE ${INBOX_MESSAGES}${bulkConditions(ids, filter, values)} LIMIT $3) picked
      WHERE t.environment_id = $1 AND t.id = picked.id`,
    values,
  );
  return rowCount ?? 0;
}

/** A subscriber's bell, each count up to the query's limit. */
export interface InboxCountsRow {
  unseen: number;
  unread: number;
  unread_high: number;
  unread_medium: number;
  unread_low: number;
  unread_none: number;
}

/** Messages the bell counts: the session's context's, not snoozed (or due), and for unread ones not archived either. */
const bellMessages = (column: string, condition: string) =>
  `SELECT ${column} FROM messages.messages m
     WHERE m.environment_id = $1 AND m.subscriber_id = q.subscriber_id AND m.channel = 'in_app' AND ${condition} AND NOT ${SNOOZED}
       AND m.context_keys = $4::text[]
     LIMIT $3`;

const UNREAD = "NOT m.read AND NOT m.archived";

const SEVERITY_COUNTS = ["high", "medium", "low", "none"] as const;

/**
 * A severity's unread count: counted from the unread messages already read when they all were
 * (fewer than the limit), else by a capped scan of its own, which only a full bell pays for.
 */
const unreadOfSeverity = (severity: (typeof SEVERITY_COUNTS)[number]) =>
  `CASE WHEN unread.n < $3 THEN unread.${severity}
        ELSE (SELECT count(*) FROM (${bellMessages("1", `${UNREAD} AND m.severity = '${severity}'`)}) capped) END AS unread_${severity}`;

/**
 * The bells of many subscribers (internal ids), in their order, each count up to `limit`, in
 * one statement: per subscriber one capped range of the seen index and one of the unread
 * messages, whose severities give the per-severity counts.
 */
export async function selectInboxCounts(
  db: Queryable,
  environmentId: string,
  subscriberIds: readonly string[],
  limit: number,
  contextKeys: readonly string[],
): Promise<InboxCountsRow[]> {
  const { rows } = await db.query<InboxCountsRow>({
    name: "messages.select-inbox-counts",
    text: `SELECT unseen.n AS unseen, unread.n AS unread, ${SEVERITY_COUNTS.map(unreadOfSeverity).join(", ")}
             FROM unnest($2::text[]) WITH ORDINALITY AS q(subscriber_id, position)
            CROSS JOIN LATERAL (SELECT count(*) AS n FROM (${bellMessages("1", "NOT m.seen")}) capped) unseen
            CROSS JOIN LATERAL (
              SELECT count(*) AS n, ${SEVERITY_COUNTS.map((severity) => `count(*) FILTER (WHERE capped.severity = '${severity}') AS ${severity}`).join(", ")}
                FROM (${bellMessages("m.severity", UNREAD)}) capped) unread
            ORDER BY q.position`,
    values: [environmentId, subscriberIds, limit, contextKeys],
  });
  return rows;
}

/** The environment's in-app messages among `ids`. */
export async function selectInAppMessages(db: Queryable, environmentId: string, ids: readonly string[]): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${inboxColumns("m.")} FROM messages.messages m WHERE m.environment_id = $1 AND m.id = ANY($2::text[]) AND m.channel = 'in_app'`,
    [environmentId, ids],
  );
  return rows;
}

/**
 * Brings a message back from the snooze that ends at `snoozedUntil`, as Novu does: newly created,
 * so it heads the lists, not snoozed and unread (unless archived since), with a delivery time
 * appended; seen as it was. Answers its subscriber (external id), undefined when it is gone or
 * snoozed otherwise since.
 */
export async function returnSnoozedMessage(db: Queryable, environmentId: string, id: string, snoozedUntil: Date): Promise<string | undefined> {
  const { rows } = await db.query<{ external_subscriber_id: string }>(
    `UPDATE messages.messages
        SET snoozed_until = NULL, created_at = now(), read = read AND archived, last_read_date = CASE WHEN archived THEN last_read_date END,
            delivered_at = delivered_at || now(), updated_at = now()
      WHERE environment_id = $1 AND id = $2 AND snoozed_until = $3 AND channel = 'in_app'
      RETURNING external_subscriber_id`,
    [environmentId, id, snoozedUntil],
  );
  return rows[0]?.external_subscriber_id;
}

// Retention (retention.ts): what is older than the environment's retention goes, a batch at a time.

/**
 * The environments that have rows in `table`, in id order: a loose scan of the index its
 * environment_id leads (one probe per environment, not a read of every row).
 */
async function selectEnvironmentsOf(db: Queryable, table: "notifications" | "messages"): Promise<string[]> {
  // Only these two fixed table names are ever interpolated.
  const { rows } = await db.query<{ environment_id: string }>(
    `WITH RECURSIVE environments AS (
       (SELECT environment_id FROM messages.${table} ORDER BY environment_id LIMIT 1)
       UNION ALL
       SELECT (SELECT t.environment_id FROM messages.${table} t WHERE t.environment_id > e.environment_id ORDER BY t.environment_id LIMIT 1)
         FROM environments e WHERE e.environment_id IS NOT NULL
     )
     SELECT environment_id FROM environments WHERE environment_id IS NOT NULL`,
  );
  return rows.map((row) => row.environment_id);
}

export const selectNotificationEnvironments = (db: Queryable) => selectEnvironmentsOf(db, "notifications");
export const selectMessageEnvironments = (db: Queryable) => selectEnvironmentsOf(db, "messages");

/**
 * Deletes at most `limit` of the environment's notifications made more than `days` ago, oldest
 * first, with their messages of every channel but in-app (their send attempts and provider events
 * go with them); answers how many notifications went. Rows another sweep holds are skipped.
 */
export async function deleteExpiredNotifications(db: Queryable, environmentId: string, days: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `WITH expired AS (
       SELECT id, transaction_id, subscriber_id FROM messages.notifications
        WHERE environment_id = $1 AND created_at < now() - make_interval(days => $2)
        ORDER BY created_at, id
        LIMIT $3
        FOR UPDATE SKIP LOCKED
     ), sent AS (
       DELETE FROM messages.messages m USING expired e
        WHERE m.environment_id = $1 AND m.transaction_id = e.transaction_id AND m.subscriber_id = e.subscriber_id AND m.channel <> 'in_app'
     )
     DELETE FROM messages.notifications n USING expired e WHERE n.id = e.id`,
    [environmentId, days, limit],
  );
  return rowCount ?? 0;
}

/**
 * Deletes at most `limit` of the environment's messages, of any channel, made more than `days`
 * ago; answers how many went, and whose in-app feeds they changed (external subscriber ids).
 */
export async function deleteExpiredMessages(
  db: Queryable,
  environmentId: string,
  days: number,
  limit: number,
): Promise<{ deleted: number; feedsChanged: string[] }> {
  const { rows } = await db.query<{ in_app: boolean; external_subscriber_id: string }>(
    `DELETE FROM messages.messages WHERE id IN (
       SELECT id FROM messages.messages
        WHERE environment_id = $1 AND created_at < now() - make_interval(days => $2)
        LIMIT $3
        FOR UPDATE SKIP LOCKED
     )
     RETURNING channel = 'in_app' AS in_app, external_subscriber_id`,
    [environmentId, days, limit],
  );
  return { deleted: rows.length, feedsChanged: [...new Set(rows.filter((row) => row.in_app).map((row) => row.external_subscriber_id))] };
}
