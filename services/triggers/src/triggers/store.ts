import type { Queryable } from "@notify/runtime";

export interface AcceptedTrigger {
  id: string;
  transactionId: string;
  workflowId: string;
  /** The TriggerJob the relay publishes. */
  job: Uint8Array;
}

export interface TriggerRecordRow {
  id: string;
  transaction_id: string;
  status: string;
  canceled_at: Date | null;
}

/**
 * Records accepted triggers, once per (environment, transactionId): the unique key decides, not a
 * prior read, so concurrent repeats cannot both pass. Answers the transaction ids it inserted.
 */
export async function insertTriggerRecords(
  db: Queryable,
  environmentId: string,
  organizationId: string,
  rows: readonly AcceptedTrigger[],
): Promise<Set<string>> {
  const { rows: inserted } = await db.query<{ transaction_id: string }>(
    `INSERT INTO triggers.trigger_records (environment_id, organization_id, id, transaction_id, workflow_id, status)
     SELECT $1, $2, v.id, v.transaction_id, v.workflow_id, 'processed'
       FROM unnest($3::text[], $4::text[], $5::text[]) AS v(id, transaction_id, workflow_id)
     ON CONFLICT (environment_id, transaction_id) DO NOTHING
     RETURNING transaction_id`,
    [environmentId, organizationId, rows.map((row) => row.id), rows.map((row) => row.transactionId), rows.map((row) => row.workflowId)],
  );
  return new Set(inserted.map((row) => row.transaction_id));
}

/** The outbox rows the relay publishes; written in the transaction that records the triggers. */
export async function insertOutbox(db: Queryable, environmentId: string, rows: readonly { triggerId: string; subject: string; job: Uint8Array }[]): Promise<void> {
  await db.query(
    `INSERT INTO triggers.outbox (environment_id, trigger_id, subject, job)
     SELECT $1, v.trigger_id, v.subject, v.job FROM unnest($2::text[], $3::text[], $4::bytea[]) AS v(trigger_id, subject, job)`,
    [environmentId, rows.map((row) => row.triggerId), rows.map((row) => row.subject), rows.map((row) => Buffer.from(row.job))],
  );
}

/** Wakes the relay's scheduler (LISTEN triggers_schedules) once the transaction commits. */
export async function notifySchedules(db: Queryable): Promise<void> {
  await db.query("SELECT pg_notify('triggers_schedules', '')");
}

/** Wakes the relay (LISTEN triggers_outbox) once the transaction commits. */
export async function notifyOutbox(db: Queryable): Promise<void> {
  await db.query("SELECT pg_notify('triggers_outbox', '')");
}

export async function selectTriggerRecords(db: Queryable, environmentId: string, transactionIds: readonly string[]): Promise<TriggerRecordRow[]> {
  const { rows } = await db.query<TriggerRecordRow>(
    "SELECT id, transaction_id, status, canceled_at FROM triggers.trigger_records WHERE environment_id = $1 AND transaction_id = ANY($2)",
    [environmentId, transactionIds],
  );
  return rows;
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

/** Removes a canceled trigger's job if the relay has not published it yet. */
export async function deleteOutboxFor(db: Queryable, environmentId: string, triggerId: string): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM triggers.outbox WHERE environment_id = $1 AND trigger_id = $2", [environmentId, triggerId]);
  return rowCount ?? 0;
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

export interface OutboxRow {
  id: string;
  /** The JetStream msgID: the trigger id, or the schedule's for a resumption. */
  message_id: string;
  subject: string;
  job: Buffer;
}

/**
 * The oldest unpublished jobs of every environment, locked so concurrent relays (replicas) take
 * different ones. The relay serves no caller, so this is not scoped to one environment.
 */
export async function lockOutboxBatch(db: Queryable, limit: number): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(
    "SELECT id, coalesce(message_id, trigger_id) AS message_id, subject, job FROM triggers.outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
    [limit],
  );
  return rows;
}

/** Keeps jobs to publish at `run_at`; a dedupe key already kept is skipped. */
export async function insertSchedules(
  db: Queryable,
  environmentId: string,
  rows: readonly { triggerId: string; dedupeKey: string; subject: string; job: Uint8Array; runAt: Date }[],
): Promise<void> {
  await db.query(
    `INSERT INTO triggers.schedules (environment_id, trigger_id, dedupe_key, subject, job, run_at)
     SELECT $1, v.trigger_id, v.dedupe_key, v.subject, v.job, v.run_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[], $6::timestamptz[]) AS v(trigger_id, dedupe_key, subject, job, run_at)
     ON CONFLICT (environment_id, dedupe_key) DO NOTHING`,
    [
      environmentId,
      rows.map((row) => row.triggerId),
      rows.map((row) => row.dedupeKey),
      rows.map((row) => row.subject),
      rows.map((row) => Buffer.from(row.job)),
      rows.map((row) => row.runAt),
    ],
  );
}

export async function deleteSchedulesFor(db: Queryable, environmentId: string, triggerId: string): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM triggers.schedules WHERE environment_id = $1 AND trigger_id = $2", [environmentId, triggerId]);
  return rowCount ?? 0;
}

/**
 * Moves every environment's due schedules (up to `limit`) into the outbox in one statement;
 * answers how many moved. Infrastructure, like the relay: not scoped to one environment.
 */
export async function moveDueSchedules(db: Queryable, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `WITH due AS (
       DELETE FROM triggers.schedules
        WHERE id IN (SELECT id FROM triggers.schedules WHERE run_at <= now() ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id, environment_id, trigger_id, subject, job
     )
     INSERT INTO triggers.outbox (environment_id, trigger_id, message_id, subject, job)
     SELECT environment_id, trigger_id, trigger_id || '.resume.' || id, subject, job FROM due`,
    [limit],
  );
  return rowCount ?? 0;
}

/** When the next schedule is due, if any. */
export async function selectNextScheduleTime(db: Queryable): Promise<Date | undefined> {
  const { rows } = await db.query<{ run_at: Date | null }>("SELECT min(run_at) AS run_at FROM triggers.schedules");
  return rows[0]?.run_at ?? undefined;
}

export async function deleteOutboxRows(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query("DELETE FROM triggers.outbox WHERE id = ANY($1::bigint[])", [ids]);
}
