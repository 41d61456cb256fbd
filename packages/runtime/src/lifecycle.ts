import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Logger } from "./log.js";

/** True when the module at `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  return realpathSync(fileURLToPath(moduleUrl)) === realpathSync(entry);
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits; a second signal exits at once. */
export function stopOnSignals(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, "stopping");
    stop().then(
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
