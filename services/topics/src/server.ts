import { subscribersV1 } from "@notify/proto";
import { createClient, createLogger, createPool, createRpcTransport, migrate, migrationsBeside, runWhenMain, serveRpc } from "@notify/runtime";
import { readConfig, type TopicsConfig } from "./config.js";
import { routes } from "./routes.js";

export { readConfig };

export const migrations = migrationsBeside("topics", import.meta.url);

export interface RunningTopics {
  readonly port: number;
  /** Where /metrics is served. */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

/** Composition root: pool, migrations, the subscribers client, service, RPC server. */
export async function start(config: TopicsConfig): Promise<RunningTopics> {
  const log = createLogger("topics", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const subscribersRpc = createRpcTransport(config.SUBSCRIBERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const subscribers = createClient(subscribersV1.SubscriberService, subscribersRpc.transport);
  const server = await serveRpc({
    host: config.TOPICS_HOST,
    port: config.TOPICS_PORT,
    metricsPort: config.TOPICS_METRICS_PORT,
    log,
    internalToken: config.INTERNAL_RPC_TOKEN,
    routes: routes({ pool, log, subscribers }),
  });
  return {
    port: server.port,
    metricsPort: server.metricsPort,
    async stop() {
      await server.close();
      subscribersRpc.close();
      await pool.end();
    },
  };
}

runWhenMain(import.meta.url, "topics", readConfig, start);
