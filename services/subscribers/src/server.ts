import { integrationsV1, workflowsV1 } from "@notify/proto";
import {
  CHANGE_SUBJECTS,
  announcer,
  connectNatsInBackground,
  createClient,
  createLogger,
  createPool,
  createRpcTransport,
  migrate,
  migrationsBeside,
  runWhenMain,
  serveRpc,
} from "@notify/runtime";
import { readConfig, type SubscribersConfig } from "./config.js";

export { readConfig };
import { routes } from "./routes.js";

export const migrations = migrationsBeside("subscribers", import.meta.url);

export interface RunningSubscribers {
  readonly port: number;
  stop(): Promise<void>;
}

/** Composition root: pool, migrations, the integrations and workflow clients, NATS for change announcements, service, RPC server. */
export async function start(config: SubscribersConfig): Promise<RunningSubscribers> {
  const log = createLogger("subscribers", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const integrationsRpc = createRpcTransport(config.INTEGRATIONS_URL, config.RPC_TIMEOUT_MS);
  const triggersRpc = createRpcTransport(config.TRIGGERS_URL, config.RPC_TIMEOUT_MS);
  const integrations = createClient(integrationsV1.IntegrationService, integrationsRpc.transport);
  const workflows = createClient(workflowsV1.WorkflowService, triggersRpc.transport);
  const nats = await connectNatsInBackground(config.NATS_URL, "subscribers");
  const announce = announcer(nats.current, CHANGE_SUBJECTS.subscribers);
  const server = await serveRpc({
    host: config.SUBSCRIBERS_HOST,
    port: config.SUBSCRIBERS_PORT,
    log,
    routes: routes({ pool, log, integrations, workflows, announce }),
  });
  return {
    port: server.port,
    async stop() {
      await server.close();
      integrationsRpc.close();
      triggersRpc.close();
      await Promise.allSettled([nats.close(), pool.end()]);
    },
  };
}

runWhenMain(import.meta.url, "subscribers", readConfig, start);
