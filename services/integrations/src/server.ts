import { createLogger, createPool, migrate, migrationsBeside, runWhenMain, serveRpc } from "@notify/runtime";
import { readConfig, type IntegrationsConfig } from "./config.js";
import { routes } from "./routes.js";
import { DEVELOPMENT_KEY, createSecretBox } from "./secrets.js";

export { readConfig };

export const migrations = migrationsBeside("integrations", import.meta.url);

export interface RunningIntegrations {
  readonly port: number;
  /** Where /metrics is served. */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

/** Composition root: pool, migrations, secret box, service, RPC server. */
export async function start(config: IntegrationsConfig): Promise<RunningIntegrations> {
  const log = createLogger("integrations", config.LOG_LEVEL);
  if (!config.INTEGRATIONS_ENCRYPTION_KEY) {
    log.warn("INTEGRATIONS_ENCRYPTION_KEY is not set: integration secrets are sealed with a public development key; set one before storing real credentials");
  }
  const secrets = createSecretBox(config.INTEGRATIONS_ENCRYPTION_KEY ?? DEVELOPMENT_KEY);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const server = await serveRpc({
    host: config.INTEGRATIONS_HOST,
    port: config.INTEGRATIONS_PORT,
    metricsPort: config.INTEGRATIONS_METRICS_PORT,
    log,
    internalToken: config.INTERNAL_RPC_TOKEN,
    routes: routes({ pool, log, secrets }),
  });
  return {
    port: server.port,
    metricsPort: server.metricsPort,
    async stop() {
      await server.close();
      await pool.end();
    },
  };
}

runWhenMain(import.meta.url, "integrations", readConfig, start);
