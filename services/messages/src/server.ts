import { subscribersV1, workflowsV1 } from "@notify/proto";
import {
  createClient,
  createLogger,
  createPool,
  createRpcTransport,
  migrate,
  migrationsBeside,
  runWhenMain,
  serveRpc,
} from "@notify/runtime";
import { readConfig, type MessagesConfig } from "./config.js";
import { routes } from "./routes.js";
import { createSubscriberDirectory } from "./subscribers.js";
import { createWorkflowDirectory } from "./workflows.js";

export { readConfig };

export const migrations = migrationsBeside("messages", import.meta.url);

export interface RunningMessages {
  readonly port: number;
  stop(): Promise<void>;
}

/** Composition root: pool, migrations, the subscribers and workflows clients, service, RPC server. */
export async function start(config: MessagesConfig): Promise<RunningMessages> {
  const log = createLogger("messages", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const subscribersTransport = createRpcTransport(config.SUBSCRIBERS_URL);
  const subscribers = createSubscriberDirectory(createClient(subscribersV1.SubscriberService, subscribersTransport.transport));
  const triggersTransport = createRpcTransport(config.TRIGGERS_URL);
  const workflows = createWorkflowDirectory(createClient(workflowsV1.WorkflowService, triggersTransport.transport));
  const server = await serveRpc({
    host: config.MESSAGES_HOST,
    port: config.MESSAGES_PORT,
    log,
    routes: routes({ pool, log, subscribers, workflows, markAllChunkRows: config.MARK_ALL_CHUNK_ROWS }),
  });
  return {
    port: server.port,
    async stop() {
      await server.close();
      subscribersTransport.close();
      triggersTransport.close();
      await pool.end();
    },
  };
}

runWhenMain(import.meta.url, "messages", readConfig, start);
