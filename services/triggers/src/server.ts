import type { workflowsV1 } from "@notify/proto";
import {
  CHANGE_SUBJECTS,
  announcer,
  connectNatsInBackground,
  createFollowedCache,
  followChanges,
  createLogger,
  createPool,
  migrate,
  migrationsBeside,
  runWhenMain,
  sampledGauge,
  serveRpc,
  jobSubject,
  JOB_KINDS,
  type JobStream,
} from "@notify/runtime";
import { readConfig, type TriggersConfig } from "./config.js";
import { routes } from "./routes.js";
import { startRelay } from "./triggers/relay.js";
import { countOutboxBacklog } from "./triggers/store.js";

export { readConfig };

export const migrations = migrationsBeside("triggers", import.meta.url);

export interface RunningTriggers {
  readonly port: number;
  /** Where /metrics is served. */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

const WORKFLOW_COPIES = 10_000;

/** Beyond this many waiting jobs the gauge reads this many: the alert is the same, the scrape stays cheap. */
const OUTBOX_BACKLOG_COUNTED = 100_000;

const watchOutboxBacklog = sampledGauge(
  "notify_triggers_outbox_backlog",
  "Accepted trigger jobs waiting in the outbox to be published to JetStream (counted up to a bound)",
  [],
);

/**
 * Composition root: pool, migrations, the workflows kept by trigger identifier (followed over
 * NATS, as every replica announces its workflow writes), services, RPC server, outbox relay.
 */
export async function start(config: TriggersConfig): Promise<RunningTriggers> {
  const log = createLogger("triggers", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const stream: JobStream = { name: config.JOBS_STREAM, subjectPrefix: config.JOBS_SUBJECT_PREFIX };
  const jobSubjectOfTriggers = jobSubject(stream, JOB_KINDS.trigger);
  const workflowsByIdentifier = createFollowedCache<workflowsV1.Workflow>({ name: "triggers_workflows", max: WORKFLOW_COPIES });
  const nats = await connectNatsInBackground(config.NATS_URL, "triggers");
  void followChanges(nats, CHANGE_SUBJECTS.workflows, workflowsByIdentifier, log);
  const announceWorkflows = announcer(nats.current, CHANGE_SUBJECTS.workflows, workflowsByIdentifier);
  const server = await serveRpc({
    host: config.TRIGGERS_HOST,
    port: config.TRIGGERS_PORT,
    metricsPort: config.TRIGGERS_METRICS_PORT,
    log,
    internalToken: config.INTERNAL_RPC_TOKEN,
    routes: routes({
      pool,
      log,
      jobSubject: jobSubjectOfTriggers,
      announceWorkflows,
      workflowsByIdentifier,
      enforceRecipientIds: config.SUBSCRIBER_ID_VALIDATION === "enforce",
    }),
  });
  // Acceptance needs only Postgres; the relay catches up whenever NATS is reachable.
  const relay = startRelay({
    pool,
    databaseUrl: config.DATABASE_URL,
    natsUrl: config.NATS_URL,
    stream,
    log,
    recordRetentionDays: config.NOTIFICATION_RETENTION_DAYS,
  });
  const stopWatchingOutbox = watchOutboxBacklog(async (set) => set({}, await countOutboxBacklog(pool, OUTBOX_BACKLOG_COUNTED)));
  return {
    port: server.port,
    metricsPort: server.metricsPort,
    async stop() {
      stopWatchingOutbox();
      await server.close();
      await relay.stop();
      await Promise.allSettled([nats.close(), pool.end()]);
    },
  };
}

runWhenMain(import.meta.url, "triggers", readConfig, start);
