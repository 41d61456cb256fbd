import pg from "pg";
import {
  connectNats,
  ensureJobStream,
  maxJobBytes,
  publishJobs,
  withTransaction,
  type JobStream,
  type Logger,
  type NatsConnection,
  type Pool,
} from "@notify/runtime";
import * as store from "./store.js";

export interface RelayOptions {
  pool: Pool;
  databaseUrl: string;
  natsUrl: string;
  stream: JobStream;
  log: Logger;
  /** Rows published per transaction. */
  batchSize?: number;
  /** The slow fallback when no NOTIFY arrives (a missed notification, another replica's rows). */
  idleCheckMs?: number;
  /** Days a trigger record (its transactionId taken) is kept; 0: for good. */
  recordRetentionDays: number;
}

/** How long closed digests and their events are kept (a redelivered resumption reads them). */
const DIGEST_RETENTION_MS = 7 * 86_400_000;
/** Digest and throttle state and old trigger records are purged at most this often, in statements of at most PURGE_BATCH rows per table. */
const PURGE_EVERY_MS = 10 * 60_000;
const PURGE_BATCH = 5_000;

export interface Relay {
  stop(): Promise<void>;
}

/**
 * Moves due schedules into the outbox, then publishes outbox rows to JetStream, deleting them in a
 * transaction that commits once every publish is acknowledged. A crash between publish and commit
 * republishes with the same msgID, which the stream's de-duplication absorbs. Wakes on
 * LISTEN/NOTIFY (the outbox notifies whatever inserts into it); while NATS is down it retries with
 * back-off and the rows stay, so nothing acknowledged is lost.
 */
export function startRelay(options: RelayOptions): Relay {
  const { pool, log } = options;
  const batchSize = options.batchSize ?? 500;
  const idleCheckMs = options.idleCheckMs ?? 30_000;
  let purgedAt = 0;
  let stopped = false;
  let nats: NatsConnection | undefined;
  let listener: pg.Client | undefined;
  let wake: (() => void) | undefined;
  /** Outbox rows may be waiting. */
  let pending = true;
  /** Schedules were added, or may have come due: look at them before sleeping again. */
  let schedulesChanged = true;
  let nextDue: Date | undefined;

  const nudge = (notification: pg.Notification) => {
    if (notification.channel === "triggers_schedules") schedulesChanged = true;
    else pending = true;
    wake?.();
  };

  async function connect(): Promise<NatsConnection> {
    if (nats && !nats.isClosed()) return nats;
    nats = await connectNats(options.natsUrl, "triggers-relay");
    await ensureJobStream(nats, options.stream);
    return nats;
  }

  async function listen(): Promise<void> {
    if (listener) return;
    const client = new pg.Client({ connectionString: options.databaseUrl });
    client.on("error", () => {
      listener = undefined;
    });
    client.on("notification", nudge);
    await client.connect();
    await client.query("LISTEN triggers_outbox");
    await client.query("LISTEN triggers_schedules");
    listener = client;
  }

  /** Moves due schedules into the outbox; answers when the next one is due. */
  async function moveDue(): Promise<Date | undefined> {
    while ((await store.moveDueSchedules(pool, batchSize)) === batchSize) {
      // a full batch: more may be due
    }
    return store.selectNextScheduleTime(pool);
  }

  /** Publishes one batch; answers how many rows went out. */
  async function drainOnce(connection: NatsConnection): Promise<number> {
    return withTransaction(pool, async (tx) => {
      // Deleted rows stay until the commit: a failed publish rolls them back into the outbox.
      const rows = await store.takeOutboxBatch(tx, batchSize);
      // A job larger than the server takes can never be published, and retrying it would hold
      // every row behind it. Acceptance refuses such triggers; one accepted before, or under a
      // larger bound than the server's now, is dropped here, and said so.
      const maxBytes = maxJobBytes(connection);
      for (const row of rows.filter((candidate) => candidate.job.length > maxBytes)) {
        log.error({ messageId: row.message_id, bytes: row.job.length, maxBytes }, "trigger job larger than the stream takes: dropped, never run");
      }
      await publishJobs(
        connection,
        rows
          .filter((row) => row.job.length <= maxBytes)
          .map((row) => ({ subject: row.subject, data: row.job, msgID: row.message_id, origin: row.origin ?? undefined })),
      );
      return rows.length;
    });
  }

  const loop = (async () => {
    let backoff = 100;
    while (!stopped) {
      try {
        await listen();
        const connection = await connect();
        // Schedules are only read when one was added or the earliest known one is due, so an
        // ordinary outbox wake-up (every accepted trigger batch) costs no schedule queries.
        if (schedulesChanged || (nextDue && nextDue.getTime() <= Date.now())) {
          schedulesChanged = false;
          nextDue = await moveDue();
        }
        if (pending) {
          pending = false;
          while (!stopped && (await drainOnce(connection)) === batchSize) {
            // a full batch: more may be waiting
          }
        }
        if (Date.now() - purgedAt >= PURGE_EVERY_MS) {
          purgedAt = Date.now();
          const before = new Date(Date.now() - DIGEST_RETENTION_MS);
          while (!stopped && (await store.purgeStepState(pool, before, PURGE_BATCH)) > 0) {
            // old state left: another round
          }
          if (options.recordRetentionDays > 0) {
            const recordsBefore = new Date(Date.now() - options.recordRetentionDays * 86_400_000);
            // A hold lasts as long as its trigger's record, which by default is as long as a send it
            // waits for may still be made (the worker's DELIVERY_MAX_AGE_MS).
            while (!stopped && (await store.purgeHolds(pool, recordsBefore, PURGE_BATCH)) > 0) {
              // old holds left: another round
            }
            while (!stopped && (await store.purgeTriggerRecords(pool, recordsBefore, PURGE_BATCH)) > 0) {
              // old records left: another round
            }
          }
        }
        backoff = 100;
        // Sleep until notified, until the next schedule is due, or at most the idle check.
        const untilDue = nextDue ? Math.max(nextDue.getTime() - Date.now(), 0) : idleCheckMs;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(
            () => {
              // The slow fallback: a missed notification, or another replica's rows.
              pending = true;
              schedulesChanged = true;
              resolve();
            },
            Math.min(untilDue, idleCheckMs),
          );
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
          if (pending || schedulesChanged || stopped) wake();
        });
        wake = undefined;
      } catch (error) {
        pending = true;
        schedulesChanged = true;
        log.warn({ err: error, retryInMs: backoff }, "outbox relay cannot publish yet");
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, 5_000);
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await listener?.end().catch(() => undefined);
      await nats?.drain().catch(() => undefined);
    },
  };
}
