import {
  createLogger,
  createPool,
  migrate,
  migrationsBeside,
  runWhenMain,
  serveRpc,
  jobSubject,
  type JobStream,
} from "@notify/runtime";
import { readConfig, type TriggersConfig } from "./config.js";
import { routes } from "./routes.js";
import { startRelay } from "./triggers/relay.js";

/** Trigger jobs go to `<prefix>.trigger`. */
export const TRIGGER_JOB_KIND = "trigger";

export { readConfig };

export const migrations = migrationsBeside("triggers", import.meta.url);

export interface RunningTriggers {
  readonly port: number;
  stop(): Promise<void>;
}

/** Composition root: pool, migrations, services, RPC server. */
export async function start(config: TriggersConfig): Promise<RunningTriggers> {
  const log = createLogger("triggers", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const stream: JobStream = { name: config.JOBS_STREAM, subjectPrefix: config.JOBS_SUBJECT_PREFIX };
  const jobSubjectOfTriggers = jobSubject(stream, TRIGGER_JOB_KIND);
  const server = await serveRpc({
    host: config.TRIGGERS_HOST,
    port: config.TRIGGERS_PORT,
    log,
    routes: routes({ pool, log, jobSubject: jobSubjectOfTriggers }),
  });
  // Acceptance needs only Postgres; the relay catches up whenever NATS is reachable.
  const relay = startRelay({ pool, databaseUrl: config.DATABASE_URL, natsUrl: config.NATS_URL, stream, log });
  return {
    port: server.port,
    async stop() {
      await server.close();
      await relay.stop();
      await pool.end();
    },
  };
}

runWhenMain(import.meta.url, "triggers", readConfig, start);
