import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { eventually } from "./wait.js";

/** A local TCP port nobody listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something listens on the local `port` (a server a test started). */
export async function listening(port: number, timeoutMs = 10_000): Promise<void> {
  await eventually(
    () =>
      new Promise<true | undefined>((resolve) => {
        const probe = createServer();
        probe.once("error", () => resolve(true)); // the port is taken: the server is listening
        probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(undefined)));
      }),
    timeoutMs,
  );
}

/** Stops a server a test started (SIGTERM) and waits for it to exit. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * A Redis server of the test's own on `port` (no persistence), for tests that stop it to see
 * what an outage does without disturbing tests running beside them on the shared one.
 */
export async function startRedisServer(port: number): Promise<ChildProcess> {
  const server = spawn("redis-server", ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  await listening(port);
  return server;
}
