import { fileURLToPath } from "node:url";
import { subscribersV1 } from "@notify/proto";
import {
  createClient,
  createLogger,
  createPool,
  createRpcTransport,
  isMain,
  migrate,
  runMain,
  serveRpc,
  stopOnSignals,
  type MigrationSet,
} from "@notify/runtime";
import { readConfig, type TopicsConfig } from "./config.js";
import { routes } from "./routes.js";

export { readConfig };

export const migrations: MigrationSet = {
  schema: "topics",
  dir: fileURLToPath(new URL("../migrations", import.meta.url)),
};

export interface RunningTopics {
  readonly port: number;
  stop(): Promise<void>;
}

/** Composition root: pool, migrations, the subscribers client, service, RPC server. */
export async function start(config: TopicsConfig): Promise<RunningTopics> {
  const log = createLogger("topics", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const subscribersRpc = createRpcTransport(config.SUBSCRIBERS_URL);
  const subscribers = createClient(subscribersV1.SubscriberService, subscribersRpc.transport);
  const server = await serveRpc({ host: config.TOPICS_HOST, port: config.TOPICS_PORT, log, routes: routes({ pool, log, subscribers }) });
  return {
    port: server.port,
    async stop() {
      await server.close();
      subscribersRpc.close();
      await pool.end();
    },
  };
}

if (isMain(import.meta.url)) {
  runMain(async () => {
    const config = readConfig();
    const running = await start(config);
    stopOnSignals(createLogger("topics", config.LOG_LEVEL), running.stop);
  });
}
