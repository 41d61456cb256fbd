import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { eventually } from "./wait.js";

/** Where ports handed to tests start: below the range the system takes outgoing connections' ports from. */
const FIRST_TEST_PORT = 10_000;
/** Ports each test process may hand out before it starts over (those still in use are skipped). */
const PORTS_PER_PROCESS = 500;
/** Test processes with blocks of their own below the outgoing connections' range (32768 by Linux's default). */
const PORT_BLOCKS = 40;

/**
 * Each test process (a vitest worker, by VITEST_POOL_ID) hands out ports of a block of its own,
 * one after the other. A port the system picked (port 0) is one it also gives to outgoing
 * connections: between being handed out and being bound by the process a test starts, it can be
 * taken by a connection of any process, and the start fails.
 */
const portBlock = FIRST_TEST_PORT + ((Number(process.env.VITEST_POOL_ID) || process.pid) % PORT_BLOCKS) * PORTS_PER_PROCESS;
let nextPort = 0;

/** Whether nothing listens on `port` of the loopback now (it is bound and released to find out). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A local TCP port nobody listens on now, of this test process's block (see `portBlock`). */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < PORTS_PER_PROCESS; tried++) {
    const port = portBlock + nextPort;
    nextPort = (nextPort + 1) % PORTS_PER_PROCESS;
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${portBlock}-${portBlock + PORTS_PER_PROCESS - 1}`);
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
