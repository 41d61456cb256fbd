import { subscribersV1, triggersV1, workflowsV1 } from "@notify/proto";
import {
  announcer,
  CHANGE_SUBJECTS,
  connectNatsInBackground,
  createClient,
  createFollowedCache,
  followChanges,
  createLogger,
  createPool,
  createPreparedReadPool,
  createRpcTransport,
  migrate,
  migrationsBeside,
  runWhenMain,
  serveRpc,
} from "@notify/runtime";
import { readConfig, type MessagesConfig } from "./config.js";
import { startRetention } from "./retention.js";
import { routes } from "./routes.js";
import { createSnoozeSchedule } from "./snoozes.js";
import { createSubscriberDirectory } from "./subscribers.js";
import { createWorkflowDirectory } from "./workflows.js";

export { readConfig };

const WORKFLOW_COPIES = 10_000;

export const migrations = migrationsBeside("messages", import.meta.url);

export interface RunningMessages {
  readonly port: number;
  /** Where /metrics is served. */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

/**
 * Composition root: pool, migrations, the subscribers and workflows clients, the copies of
 * subscribers and workflows kept while their changes are followed over NATS, the announcer of
 * changed feeds, service, RPC server, the retention sweep.
 */
export async function start(config: MessagesConfig): Promise<RunningMessages> {
  const log = createLogger("messages", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const preparedReads = createPreparedReadPool(config.DATABASE_URL);
  const subscribersTransport = createRpcTransport(config.SUBSCRIBERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  // With a size of 0 nothing is followed, so the (one-entry) cache is never live and keeps nothing.
  const subscriberCopies = createFollowedCache<subscribersV1.Subscriber>({ name: "messages_subscribers", max: Math.max(1, config.SUBSCRIBER_CACHE_SIZE) });
  const subscribers = createSubscriberDirectory(createClient(subscribersV1.SubscriberService, subscribersTransport.transport), subscriberCopies);
  const triggersTransport = createRpcTransport(config.TRIGGERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const workflowCopies = createFollowedCache<workflowsV1.Workflow>({ name: "messages_workflows", max: WORKFLOW_COPIES });
  const workflows = createWorkflowDirectory(createClient(workflowsV1.WorkflowService, triggersTransport.transport), workflowCopies);
  const nats = await connectNatsInBackground(config.NATS_URL, "messages");
  if (config.SUBSCRIBER_CACHE_SIZE > 0) void followChanges(nats, CHANGE_SUBJECTS.subscribers, subscriberCopies, log);
  void followChanges(nats, CHANGE_SUBJECTS.workflows, workflowCopies, log);
  const announceFeeds = announcer(nats.current, CHANGE_SUBJECTS.feeds);
  const announceReceived = announcer(nats.current, CHANGE_SUBJECTS.received, undefined, "split");
  const server = await serveRpc({
    host: config.MESSAGES_HOST,
    port: config.MESSAGES_PORT,
    metricsPort: config.MESSAGES_METRICS_PORT,
    log,
    internalToken: config.INTERNAL_RPC_TOKEN,
    routes: routes({
      pool,
      preparedReads,
      log,
      subscribers,
      workflows,
      markAllChunkRows: config.MARK_ALL_CHUNK_ROWS,
      snoozes: createSnoozeSchedule(createClient(triggersV1.TriggerService, triggersTransport.transport)),
      maxSnoozeMs: config.INBOX_MAX_SNOOZE_HOURS * 3_600_000,
      announceFeeds,
      announceReceived,
    }),
  });
  const retention = startRetention(
    { pool, notificationDays: config.NOTIFICATION_RETENTION_DAYS, messageDays: config.MESSAGE_RETENTION_DAYS, announceFeeds, log },
    config.RETENTION_SWEEP_INTERVAL_MS,
  );
  return {
    port: server.port,
    metricsPort: server.metricsPort,
    async stop() {
      await retention.stop();
      await server.close();
      subscribersTransport.close();
      triggersTransport.close();
      await Promise.allSettled([nats.close(), pool.end(), preparedReads.end()]);
    },
  };
}

runWhenMain(import.meta.url, "messages", readConfig, start);
