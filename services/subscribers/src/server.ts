import { Code, ConnectError } from "@connectrpc/connect";
import { toBinary } from "@bufbuild/protobuf";
import { integrationsV1, subscribersV1, workflowsV1 } from "@notify/proto";
import {
  CHANGE_SUBJECTS,
  JOB_KINDS,
  type BackgroundNats,
  type JobStream,
  announcer,
  connectNatsInBackground,
  createClient,
  createLogger,
  createPool,
  createRpcTransport,
  ensureJobStream,
  jobSubject,
  migrate,
  migrationsBeside,
  publishJobs,
  runWhenMain,
  serveRpc,
} from "@notify/runtime";
import { readConfig, type SubscribersConfig } from "./config.js";

export { readConfig };
import { routes } from "./routes.js";

export const migrations = migrationsBeside("subscribers", import.meta.url);

export interface RunningSubscribers {
  readonly port: number;
  /** Where /metrics is served. */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

/**
 * Publishes deletion jobs through the background connection, making sure once per connection
 * that the stream exists (the worker or the triggers relay may not have made it yet).
 */
function deletionPublisher(nats: BackgroundNats, stream: JobStream) {
  const subject = jobSubject(stream, JOB_KINDS.subscriberDeleted);
  let ensured: object | undefined;
  return async (job: subscribersV1.SubscriberDeletedJob) => {
    const connection = nats.current();
    try {
      if (!connection || connection.isClosed()) throw new Error("not connected");
      if (ensured !== connection) {
        await ensureJobStream(connection, stream);
        ensured = connection;
      }
      await publishJobs(connection, [{ subject, data: toBinary(subscribersV1.SubscriberDeletedJobSchema, job), msgID: `${subject}.${job.id}` }]);
    } catch (error) {
      throw new ConnectError("the job stream is not reachable; nothing was deleted", Code.Unavailable, undefined, undefined, error);
    }
  };
}

/** Composition root: pool, migrations, the integrations and workflow clients, NATS for change announcements and deletion jobs, service, RPC server. */
export async function start(config: SubscribersConfig): Promise<RunningSubscribers> {
  const log = createLogger("subscribers", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const integrationsRpc = createRpcTransport(config.INTEGRATIONS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const triggersRpc = createRpcTransport(config.TRIGGERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const integrations = createClient(integrationsV1.IntegrationService, integrationsRpc.transport);
  const workflows = createClient(workflowsV1.WorkflowService, triggersRpc.transport);
  const nats = await connectNatsInBackground(config.NATS_URL, "subscribers");
  const announce = announcer(nats.current, CHANGE_SUBJECTS.subscribers);
  const publishDeleted = deletionPublisher(nats, { name: config.JOBS_STREAM, subjectPrefix: config.JOBS_SUBJECT_PREFIX });
  const server = await serveRpc({
    host: config.SUBSCRIBERS_HOST,
    port: config.SUBSCRIBERS_PORT,
    metricsPort: config.SUBSCRIBERS_METRICS_PORT,
    log,
    internalToken: config.INTERNAL_RPC_TOKEN,
    routes: routes({ pool, log, integrations, workflows, announce, publishDeleted }),
  });
  return {
    port: server.port,
    metricsPort: server.metricsPort,
    async stop() {
      await server.close();
      integrationsRpc.close();
      triggersRpc.close();
      await Promise.allSettled([nats.close(), pool.end()]);
    },
  };
}

runWhenMain(import.meta.url, "subscribers", readConfig, start);
