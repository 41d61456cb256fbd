import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createLogger, type Logger } from "./log.js";
import type { MigrationSet } from "./pg.js";
import { startTracing } from "./tracing.js";

/** True when the module at `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  return realpathSync(fileURLToPath(moduleUrl)) === realpathSync(entry);
}

let stopping = false;

/**
 * True once a signal asked the process to stop: its readiness fails from then on (the gateway's
 * /readyz, the services' gRPC health, the worker's /readyz), so it is taken out of its Service
 * while it still serves.
 */
export function processStopping(): boolean {
  return stopping;
}

/**
 * On SIGINT/SIGTERM: readiness fails at once, the process goes on serving for `drainMs` while the
 * endpoints that point at it are removed, then runs `stop` once and exits; a second signal exits
 * at once.
 */
export function stopOnSignals(log: Logger, stop: () => Promise<void>, drainMs = 0): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal, drainMs }, "stopping");
    new Promise((resolve) => setTimeout(resolve, drainMs)).then(stop).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, "unclean stop");
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
}

/** Starts a process from its composition root and reports a failed start clearly. */
export function runMain(start: () => Promise<unknown>): void {
  start().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

/** A service's migrations: the `migrations` folder of its package, next to the compiled `dist`. */
export function migrationsBeside(schema: string, moduleUrl: string): MigrationSet {
  return { schema, dir: fileURLToPath(new URL("../migrations", moduleUrl)) };
}

export interface ProcessConfig {
  LOG_LEVEL: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  SHUTDOWN_DRAIN_MS?: number;
}

/**
 * Starts a process's tracing (when configured), then the process, and stops both cleanly on
 * SIGINT/SIGTERM, the spans still buffered sent last. Answers what `start` answered.
 */
export async function runProcess<C extends ProcessConfig, R extends { stop(): Promise<void> }>(
  name: string,
  config: C,
  start: (config: C) => Promise<R>,
): Promise<R> {
  const tracing = await startTracing(name, config.OTEL_EXPORTER_OTLP_ENDPOINT);
  const running = await start(config);
  stopOnSignals(
    createLogger(name, config.LOG_LEVEL),
    async () => {
      await running.stop();
      await tracing.shutdown();
    },
    config.SHUTDOWN_DRAIN_MS,
  );
  return running;
}

/**
 * When the module at `moduleUrl` is the script node was started with: reads the configuration,
 * starts the service, and stops it cleanly on SIGINT/SIGTERM. A failed start exits with status 1.
 */
export function runWhenMain<C extends ProcessConfig>(
  moduleUrl: string,
  name: string,
  readConfig: () => C,
  start: (config: C) => Promise<{ stop(): Promise<void> }>,
): void {
  if (!isMain(moduleUrl)) return;
  runMain(() => runProcess(name, readConfig(), start));
}

/**
 * Runs `work` every `everyMs`, each run after the last one ended (a slow run delays the next
 * rather than overlapping it); a failed run is reported to `failed` and the next one still comes.
 * The timer does not keep the process alive. `stop` waits for a run under way.
 */
export function repeatEvery(everyMs: number, work: () => Promise<void>, failed: (error: unknown) => void): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  function schedule(): void {
    timer = setTimeout(() => {
      running = work()
        .catch(failed)
        .finally(() => {
          running = undefined;
          if (!stopped) schedule();
        });
    }, everyMs);
    timer.unref();
  }
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
