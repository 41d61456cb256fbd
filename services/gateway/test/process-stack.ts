import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createTestDatabase, eventually, freePort, stopChild, type TestDatabase } from "@notify/testing";
import { connectNats } from "@notify/runtime";
import { GATEWAY_ENCRYPTION_KEY, INTEGRATIONS_ENCRYPTION_KEY, INTERNAL_RPC_TOKEN, requestAs, STACK_MIGRATIONS, type Stack } from "./stack.js";

/** The processes of a stack, in start order (the gateway last: it checks the others at start). */
export const PROCESSES = ["subscribers", "integrations", "topics", "messages", "triggers", "worker", "gateway"] as const;
export type ProcessName = (typeof PROCESSES)[number];

/** One JSON log line of a process. */
export type LogLine = Record<string, unknown>;

export interface ProcessStack {
  readonly url: string;
  readonly key: string;
  readonly database: TestDatabase;
  request: Stack["request"];
  /** What every process was started with. */
  readonly env: Readonly<Record<string, string>>;
  /** Each process's log lines so far. */
  readonly logs: Readonly<Record<ProcessName, LogLine[]>>;
  readonly children: Readonly<Record<ProcessName, ChildProcess>>;
  /** Where each process serves /metrics. */
  readonly metricsUrls: Readonly<Record<ProcessName, string>>;
  /** Starts a process of the stack again (after a test stopped it), with more variables if given. */
  restart(name: ProcessName, env?: Record<string, string>): Promise<void>;
  /** Starts another gateway (a replica behind the same load balancer), with more variables if given; stopped with the stack. */
  startGatewayReplica(env?: Record<string, string>): Promise<{ url: string; child: ChildProcess }>;
  stop(): Promise<void>;
}

export interface ProcessStackOptions {
  /** More variables of every process. */
  env?: Record<string, string>;
  logLevel?: string;
}

const entryOf = (name: ProcessName) => fileURLToPath(new URL(`../../${name}/dist/server.js`, import.meta.url));

/**
 * Every process of notify as a process of its own (its built dist), as a deployment runs them,
 * on free ports over a fresh database and streams of its own; each one's log lines are kept.
 */
export async function startProcessStack(options: ProcessStackOptions = {}): Promise<ProcessStack> {
  const database = await createTestDatabase(STACK_MIGRATIONS);
  // Ports asked for one after the other may come back twice: each is taken once.
  const taken = new Set<number>();
  const port = async (): Promise<string> => {
    for (;;) {
      const free = await freePort();
      if (!taken.has(free)) {
        taken.add(free);
        return String(free);
      }
    }
  };
  const suffix = randomBytes(6).toString("hex");
  const key = randomBytes(16).toString("hex");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    LOG_LEVEL: options.logLevel ?? "info",
    INTERNAL_RPC_TOKEN,
    DATABASE_URL: database.url,
    NATS_URL: "nats://127.0.0.1:4222",
    JOBS_STREAM: `TEST_JOBS_${suffix}`,
    JOBS_SUBJECT_PREFIX: `test.${suffix}.jobs`,
    DELIVERIES_STREAM: `TEST_DELIVERIES_${suffix}`,
    DELIVERIES_SUBJECT_PREFIX: `test.${suffix}.deliveries`,
    INTEGRATIONS_ENCRYPTION_KEY,
    GATEWAY_ENCRYPTION_KEY,
    BOOTSTRAP_API_KEY: key,
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_PORT: await port(),
    GATEWAY_METRICS_PORT: await port(),
    WORKER_PORT: await port(),
    OUTBOUND_ALLOWED_CIDRS: "127.0.0.0/8",
  };
  const metricsUrls = {
    gateway: `http://127.0.0.1:${env.GATEWAY_METRICS_PORT}/metrics`,
    worker: `http://127.0.0.1:${env.WORKER_PORT}/metrics`,
  } as Record<ProcessName, string>;
  for (const name of PROCESSES) {
    if (name === "gateway" || name === "worker") continue;
    const prefix = name.toUpperCase();
    const rpcPort = await port();
    env[`${prefix}_PORT`] = rpcPort;
    env[`${prefix}_URL`] = `http://127.0.0.1:${rpcPort}`;
    env[`${prefix}_METRICS_PORT`] = await port();
    metricsUrls[name] = `http://127.0.0.1:${env[`${prefix}_METRICS_PORT`]}/metrics`;
  }
  Object.assign(env, options.env);

  const logs = Object.fromEntries(PROCESSES.map((name) => [name, [] as LogLine[]])) as Record<ProcessName, LogLine[]>;
  const children = {} as Record<ProcessName, ChildProcess>;
  const replicas: ChildProcess[] = [];
  const launch = (name: ProcessName, extra: Record<string, string> = {}) => {
    const child = spawn(process.execPath, [entryOf(name)], { env: { ...env, ...extra }, stdio: ["ignore", "pipe", "inherit"] });
    let partial = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.startsWith("{")) logs[name].push(JSON.parse(line) as LogLine);
      }
    });
    children[name] = child;
    return child;
  };
  const answers = async (url: string) => (await fetch(url).catch(() => undefined))?.ok === true;
  /** Resolves once `url` answers 200; fails at once if the process exited. */
  const answering = (name: ProcessName, url: string) =>
    eventually(
      async () => {
        if (children[name].exitCode !== null) throw new Error(`${name} exited with ${children[name].exitCode}`);
        return (await answers(url)) ? true : undefined;
      },
      60_000,
      100,
    );
  const ready = async (name: ProcessName) => {
    await answering(name, metricsUrls[name]);
    if (name === "gateway") await answering(name, `http://127.0.0.1:${env.GATEWAY_PORT}/readyz`);
    if (name === "worker") await answering(name, `http://127.0.0.1:${env.WORKER_PORT}/readyz`);
  };
  const stopAll = async () => {
    for (const replica of replicas) await stopChild(replica);
    for (const name of [...PROCESSES].reverse()) await stopChild(children[name]);
  };
  try {
    for (const name of PROCESSES) {
      launch(name);
      await ready(name);
    }
  } catch (error) {
    await stopAll();
    await database.drop();
    throw error;
  }
  const url = `http://127.0.0.1:${env.GATEWAY_PORT}`;
  return {
    url,
    key,
    database,
    env,
    logs,
    children,
    metricsUrls,
    request: requestAs(url, key),
    async restart(name, extra) {
      await stopChild(children[name]);
      launch(name, extra);
      await ready(name);
    },
    async startGatewayReplica(extra = {}) {
      const first = children.gateway;
      const port = String(await freePort());
      const child = launch("gateway", { GATEWAY_PORT: port, GATEWAY_METRICS_PORT: String(await freePort()), ...extra });
      children.gateway = first;
      replicas.push(child);
      const replicaUrl = `http://127.0.0.1:${port}`;
      await eventually(async () => ((await answers(`${replicaUrl}/readyz`)) ? true : undefined), 60_000, 100);
      return { url: replicaUrl, child };
    },
    async stop() {
      await stopAll();
      const nats = await connectNats(env.NATS_URL!, "test-cleanup").catch(() => undefined);
      const manager = await nats?.jetstreamManager();
      await manager?.streams.delete(env.JOBS_STREAM!).catch(() => undefined);
      await manager?.streams.delete(env.DELIVERIES_STREAM!).catch(() => undefined);
      await nats?.close();
      await database.drop();
    },
  };
}
