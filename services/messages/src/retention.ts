import { Counter, metricsRegistry, repeatEvery, type Announce, type Logger, type Pool } from "@notify/runtime";
import * as store from "./store.js";

/**
 * How long what the service keeps is kept, as the reference service keeps it: a notification (an
 * activity feed entry) with its email, SMS, chat and push messages and their execution details
 * for `notificationDays`; every message, the in-app ones being the last left by default, for
 * `messageDays`. 0 keeps them for good.
 */
export interface RetentionDeps {
  pool: Pool;
  notificationDays: number;
  messageDays: number;
  /** In-app messages going change their subscribers' feeds: the pages the gateway keeps and the Inbox's counts. */
  announceFeeds: Announce;
  log: Logger;
  /** Rows deleted per statement: a sweep holds the locks of at most this many at once. */
  batchRows?: number;
  /** Statements per sweep, over every environment: a backlog goes over several sweeps rather than holding a connection. */
  statementsPerSweep?: number;
}

const BATCH_ROWS = 2_000;
const STATEMENTS_PER_SWEEP = 200;

const retentionDeleted = new Counter<"kind">({
  name: "notify_retention_deleted_total",
  help: "Notifications and messages deleted once older than their retention (NOTIFICATION_RETENTION_DAYS, MESSAGE_RETENTION_DAYS)",
  labelNames: ["kind"],
  registers: [metricsRegistry],
});

/** One sweep: the expired notifications (with their sent messages), then the expired messages, of every environment. */
export async function sweepExpired(deps: RetentionDeps): Promise<{ notifications: number; messages: number }> {
  const batchRows = deps.batchRows ?? BATCH_ROWS;
  let statementsLeft = deps.statementsPerSweep ?? STATEMENTS_PER_SWEEP;
  async function deleteEach(environmentIds: readonly string[], deleteBatch: (environmentId: string) => Promise<number>): Promise<number> {
    let deleted = 0;
    for (const environmentId of environmentIds) {
      for (let count = batchRows; count === batchRows; ) {
        if (statementsLeft === 0) return deleted;
        statementsLeft -= 1;
        count = await deleteBatch(environmentId);
        deleted += count;
      }
    }
    return deleted;
  }
  const { pool, notificationDays, messageDays } = deps;
  const notifications =
    notificationDays === 0
      ? 0
      : await deleteEach(await store.selectNotificationEnvironments(pool), (id) => store.deleteExpiredNotifications(pool, id, notificationDays, batchRows));
  const messages =
    messageDays === 0
      ? 0
      : await deleteEach(await store.selectMessageEnvironments(pool), async (id) => {
          const { deleted, feedsChanged } = await store.deleteExpiredMessages(pool, id, messageDays, batchRows);
          await deps.announceFeeds(id, feedsChanged);
          return deleted;
        });
  return { notifications, messages };
}

/** Sweeps every `everyMs` while either retention is set. Every replica sweeps; they skip each other's rows. */
export function startRetention(deps: RetentionDeps, everyMs: number): { stop(): Promise<void> } {
  if (deps.notificationDays === 0 && deps.messageDays === 0) return { stop: async () => undefined };
  return repeatEvery(
    everyMs,
    async () => {
      const deleted = await sweepExpired(deps);
      retentionDeleted.labels("notifications").inc(deleted.notifications);
      retentionDeleted.labels("messages").inc(deleted.messages);
      if (deleted.notifications + deleted.messages > 0) deps.log.info(deleted, "expired notifications and messages deleted");
    },
    (error) => deps.log.warn({ err: error }, "retention sweep failed; trying again at the next"),
  );
}
