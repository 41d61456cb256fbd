import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, listening } from "@notify/testing";

/** A NATS server of a test file's own (another port, another store): stopping it never disturbs tests running beside it. */
export interface PrivateNats {
  readonly url: string;
  readonly running: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and deletes its store. */
  remove(): Promise<void>;
}

export async function privateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), "notify-nats-"));
  let server: ChildProcess | undefined;
  const stop = async () => {
    const running = server;
    server = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGTERM");
    });
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    get running() {
      return server !== undefined;
    },
    async start() {
      server = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", store], { stdio: "ignore" });
      await listening(port);
    },
    stop,
    async remove() {
      await stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
}
