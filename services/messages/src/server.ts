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
import { readConfig, type MessagesConfig } from "./config.js";
import { routes } from "./routes.js";
import { createSubscriberDirectory } from "./subscribers.js";

export { readConfig };

export const migrations: MigrationSet = {
  schema: "messages",
  dir: fileURLToPath(new URL("../migrations", import.meta.url)),
};

export interface RunningMessages {
  readonly port: number;
  stop(): Promise<void>;
}

/** Composition root: pool, migrations, the subscribers client, service, RPC server. */
export async function start(config: MessagesConfig): Promise<RunningMessages> {
  const log = createLogger("messages", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const subscribersTransport = createRpcTransport(config.SUBSCRIBERS_URL);
  const subscribers = createSubscriberDirectory(createClient(subscribersV1.SubscriberService, subscribersTransport.transport));
  const server = await serveRpc({
    host: config.MESSAGES_HOST,
    port: config.MESSAGES_PORT,
    log,
    routes: routes({ pool, log, subscribers, markAllChunkRows: config.MARK_ALL_CHUNK_ROWS }),
  });
  return {
    port: server.port,
    async stop() {
      await server.close();
      subscribersTransport.close();
      await pool.end();
    },
  };
}

if (isMain(import.meta.url)) {
  runMain(async () => {
    const config = readConfig();
    const running = await start(config);
    stopOnSignals(createLogger("messages", config.LOG_LEVEL), running.stop);
  });
}
