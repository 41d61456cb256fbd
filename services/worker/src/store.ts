import type { Queryable } from "@notify/runtime";

export async function insertDeadLetter(
  db: Queryable,
  environmentId: string | null,
  row: { organizationId: string | null; subject: string; job: Uint8Array; error: string; deliveries: number },
): Promise<void> {
  await db.query(
    `INSERT INTO worker.dead_letters (environment_id, organization_id, subject, job, error, deliveries)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [environmentId, row.organizationId, row.subject, Buffer.from(row.job), row.error, row.deliveries],
  );
}

export interface DeadLetterRow {
  id: string;
  environment_id: string | null;
  subject: string;
  job: Buffer;
  error: string;
  deliveries: number;
  created_at: Date;
}

/** The newest dead letters first. */
export async function selectDeadLetters(db: Queryable, limit: number): Promise<DeadLetterRow[]> {
  const { rows } = await db.query<DeadLetterRow>(
    "SELECT id, environment_id, subject, job, error, deliveries, created_at FROM worker.dead_letters ORDER BY id DESC LIMIT $1",
    [limit],
  );
  return rows;
}

/** Locks the dead letter until the transaction ends, so two replays of it cannot both publish. */
export async function selectDeadLetterForReplay(db: Queryable, id: string): Promise<DeadLetterRow | undefined> {
  const { rows } = await db.query<DeadLetterRow>(
    "SELECT id, environment_id, subject, job, error, deliveries, created_at FROM worker.dead_letters WHERE id = $1 FOR UPDATE SKIP LOCKED",
    [id],
  );
  return rows[0];
}

export async function deleteDeadLetter(db: Queryable, id: string): Promise<void> {
  await db.query("DELETE FROM worker.dead_letters WHERE id = $1", [id]);
}

export async function selectDeadLetter(db: Queryable, id: string): Promise<DeadLetterRow | undefined> {
  const { rows } = await db.query<DeadLetterRow>(
    "SELECT id, environment_id, subject, job, error, deliveries, created_at FROM worker.dead_letters WHERE id = $1",
    [id],
  );
  return rows[0];
}

/** Forgets these dead letters; answers the ids that were there. */
export async function deleteDeadLetters(db: Queryable, ids: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>("DELETE FROM worker.dead_letters WHERE id = ANY($1::bigint[]) RETURNING id::text AS id", [ids]);
  return rows.map((row) => row.id);
}

export type LeaseState = "sending" | "retrying" | "sent" | "failed" | "unknown";

export interface LeaseRequest {
  messageId: string;
  organizationId: string;
  environmentId: string;
  providerId: string;
}

export interface Lease {
  message_id: string;
  state: LeaseState;
  attempts: number;
  first_attempt_at: Date;
  updated_at: Date;
  provider_message_id: string | null;
  error_id: string | null;
  error_text: string | null;
  /** For a lease waiting for a retry: how long until it is due, by the database's clock (negative once due). */
  retry_due_in_ms: number | null;
  /** True when this call took the lease (a first try, or a retry that was due); false: the row as it stands. */
  claimed: boolean;
}

const LEASE_COLUMNS = "message_id, state, attempts, first_attempt_at, updated_at, provider_message_id, error_id, error_text";

/** The columns of a lease row `l`, and how long until its retry is due. */
const LEASE_RETURNED = `${LEASE_COLUMNS.split(", ")
  .map((column) => `l.${column}`)
  .join(", ")}, (extract(epoch FROM l.retry_at - now()) * 1000)::int AS retry_due_in_ms`;

export interface LeaseOutcome {
  messageId: string;
  state: Exclude<LeaseState, "sending">;
  providerMessageId?: string | undefined;
  errorId?: string | undefined;
  errorText?: string | undefined;
  /** For 'retrying': how long the lease waits before it may be claimed again. */
  retryInMs?: number | undefined;
}

/**
 * Records how the calls of some claimed leases ended and claims the leases of messages about to
 * be sent, in one statement (one commit for both). A message never tried is claimed as attempt 1,
 * one waiting for a retry as its next attempt; every other message answers its lease as it stands,
 * unclaimed. Message ids must be distinct, and none may be both finished and claimed. Planned
 * for each batch (unnamed, on an ordinary pool): a plan kept from when the table was small reads
 * every lease by a sequential scan where the batch's few need the primary key, and planning costs
 * a small part of what the statement does.
 */
export async function finishAndClaimLeases(db: Queryable, outcomes: readonly LeaseOutcome[], requests: readonly LeaseRequest[]): Promise<Lease[]> {
  const { rows } = await db.query<Lease>({
    text: `WITH finished AS (
       UPDATE worker.send_leases l
          SET state = o.state, provider_message_id = o.provider_message_id, error_id = o.error_id, error_text = o.error_text, updated_at = now(),
              retry_at = now() + make_interval(secs => o.retry_in_ms / 1000.0)
         FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[])
           AS o(message_id, state, provider_message_id, error_id, error_text, retry_in_ms)
        -- An outcome taken to be unknown (its worker seemed dead) never overwrites one its worker recorded after all.
        WHERE l.message_id = o.message_id AND (o.state <> 'unknown' OR l.state = 'sending')
     ), input AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS i(message_id, organization_id, environment_id, provider_id)
     ), claimed AS (
       INSERT INTO worker.send_leases AS l (message_id, organization_id, environment_id, provider_id, state, attempts)
       SELECT message_id, organization_id, environment_id, provider_id, 'sending', 1 FROM input
       ON CONFLICT (message_id) DO UPDATE SET state = 'sending', attempts = l.attempts + 1, updated_at = now()
        WHERE l.state = 'retrying' AND (l.retry_at IS NULL OR l.retry_at <= now())
       RETURNING ${LEASE_RETURNED}, true AS claimed
     )
     SELECT * FROM claimed
     UNION ALL
     SELECT ${LEASE_RETURNED}, false
       FROM worker.send_leases l JOIN input i ON i.message_id = l.message_id
      WHERE NOT EXISTS (SELECT 1 FROM claimed c WHERE c.message_id = l.message_id)`,
    values: [
      requests.map((request) => request.messageId),
      requests.map((request) => request.organizationId),
      requests.map((request) => request.environmentId),
      requests.map((request) => request.providerId),
      outcomes.map((outcome) => outcome.messageId),
      outcomes.map((outcome) => outcome.state),
      outcomes.map((outcome) => outcome.providerMessageId ?? null),
      outcomes.map((outcome) => outcome.errorId ?? null),
      outcomes.map((outcome) => outcome.errorText ?? null),
      outcomes.map((outcome) => (outcome.state === "retrying" ? Math.round(outcome.retryInMs ?? 0) : null)),
    ],
  });
  return rows;
}

/** Takes over a lease whose worker died mid-call, as its next attempt; undefined when another worker took it first. */
export async function takeOverLease(db: Queryable, messageId: string, attempts: number): Promise<Lease | undefined> {
  const { rows } = await db.query<Lease>(
    `UPDATE worker.send_leases l SET attempts = attempts + 1, updated_at = now()
      WHERE message_id = $1 AND state = 'sending' AND attempts = $2
      RETURNING ${LEASE_RETURNED}, true AS claimed`,
    [messageId, attempts],
  );
  return rows[0];
}

/**
 * Deletes at most `limit` leases first tried more than `olderThanMs` ago, except those whose
 * outcome is unknown or still being sent (an operator looks at them); answers how many went.
 * Rows another sweep holds are skipped, so sweeps of several workers share the work.
 */
export async function deleteOldLeases(db: Queryable, olderThanMs: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    // By the rows' own addresses, which the subquery locks: joining on the key instead scanned the whole table.
    `DELETE FROM worker.send_leases WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM worker.send_leases
        WHERE first_attempt_at < now() - make_interval(secs => $1::double precision / 1000) AND state IN ('sent', 'failed', 'retrying')
        LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    [olderThanMs, limit],
  );
  return rowCount ?? 0;
}

export type UnknownSend = Omit<Lease, "claimed" | "retry_due_in_ms"> & { environment_id: string; provider_id: string };

/** Sends whose outcome is unknown (a worker died mid-call), newest first: for an operator to check with the provider. */
export async function selectUnknownSends(db: Queryable, limit: number): Promise<UnknownSend[]> {
  const { rows } = await db.query<UnknownSend>(
    `SELECT ${LEASE_COLUMNS}, environment_id, provider_id FROM worker.send_leases WHERE state = 'unknown' ORDER BY updated_at DESC LIMIT $1`,
    [limit],
  );
  return rows;
}

/**
 * Claims the setup of an integration's event webhook: false while another setup of it, claimed
 * less than `staleAfterMs` ago, is under way.
 */
export async function claimWebhookSetup(db: Queryable, integrationId: string, staleAfterMs: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO worker.webhook_setups AS s (integration_id) VALUES ($1)
     ON CONFLICT (integration_id) DO UPDATE SET claimed_at = now() WHERE s.claimed_at < now() - make_interval(secs => $2::double precision / 1000)`,
    [integrationId, staleAfterMs],
  );
  return rowCount === 1;
}

export async function releaseWebhookSetup(db: Queryable, integrationId: string): Promise<void> {
  await db.query("DELETE FROM worker.webhook_setups WHERE integration_id = $1", [integrationId]);
}
