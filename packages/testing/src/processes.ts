import type { ChildProcess } from "node:child_process";
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
