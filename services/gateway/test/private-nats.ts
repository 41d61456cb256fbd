import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "@notify/testing";

/** A NATS server of a test file's own (another port, another store): stopping it never disturbs tests running beside it. */
export interface PrivateNats {
  readonly url: string;
  readonly running: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and deletes its store. */
  remove(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
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
      await eventually(
        () =>
          new Promise<true | undefined>((resolve) => {
            const probe = createServer();
            probe.once("error", () => resolve(true)); // the port is taken: nats is listening
            probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(undefined)));
          }),
        10_000,
      );
    },
    stop,
    async remove() {
      await stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
}
