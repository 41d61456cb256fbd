import type { JsonObject } from "@bufbuild/protobuf";
import { contextKeyOf, type Origin, type Queryable } from "@notify/runtime";

export interface AcceptedTrigger {
  id: string;
  transactionId: string;
  workflowId: string;
  /** The TriggerJob the relay publishes. */
  job: Uint8Array;
  /** The request it comes from, carried on with the job (null: none). */
  origin: Origin | null;
}

/**
 * Records accepted triggers, once per (environment, transactionId), and queues the job of each one
 * it recorded, in one statement (its own transaction when run on the pool). The unique key decides,
 * not a prior read, so concurrent repeats cannot both pass.
 */
export async function recordTriggers(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  subject: string,
  rows: readonly AcceptedTrigger[],
): Promise<void> {
  await db.query(
    `WITH recorded AS (
       INSERT INTO triggers.trigger_records (environment_id, organization_id, id, transaction_id, workflow_id, status)
       SELECT $1, $2, v.id, v.transaction_id, v.workflow_id, 'processed'
         FROM unnest($4::text[], $5::text[], $6::text[]) AS v(id, transaction_id, workflow_id)
       ON CONFLICT (environment_id, transaction_id) DO NOTHING
       RETURNING id
     )
     INSERT INTO triggers.outbox (environment_id, trigger_id, subject, job, origin)
     SELECT $1, j.trigger_id, $3, j.job, j.origin
       FROM unnest($4::text[], $7::bytea[], $8::jsonb[]) WITH ORDINALITY AS j(trigger_id, job, origin, n)
       JOIN recorded r ON r.id = j.trigger_id
      ORDER BY j.n`,
    [
      environmentId,
      organizationId,
      subject,
      rows.map((row) => row.id),
      rows.map((row) => row.transactionId),
      rows.map((row) => row.workflowId),
      rows.map((row) => Buffer.from(row.job)),
      rows.map((row) => (row.origin ? JSON.stringify(row.origin) : null)),
    ],
  );
}

/** Wakes the relay's scheduler (LISTEN triggers_schedules) once the transaction commits. */
export async function notifySchedules(db: Queryable): Promise<void> {
  await db.query("SELECT pg_notify('triggers_schedules', '')");
}

/** Which of these transactions were canceled, from the index of canceled records alone. */
export async function selectCanceledTransactionIds(db: Queryable, environmentId: string, transactionIds: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ transaction_id: string }>(
    "SELECT transaction_id FROM triggers.trigger_records WHERE environment_id = $1 AND transaction_id = ANY($2) AND canceled_at IS NOT NULL",
    [environmentId, transactionIds],
  );
  return rows.map((row) => row.transaction_id);
}

/** Marks a trigger canceled (what has not run yet is skipped); undefined when there is none. */
export async function cancelTriggerRecord(db: Queryable, environmentId: string, transactionId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE triggers.trigger_records SET canceled_at = coalesce(canceled_at, now())
      WHERE environment_id = $1 AND transaction_id = $2 RETURNING id`,
    [environmentId, transactionId],
  );
  return rows[0]?.id;
}

/** The trigger of a transaction, if it was canceled. */
export async function selectCanceledTriggerId(db: Queryable, environmentId: string, transactionId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT id FROM triggers.trigger_records WHERE environment_id = $1 AND transaction_id = $2 AND canceled_at IS NOT NULL",
    [environmentId, transactionId],
  );
  return rows[0]?.id;
}

/** Removes a canceled trigger's jobs the relay has not published yet; answers them. */
export async function deleteOutboxFor(db: Queryable, environmentId: string, triggerId: string): Promise<Buffer[]> {
  const { rows } = await db.query<{ job: Buffer }>("DELETE FROM triggers.outbox WHERE environment_id = $1 AND trigger_id = $2 RETURNING job", [
    environmentId,
    triggerId,
  ]);
  return rows.map((row) => row.job);
}

/**
 * How many jobs wait in the outbox, across environments (an operator's gauge, not a tenant's
 * read), counted up to `atMost` so that a large backlog does not make each scrape slow.
 */
export async function countOutboxBacklog(db: Queryable, atMost: number): Promise<number> {
  const { rows } = await db.query<{ waiting: number }>("SELECT count(*)::int AS waiting FROM (SELECT 1 FROM triggers.outbox LIMIT $1) AS waiting", [atMost]);
  return rows[0]?.waiting ?? 0;
}

/** Creates the tenants of trigger objects, or updates their name and data, in one statement. */
export async function upsertTenants(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  rows: readonly { id: string; identifier: string; name: string | null; data: string | null }[],
): Promise<void> {
  await db.query(
    `INSERT INTO triggers.tenants (environment_id, organization_id, id, identifier, name, data)
     SELECT $1, $2, v.id, v.identifier, v.name, v.data
       FROM unnest($3::text[], $4::text[], $5::text[], $6::jsonb[]) AS v(id, identifier, name, data)
     ON CONFLICT (environment_id, identifier) DO UPDATE
        SET name = coalesce(EXCLUDED.name, tenants.name),
            data = coalesce(EXCLUDED.data, tenants.data),
            updated_at = now()
      WHERE (tenants.name, tenants.data) IS DISTINCT FROM (coalesce(EXCLUDED.name, tenants.name), coalesce(EXCLUDED.data, tenants.data))`,
    [environmentId, organizationId, rows.map((row) => row.id), rows.map((row) => row.identifier), rows.map((row) => row.name), rows.map((row) => row.data)],
  );
}

export interface ContextRow {
  type: string;
  id: string;
  data: JsonObject;
  created_at: Date;
  updated_at: Date;
}

/** A context as a trigger or a session names it; `data` (JSON text) is used only to create it. */
export interface ContextInputRow {
  type: string;
  id: string;
  data: string | null;
}

/**
 * Creates the contexts that do not exist yet and answers every one as stored, those that existed
 * untouched (a trigger never overwrites a context). One statement, twice at most: a context
 * another call created after this statement's snapshot is neither inserted nor seen, and the
 * second statement, with a snapshot of its own, sees it.
 */
export async function ensureContexts(db: Queryable, environmentId: string, organizationId: string, inputs: readonly ContextInputRow[]): Promise<ContextRow[]> {
  const ensure = async (wanted: readonly ContextInputRow[]) =>
    (
      await db.query<ContextRow>(
        `WITH input AS (
           SELECT * FROM unnest($3::text[], $4::text[], $5::jsonb[]) AS i(type, id, data)
         ), created AS (
           INSERT INTO triggers.contexts (environment_id, organization_id, type, id, data)
           SELECT $1, $2, type, id, coalesce(data, '{}') FROM input
           ON CONFLICT (environment_id, type, id) DO NOTHING
           RETURNING type, id, data, created_at, updated_at
         )
         SELECT * FROM created
         UNION ALL
         SELECT c.type, c.id, c.data, c.created_at, c.updated_at
           FROM triggers.contexts c JOIN input i ON c.type = i.type AND c.id = i.id
          WHERE c.environment_id = $1 AND NOT EXISTS (SELECT 1 FROM created n WHERE n.type = c.type AND n.id = c.id)`,
        [environmentId, organizationId, wanted.map((input) => input.type), wanted.map((input) => input.id), wanted.map((input) => input.data)],
      )
    ).rows;
  const rows = await ensure(inputs);
  if (rows.length >= inputs.length) return rows;
  const found = new Set(rows.map(contextKeyOf));
  return [...rows, ...(await ensure(inputs.filter((input) => !found.has(contextKeyOf(input)))))];
}

export interface OutboxRow {
  id: string;
  /** The JetStream msgID: the trigger id, or the schedule's for a resumption. */
  message_id: string;
  subject: string;
  job: Buffer;
  origin: Origin | null;
}

/**
 * Takes the oldest unpublished jobs of every environment out of the outbox: inside the relay's
 * transaction, so they come back if publishing fails, and skipping rows another relay (a replica)
 * holds. The relay serves no caller, so this is not scoped to one environment.
 */
export async function takeOutboxBatch(db: Queryable, limit: number): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(
    `DELETE FROM triggers.outbox
      WHERE id IN (SELECT id FROM triggers.outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, coalesce(message_id, trigger_id) AS message_id, subject, job, origin`,
    [limit],
  );
  return rows;
}

/** A job to publish at `runAt`, or held until released when that is null. */
export interface NewSchedule {
  triggerId: string;
  dedupeKey: string;
  subject: string;
  job: Uint8Array;
  runAt: Date | null;
  digestIds?: readonly string[];
}

/**
 * Keeps jobs to publish later, as continuations of the request `origin` names; a dedupe key
 * already kept, or a hold's already released, is skipped.
 */
export async function insertSchedules(db: Queryable, environmentId: string, origin: Origin, rows: readonly NewSchedule[]): Promise<void> {
  await db.query(
    `INSERT INTO triggers.schedules (environment_id, trigger_id, dedupe_key, subject, job, run_at, digest_ids, origin)
     SELECT $1, v.trigger_id, v.dedupe_key, v.subject, v.job, v.run_at, string_to_array(v.digest_ids, ',')::bigint[], $8::jsonb
       FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[], $6::timestamptz[], $7::text[]) AS v(trigger_id, dedupe_key, subject, job, run_at, digest_ids)
      WHERE NOT EXISTS (SELECT 1 FROM triggers.released_holds r WHERE r.environment_id = $1 AND r.dedupe_key = v.dedupe_key)
     ON CONFLICT (environment_id, dedupe_key) DO NOTHING`,
    [
      environmentId,
      rows.map((row) => row.triggerId),
      rows.map((row) => row.dedupeKey),
      rows.map((row) => row.subject),
      rows.map((row) => Buffer.from(row.job)),
      rows.map((row) => row.runAt),
      // Arrays of arrays do not unnest row by row, so each row's digest ids travel as one string.
      rows.map((row) => (row.digestIds ? row.digestIds.join(",") : null)),
      Object.keys(origin).length > 0 ? JSON.stringify(origin) : null,
    ],
  );
}

/** Makes the held schedules of these dedupe keys due now, keeping their keys taken; answers how many were still held. */
export async function releaseHeldSchedules(db: Queryable, environmentId: string, dedupeKeys: readonly string[]): Promise<number> {
  const { rowCount } = await db.query(
    `WITH released AS (
       UPDATE triggers.schedules SET run_at = now()
        WHERE environment_id = $1 AND dedupe_key = ANY($2::text[]) AND run_at IS NULL
       RETURNING dedupe_key
     )
     INSERT INTO triggers.released_holds (environment_id, dedupe_key) SELECT $1, dedupe_key FROM released
     ON CONFLICT DO NOTHING`,
    [environmentId, dedupeKeys],
  );
  return rowCount ?? 0;
}

/**
 * Deletes up to `limit` holds made before `before` and never released (every send they waited
 * for failed, or none ran), and as many released keys released before it; answers how many went.
 */
export async function purgeHolds(db: Queryable, before: Date, limit: number): Promise<number> {
  const { rows } = await db.query<{ purged: number }>(
    `WITH unreleased AS (
       DELETE FROM triggers.schedules
        WHERE id IN (SELECT id FROM triggers.schedules WHERE run_at IS NULL AND created_at < $1 ORDER BY created_at LIMIT $2)
          -- One released while this waited for its lock stays.
          AND run_at IS NULL
       RETURNING 1
     ),
     released AS (
       DELETE FROM triggers.released_holds
        WHERE (environment_id, dedupe_key) IN (SELECT environment_id, dedupe_key FROM triggers.released_holds WHERE released_at < $1 ORDER BY released_at LIMIT $2)
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM unreleased) + (SELECT count(*) FROM released) AS purged`,
    [before, limit],
  );
  return rows[0]!.purged;
}

export async function deleteSchedulesFor(db: Queryable, environmentId: string, triggerId: string): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM triggers.schedules WHERE environment_id = $1 AND trigger_id = $2", [environmentId, triggerId]);
  return rowCount ?? 0;
}

/**
 * Moves every environment's due schedules (up to `limit`) into the outbox in one statement,
 * closing the digests they end so later events open new ones; answers how many moved.
 * Infrastructure, like the relay: not scoped to one environment.
 */
export async function moveDueSchedules(db: Queryable, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `WITH due AS (
       DELETE FROM triggers.schedules
        WHERE id IN (SELECT id FROM triggers.schedules WHERE run_at <= now() ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id, environment_id, trigger_id, subject, job, digest_ids, origin
     ),
     -- Locked in the order DigestEvents locks digests, so the two wait for each other, never deadlock.
     ending AS (
       SELECT id FROM triggers.digests
        WHERE id IN (SELECT unnest(digest_ids) FROM due) AND closed_at IS NULL
        ORDER BY environment_id, workflow_id, subscriber_id, step_id, digest_key
          FOR UPDATE
     ),
     closed AS (
       UPDATE triggers.digests SET closed_at = now() WHERE id IN (SELECT id FROM ending)
     )
     INSERT INTO triggers.outbox (environment_id, trigger_id, message_id, subject, job, origin)
     SELECT environment_id, trigger_id, trigger_id || '.resume.' || id, subject, job, origin FROM due`,
    [limit],
  );
  return rowCount ?? 0;
}

/** When the next schedule is due, if any. */
export async function selectNextScheduleTime(db: Queryable): Promise<Date | undefined> {
  const { rows } = await db.query<{ run_at: Date | null }>("SELECT min(run_at) AS run_at FROM triggers.schedules");
  return rows[0]?.run_at ?? undefined;
}

/** A digest key: one subscriber's events of one workflow's digest step with one digestKey value. */
export interface DigestKey {
  workflowId: string;
  subscriberId: string;
  stepId: string;
  /** The digestKey value, JSON-encoded; '' when the payload has none. */
  key: string;
}

export interface DigestKeyRow {
  workflow_id: string;
  subscriber_id: string;
  step_id: string;
  digest_key: string;
  last_event_at: Date | null;
  /** The transaction's time, the arrival time of the events it records. */
  now: Date;
}

const keyColumns = (keys: readonly DigestKey[]) => [
  keys.map((key) => key.workflowId),
  keys.map((key) => key.subscriberId),
  keys.map((key) => key.stepId),
  keys.map((key) => key.key),
];

/**
 * Locks the rows of these (distinct) keys, creating missing ones, in one order so concurrent
 * batches wait for each other instead of deadlocking; answers when each key's last event arrived.
 */
export async function lockDigestKeys(db: Queryable, environmentId: string, keys: readonly DigestKey[]): Promise<DigestKeyRow[]> {
  const { rows } = await db.query<DigestKeyRow>(
    `INSERT INTO triggers.digest_keys (environment_id, workflow_id, subscriber_id, step_id, digest_key)
     SELECT $1, v.workflow_id, v.subscriber_id, v.step_id, v.digest_key
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS v(workflow_id, subscriber_id, step_id, digest_key)
      ORDER BY v.workflow_id, v.subscriber_id, v.step_id, v.digest_key
     ON CONFLICT (environment_id, workflow_id, subscriber_id, step_id, digest_key) DO UPDATE SET last_event_at = digest_keys.last_event_at
     RETURNING workflow_id, subscriber_id, step_id, digest_key, last_event_at, now() AS now`,
    [environmentId, ...keyColumns(keys)],
  );
  return rows;
}

/** Records that an event of each of these keys arrived now. */
export async function touchDigestKeys(db: Queryable, environmentId: string, keys: readonly DigestKey[]): Promise<void> {
  await db.query(
    `UPDATE triggers.digest_keys k SET last_event_at = now()
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS v(workflow_id, subscriber_id, step_id, digest_key)
      WHERE k.environment_id = $1 AND k.workflow_id = v.workflow_id AND k.subscriber_id = v.subscriber_id
        AND k.step_id = v.step_id AND k.digest_key = v.digest_key`,
    [environmentId, ...keyColumns(keys)],
  );
}

/** One subscriber's run of one transaction reaching one digest step. */
export interface DigestArrival {
  subscriberId: string;
  stepId: string;
  transactionId: string;
}

/** An arrival recorded before: the digest it joined, if any, and whose trigger's run that digest goes on under. */
export interface DigestArrivalRow {
  subscriber_id: string;
  step_id: string;
  transaction_id: string;
  digest_id: number | null;
  digest_trigger_id: string | null;
}

/** Which of these arrivals were recorded before, and whether each was digested. */
export async function selectDigestArrivals(db: Queryable, environmentId: string, arrivals: readonly DigestArrival[]): Promise<DigestArrivalRow[]> {
  const { rows } = await db.query<DigestArrivalRow>(
    `SELECT e.subscriber_id, e.step_id, e.transaction_id, e.digest_id, d.trigger_id AS digest_trigger_id
       FROM triggers.digest_events e
       JOIN unnest($2::text[], $3::text[], $4::text[]) AS v(subscriber_id, step_id, transaction_id)
         ON e.subscriber_id = v.subscriber_id AND e.step_id = v.step_id AND e.transaction_id = v.transaction_id
       LEFT JOIN triggers.digests d ON d.id = e.digest_id
      WHERE e.environment_id = $1`,
    [environmentId, arrivals.map((row) => row.subscriberId), arrivals.map((row) => row.stepId), arrivals.map((row) => row.transactionId)],
  );
  return rows;
}

export interface DigestRow {
  id: number;
  workflow_id: string;
  subscriber_id: string;
  step_id: string;
  digest_key: string;
  trigger_id: string;
}

/**
 * Opens a digest for each of these (distinct) keys unless one is open, answering the open digest
 * of every key: the unique index on open digests decides, so racing batches share one. Locks them
 * in one order, like the relay that closes them.
 */
export async function openDigests(
  db: Queryable,
  environmentId: string,
  rows: readonly (DigestKey & { triggerId: string; runAt: Date })[],
): Promise<DigestRow[]> {
  const { rows: digests } = await db.query<DigestRow>(
    `INSERT INTO triggers.digests (environment_id, workflow_id, subscriber_id, step_id, digest_key, trigger_id, run_at)
     SELECT $1, v.workflow_id, v.subscriber_id, v.step_id, v.digest_key, v.trigger_id, v.run_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
            AS v(workflow_id, subscriber_id, step_id, digest_key, trigger_id, run_at)
      ORDER BY v.workflow_id, v.subscriber_id, v.step_id, v.digest_key
     ON CONFLICT (environment_id, workflow_id, subscriber_id, step_id, digest_key) WHERE closed_at IS NULL
     DO UPDATE SET run_at = digests.run_at
     RETURNING id, workflow_id, subscriber_id, step_id, digest_key, trigger_id`,
    [environmentId, ...keyColumns(rows), rows.map((row) => row.triggerId), rows.map((row) => row.runAt)],
  );
  return digests;
}

/** Where a digested event joined: its digest, its payload, and its trigger's run to go on with should the digest pass to it. */
export interface DigestedEvent {
  digestId: string;
  payload: string;
  triggerId: string;
  fromStep: number;
}

/** Records arrivals in the given order (the digest's event order); one recorded before is kept. */
export async function insertDigestEvents(
  db: Queryable,
  environmentId: string,
  rows: readonly (DigestArrival & { digested: DigestedEvent | undefined })[],
): Promise<void> {
  await db.query(
    `INSERT INTO triggers.digest_events (environment_id, subscriber_id, step_id, transaction_id, digest_id, payload, trigger_id, from_step)
     SELECT $1, v.subscriber_id, v.step_id, v.transaction_id, v.digest_id, v.payload, v.trigger_id, v.from_step
       FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::jsonb[], $7::text[], $8::int[]) WITH ORDINALITY
            AS v(subscriber_id, step_id, transaction_id, digest_id, payload, trigger_id, from_step, position)
      ORDER BY v.position
     ON CONFLICT (environment_id, subscriber_id, step_id, transaction_id) DO NOTHING`,
    [
      environmentId,
      rows.map((row) => row.subscriberId),
      rows.map((row) => row.stepId),
      rows.map((row) => row.transactionId),
      rows.map((row) => row.digested?.digestId ?? null),
      rows.map((row) => row.digested?.payload ?? null),
      rows.map((row) => row.digested?.triggerId ?? null),
      rows.map((row) => row.digested?.fromStep ?? null),
    ],
  );
}

/** The first `limit` event payloads of each digest in arrival order, each row with its digest's exact total. */
export interface DigestEventRow {
  digest_id: number;
  payload: Record<string, unknown>;
  transaction_id: string;
  created_at: Date;
  total: number;
}

/**
 * Marks digests read by their runs, the first time only; locked in the order DigestEvents and
 * a cancel lock digests. A cancel that comes after leaves its events in them.
 */
export async function markDigestsRead(db: Queryable, environmentId: string, digestIds: readonly string[]): Promise<void> {
  await db.query(
    `WITH unread AS (
       SELECT id FROM triggers.digests
        WHERE environment_id = $1 AND id = ANY($2::bigint[]) AND read_at IS NULL
        ORDER BY workflow_id, subscriber_id, step_id, digest_key
          FOR UPDATE
     )
     UPDATE triggers.digests d SET read_at = now() FROM unread WHERE d.id = unread.id`,
    [environmentId, digestIds],
  );
}

export async function selectDigestEvents(db: Queryable, environmentId: string, digestIds: readonly string[], limit: number): Promise<DigestEventRow[]> {
  const { rows } = await db.query<DigestEventRow>(
    `SELECT digest_id, payload, transaction_id, created_at, total FROM (
       SELECT digest_id, payload, transaction_id, created_at, id,
              row_number() OVER (PARTITION BY digest_id ORDER BY id) AS position,
              count(*) OVER (PARTITION BY digest_id) AS total
         FROM triggers.digest_events
        WHERE environment_id = $1 AND digest_id = ANY($2::bigint[])
     ) e
     WHERE position <= $3
     ORDER BY digest_id, id`,
    [environmentId, digestIds, limit],
  );
  return rows;
}

/** Keeps the job of each trigger whose events joined a digest, once: the digest may pass to it. */
export async function insertDigestJobs(
  db: Queryable,
  environmentId: string,
  rows: readonly { triggerId: string; transactionId: string; job: Uint8Array }[],
): Promise<void> {
  await db.query(
    `INSERT INTO triggers.digest_jobs (environment_id, trigger_id, transaction_id, job)
     SELECT $1, v.trigger_id, v.transaction_id, v.job FROM unnest($2::text[], $3::text[], $4::bytea[]) AS v(trigger_id, transaction_id, job)
     ON CONFLICT (environment_id, trigger_id) DO NOTHING`,
    [environmentId, rows.map((row) => row.triggerId), rows.map((row) => row.transactionId), rows.map((row) => Buffer.from(row.job))],
  );
}

export async function deleteDigestJob(db: Queryable, environmentId: string, triggerId: string): Promise<void> {
  await db.query("DELETE FROM triggers.digest_jobs WHERE environment_id = $1 AND trigger_id = $2", [environmentId, triggerId]);
}

/**
 * Locks the open digests a trigger opened, every digest it joined (open or closed), and the due
 * ones named, in the order DigestEvents and the relay lock digests: a concurrent cancel of
 * another of their triggers waits, and then sees who opens each.
 */
export async function lockDigestsOf(
  db: Queryable,
  environmentId: string,
  triggerId: string,
  transactionId: string,
  dueDigestIds: readonly string[],
): Promise<void> {
  await db.query(
    `SELECT 1 FROM triggers.digests
      WHERE environment_id = $1
        AND ((closed_at IS NULL AND trigger_id = $2)
             OR id IN (SELECT digest_id FROM triggers.digest_events WHERE environment_id = $1 AND transaction_id = $3)
             OR id = ANY($4::bigint[]))
      ORDER BY workflow_id, subscriber_id, step_id, digest_key
        FOR UPDATE`,
    [environmentId, triggerId, transactionId, dueDigestIds],
  );
}

/**
 * Takes a canceled transaction's events out of the digests they joined: open ones, ones that came
 * due and whose run (another trigger's) has yet to read them, as Novu's run leaves canceled jobs
 * out, and the due ones named (whose run was the canceled trigger's and is dropped). Answers how
 * many left.
 */
export async function deleteDigestEventsOf(db: Queryable, environmentId: string, transactionId: string, dueDigestIds: readonly string[]): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM triggers.digest_events e USING triggers.digests d
      WHERE e.environment_id = $1 AND e.transaction_id = $2 AND d.id = e.digest_id
        AND (d.closed_at IS NULL OR d.read_at IS NULL OR d.id = ANY($3::bigint[]))`,
    [environmentId, transactionId, dueDigestIds],
  );
  return rowCount ?? 0;
}

/**
 * An open digest a trigger opened (or a due one of those named), and who is next in it: the trigger of its earliest event with
 * the step that event's run goes on from and that trigger's job (all null when none is left, or
 * the event's trigger was not recorded).
 */
export interface DigestSuccessorRow {
  id: string;
  subscriber_id: string;
  run_at: Date;
  trigger_id: string | null;
  from_step: number | null;
  job: Buffer | null;
}

export async function selectDigestSuccessors(
  db: Queryable,
  environmentId: string,
  triggerId: string,
  dueDigestIds: readonly string[],
): Promise<DigestSuccessorRow[]> {
  const { rows } = await db.query<DigestSuccessorRow>(
    `SELECT d.id::text, d.subscriber_id, d.run_at, next.trigger_id, next.from_step, j.job
       FROM triggers.digests d
       LEFT JOIN LATERAL (
         SELECT e.trigger_id, e.from_step FROM triggers.digest_events e WHERE e.digest_id = d.id ORDER BY e.id LIMIT 1
       ) next ON true
       LEFT JOIN triggers.digest_jobs j ON j.environment_id = d.environment_id AND j.trigger_id = next.trigger_id
      WHERE d.environment_id = $1 AND d.trigger_id = $2 AND (d.closed_at IS NULL OR d.id = ANY($3::bigint[]))
      ORDER BY d.id`,
    [environmentId, triggerId, dueDigestIds],
  );
  return rows;
}

/** Passes open digests from a canceled trigger to the triggers that now open them. */
export async function reassignDigests(
  db: Queryable,
  environmentId: string,
  canceledTriggerId: string,
  rows: readonly { digestId: string; triggerId: string }[],
): Promise<void> {
  await db.query(
    `UPDATE triggers.digests d SET trigger_id = v.trigger_id, passed_from = $4
       FROM unnest($2::bigint[], $3::text[]) AS v(id, trigger_id)
      WHERE d.environment_id = $1 AND d.id = v.id`,
    [environmentId, rows.map((row) => row.digestId), rows.map((row) => row.triggerId), canceledTriggerId],
  );
}

/** The digests passed on from a canceled trigger, each with the transaction of the trigger it passed to. */
export async function selectDigestsPassedFrom(
  db: Queryable,
  environmentId: string,
  canceledTriggerId: string,
): Promise<{ transaction_id: string; subscriber_id: string; step_id: string }[]> {
  const { rows } = await db.query<{ transaction_id: string; subscriber_id: string; step_id: string }>(
    `SELECT r.transaction_id, d.subscriber_id, d.step_id FROM triggers.digests d
       JOIN triggers.trigger_records r ON r.environment_id = d.environment_id AND r.id = d.trigger_id
      WHERE d.environment_id = $1 AND d.passed_from = $2
      ORDER BY d.id`,
    [environmentId, canceledTriggerId],
  );
  return rows;
}

/** Closes open digests no event is left in: later events of their keys open new ones. */
export async function closeDigests(db: Queryable, environmentId: string, digestIds: readonly string[]): Promise<void> {
  await db.query("UPDATE triggers.digests SET closed_at = now() WHERE environment_id = $1 AND id = ANY($2::bigint[]) AND closed_at IS NULL", [
    environmentId,
    digestIds,
  ]);
}

/**
 * Deletes up to `limit` rows of digest and throttle state no run can need any more, answering how
 * many went: digests closed before `before` (with their events), events a backoff ran at once,
 * keys whose last event is older (a backoff window longer than the retention then counts as
 * over), kept jobs older than it whose events are in no open digest, and throttle windows that
 * ended before it.
 */
export async function purgeStepState(db: Queryable, before: Date, limit: number): Promise<number> {
  const { rows } = await db.query<{ purged: number }>(
    `WITH closed AS (
       DELETE FROM triggers.digests
        WHERE id IN (SELECT id FROM triggers.digests WHERE closed_at < $1 ORDER BY closed_at LIMIT $2)
       RETURNING 1
     ),
     lone AS (
       DELETE FROM triggers.digest_events
        WHERE id IN (SELECT id FROM triggers.digest_events WHERE digest_id IS NULL AND created_at < $1 ORDER BY created_at LIMIT $2)
       RETURNING 1
     ),
     idle AS (
       DELETE FROM triggers.digest_keys k
        WHERE (environment_id, workflow_id, subscriber_id, step_id, digest_key) IN (
                SELECT environment_id, workflow_id, subscriber_id, step_id, digest_key FROM triggers.digest_keys
                 WHERE last_event_at < $1 ORDER BY last_event_at LIMIT $2)
       RETURNING 1
     ),
     unneeded AS (
       DELETE FROM triggers.digest_jobs
        WHERE (environment_id, trigger_id) IN (
                SELECT j.environment_id, j.trigger_id FROM triggers.digest_jobs j
                 WHERE j.created_at < $1
                   AND NOT EXISTS (SELECT 1 FROM triggers.digest_events e JOIN triggers.digests d ON d.id = e.digest_id
                                    WHERE e.environment_id = j.environment_id AND e.transaction_id = j.transaction_id AND d.closed_at IS NULL)
                 ORDER BY j.created_at LIMIT $2)
       RETURNING 1
     ),
     ended AS (
       DELETE FROM triggers.throttle_windows
        WHERE (environment_id, throttle_key) IN (
                SELECT environment_id, throttle_key FROM triggers.throttle_windows WHERE window_ends < $1 ORDER BY window_ends LIMIT $2)
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM closed) + (SELECT count(*) FROM lone) + (SELECT count(*) FROM idle) + (SELECT count(*) FROM unneeded) + (SELECT count(*) FROM ended) AS purged`,
    [before, limit],
  );
  return rows[0]!.purged;
}

/**
 * Deletes up to `limit` trigger records made before `before`, answering how many went: their
 * transactionIds are free again. A record a schedule still names (a delay or digest not yet
 * resumed) stays, so its trigger can still be cancelled and its id stays taken.
 */
export async function purgeTriggerRecords(db: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM triggers.trigger_records WHERE id IN (
       SELECT r.id FROM triggers.trigger_records r
        WHERE r.created_at < $1
          AND NOT EXISTS (SELECT 1 FROM triggers.schedules s WHERE s.environment_id = r.environment_id AND s.trigger_id = r.id)
        ORDER BY r.created_at
        LIMIT $2
     )`,
    [before, limit],
  );
  return rowCount ?? 0;
}

// Throttle windows

export interface ThrottleWindow {
  key: string;
  ends: Date;
  transactions: string[];
}

/**
 * The keys' windows, locked until the transaction ends: a key without one gets a row already
 * ended. Rows are taken in key order, as every writer takes them (as lockDigestKeys does).
 */
export async function lockThrottleWindows(db: Queryable, environmentId: string, keys: readonly string[]): Promise<ThrottleWindow[]> {
  const { rows } = await db.query<{ throttle_key: string; window_ends: Date; transactions: string[] }>(
    `INSERT INTO triggers.throttle_windows (environment_id, throttle_key, window_ends, transactions)
     SELECT $1, key, '-infinity', '{}' FROM unnest($2::text[]) AS key ORDER BY key
     ON CONFLICT (environment_id, throttle_key) DO UPDATE SET window_ends = throttle_windows.window_ends
     RETURNING throttle_key, window_ends, transactions`,
    [environmentId, keys],
  );
  return rows.map((row) => ({ key: row.throttle_key, ends: row.window_ends, transactions: row.transactions }));
}

export async function updateThrottleWindows(db: Queryable, environmentId: string, windows: readonly ThrottleWindow[]): Promise<void> {
  await db.query(
    `UPDATE triggers.throttle_windows w SET window_ends = u.ends, transactions = u.transactions
       FROM jsonb_to_recordset($2::jsonb) AS u (key text, ends timestamptz, transactions text[])
      WHERE w.environment_id = $1 AND w.throttle_key = u.key`,
    [environmentId, JSON.stringify(windows)],
  );
}
