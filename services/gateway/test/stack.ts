import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createTestDatabase, eventually, freePort, stopChild, type TestDatabase } from "@notify/testing";
import { migrations as subscribersMigrations, readConfig as readSubscribersConfig, start as startSubscribers } from "@notify/subscribers";
import { migrations as messagesMigrations, readConfig as readMessagesConfig, start as startMessages } from "@notify/messages";
import { migrations as integrationsMigrations, readConfig as readIntegrationsConfig, start as startIntegrations } from "@notify/integrations";
import { migrations as topicsMigrations, readConfig as readTopicsConfig, start as startTopics } from "@notify/topics";
import { migrations as triggersMigrations, readConfig as readTriggersConfig, start as startTriggers } from "@notify/triggers";
import { migrations as workerMigrations, readConfig as readWorkerConfig, start as startWorker } from "@notify/worker";
import { connectNats } from "@notify/runtime";
import { readConfig, sealerOf } from "../src/config.js";
import { addKey } from "../src/accounts.js";
import { migrations as gatewayMigrations, start as startGateway } from "../src/server.js";
import { createPool } from "@notify/runtime";

/**
 * A reply body as a test reads it when it declares no shape of its own: a JSON value whose members
 * and elements can be followed without narrowing, each again such a value (what is absent reads as
 * undefined at run time, and expect checks what is there). A test that hands a value on states its
 * shape instead: `request<Data<{ _id: string }>>(…)`.
 */
export type Json = JsonFields & JsonList;
export interface JsonFields {
  readonly [key: string]: Json;
}
export interface JsonList extends ReadonlyArray<Json> {}

/** The wrapped success body of most routes. */
export interface Data<T> {
  data: T;
}

export interface Reply<T = Json> {
  status: number;
  headers: Headers;
  body: T;
}

export interface Stack {
  readonly url: string;
  /** A key of the Development environment. */
  readonly key: string;
  readonly database: TestDatabase;
  /** What a worker of this stack is started with (fault tests start one as a child process). */
  readonly workerEnv: Record<string, string>;
  /** Where each process of the stack serves /metrics (the worker's only when it runs in this process). */
  readonly metricsUrls: Readonly<Record<"gateway" | "subscribers" | "integrations" | "topics" | "messages" | "triggers", string>> & {
    readonly worker?: string;
  };
  /** The messages service, for tests that create messages through its batch RPC (as the worker does). */
  readonly messagesUrl: string;
  /** Sends a JSON request with `Authorization: ApiKey <key>` unless headers say otherwise ("" drops a header). */
  request<T = Json>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  /**
   * Starts another gateway of this stack, as a process of its own (its built dist), as a second
   * replica behind a load balancer would run; answers its URL. Stopped with the stack.
   */
  startReplica(): Promise<string>;
  /** Kills the replica at `url` as a crash would (SIGKILL): it closes nothing. */
  killReplica(url: string): Promise<void>;
  /** Makes a key for another environment (created if needed). */
  createKey(environment: string, organization?: string): Promise<string>;
  /** Starts a worker in this process unless one runs (a stack started with `worker: false` has none); stopped with the stack. */
  startWorker(): Promise<void>;
  /** Stops the worker: jobs wait on the streams until one is started again. */
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

/** What sends requests to a stack's gateway (the delivery helpers need nothing else). */
export type Requester = Pick<Stack, "request">;

/** Requests to the gateway at `url` with `Authorization: ApiKey <key>` unless headers say otherwise ("" drops a header). */
export function requestAs(url: string, key: string): Stack["request"] {
  return async (method, path, body, headers = {}) => {
    const merged: Record<string, string> = {
      authorization: `ApiKey ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    };
    const response = await fetch(`${url}${path}`, {
      method,
      headers: Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== "")),
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}

/** Every schema of a stack, in the order a fresh database is migrated. */
export const STACK_MIGRATIONS = [
  gatewayMigrations,
  subscribersMigrations,
  messagesMigrations,
  triggersMigrations,
  integrationsMigrations,
  topicsMigrations,
  workerMigrations,
];

/** The token every process of a test stack proves itself with on internal calls. */
export const INTERNAL_RPC_TOKEN = "test-stack-internal-rpc-token-0123456789";

/** What every process of a stack is started with. */
const quiet = { LOG_LEVEL: "silent", INTERNAL_RPC_TOKEN };
/** The key integration secrets are sealed with in tests (an explicit one, so no development-key warning). */
export const INTEGRATIONS_ENCRYPTION_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/** The key the gateway seals API keys and signs Inbox sessions with in tests. */
export const GATEWAY_ENCRYPTION_KEY = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";

export interface StackOptions {
  /** Run the worker in this process (fault tests run their own as a child process). */
  worker?: boolean;
  /** A NATS server of the test's own (fault tests stop and start it). */
  natsUrl?: string;
  /** More variables of the gateway (a short RPC deadline, say). */
  gatewayEnv?: Record<string, string>;
  /** More variables of the worker (a short delivery budget, say). */
  workerEnv?: Record<string, string>;
  /** More variables of the messages service (a short retention sweep interval, say). */
  messagesEnv?: Record<string, string>;
  /**
   * OUTBOUND_ALLOWED_CIDRS of the gateway and the worker: none by default, so user-set URLs are
   * vetted as in production; tests delivering to local receivers allow 127.0.0.0/8.
   */
  outboundAllowedCidrs?: string;
}

/** Every service and the gateway in this process, on free ports, over a fresh database. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const database = await createTestDatabase(STACK_MIGRATIONS);
  // A job stream per stack, so test files never consume each other's triggers.
  const suffix = randomBytes(6).toString("hex");
  const jobs = { NATS_URL: options.natsUrl ?? "nats://127.0.0.1:4222", JOBS_STREAM: `TEST_JOBS_${suffix}`, JOBS_SUBJECT_PREFIX: `test.${suffix}.jobs` };
  const deliveries = { DELIVERIES_STREAM: `TEST_DELIVERIES_${suffix}`, DELIVERIES_SUBJECT_PREFIX: `test.${suffix}.deliveries` };
  // The gateway's requests to a worker (calls to SNS, event webhook setups) reach this stack's, not another test file's.
  const workerRequests = { SNS_REQUESTS_SUBJECT: `test.${suffix}.sns`, WEBHOOK_SETUP_SUBJECT: `test.${suffix}.webhook-setup` };
  // Subscribers bind credentials to integrations and resolve preferences over workflows: those start first.
  const integrations = await startIntegrations(
    readIntegrationsConfig({ ...quiet, DATABASE_URL: database.url, INTEGRATIONS_PORT: "0", INTEGRATIONS_ENCRYPTION_KEY }),
  );
  const triggers = await startTriggers(readTriggersConfig({ ...quiet, ...jobs, DATABASE_URL: database.url, TRIGGERS_PORT: "0" }));
  const subscribers = await startSubscribers(
    readSubscribersConfig({
      ...quiet,
      DATABASE_URL: database.url,
      SUBSCRIBERS_PORT: "0",
      ...jobs,
      INTEGRATIONS_URL: `http://127.0.0.1:${integrations.port}`,
      TRIGGERS_URL: `http://127.0.0.1:${triggers.port}`,
    }),
  );
  const messages = await startMessages(
    readMessagesConfig({
      ...quiet,
      DATABASE_URL: database.url,
      MESSAGES_PORT: "0",
      NATS_URL: jobs.NATS_URL,
      SUBSCRIBERS_URL: `http://127.0.0.1:${subscribers.port}`,
      TRIGGERS_URL: `http://127.0.0.1:${triggers.port}`,
      ...options.messagesEnv,
    }),
  );
  const topics = await startTopics(
    readTopicsConfig({ ...quiet, DATABASE_URL: database.url, TOPICS_PORT: "0", SUBSCRIBERS_URL: `http://127.0.0.1:${subscribers.port}` }),
  );
  const serviceUrls = {
    SUBSCRIBERS_URL: `http://127.0.0.1:${subscribers.port}`,
    INTEGRATIONS_URL: `http://127.0.0.1:${integrations.port}`,
    TOPICS_URL: `http://127.0.0.1:${topics.port}`,
    MESSAGES_URL: `http://127.0.0.1:${messages.port}`,
    TRIGGERS_URL: `http://127.0.0.1:${triggers.port}`,
  };
  const outbound = { OUTBOUND_ALLOWED_CIDRS: options.outboundAllowedCidrs ?? "" };
  const workerEnv = {
    ...quiet,
    ...jobs,
    ...deliveries,
    ...workerRequests,
    ...serviceUrls,
    ...outbound,
    DATABASE_URL: database.url,
    WORKER_PORT: "0",
    ...options.workerEnv,
  };
  let worker = options.worker === false ? undefined : await startWorker(readWorkerConfig(workerEnv));
  // A key per stack: cached key lookups in the shared Redis must not leak between test files.
  const key = randomBytes(16).toString("hex");
  const gatewayEnv = {
    ...quiet,
    DATABASE_URL: database.url,
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_PORT: "0",
    GATEWAY_METRICS_PORT: "0",
    BOOTSTRAP_API_KEY: key,
    GATEWAY_ENCRYPTION_KEY,
    ...serviceUrls,
    NATS_URL: jobs.NATS_URL,
    ...workerRequests,
    ...outbound,
    // Every test's client is 127.0.0.1 and the Redis is shared: one address's budget would be
    // every test file's at once. rate-limits.e2e.test.ts sets its own.
    RATE_LIMIT_PUBLIC: "1000000",
    ...options.gatewayEnv,
  };
  const gateway = await startGateway(readConfig(gatewayEnv));
  const replicas = new Map<string, ChildProcess>();
  const url = `http://127.0.0.1:${gateway.port}`;
  const pool = createPool(database.url, 2);
  const sealer = sealerOf(readConfig({ GATEWAY_ENCRYPTION_KEY }));

  return {
    url,
    key,
    database,
    messagesUrl: `http://127.0.0.1:${messages.port}`,
    metricsUrls: {
      gateway: `http://127.0.0.1:${gateway.metricsPort}/metrics`,
      subscribers: `http://127.0.0.1:${subscribers.metricsPort}/metrics`,
      integrations: `http://127.0.0.1:${integrations.metricsPort}/metrics`,
      topics: `http://127.0.0.1:${topics.metricsPort}/metrics`,
      messages: `http://127.0.0.1:${messages.metricsPort}/metrics`,
      triggers: `http://127.0.0.1:${triggers.metricsPort}/metrics`,
      ...(worker ? { worker: `http://127.0.0.1:${worker.healthPort}/metrics` } : {}),
    },
    workerEnv,
    request: requestAs(url, key),
    async createKey(environment, organization) {
      const created = randomBytes(16).toString("hex");
      await addKey(pool, sealer, created, { environment, organization });
      return created;
    },
    async startReplica() {
      const port = await freePort();
      const replica = spawn(process.execPath, [fileURLToPath(new URL("../dist/server.js", import.meta.url))], {
        env: { ...process.env, ...gatewayEnv, GATEWAY_PORT: String(port) },
        stdio: ["ignore", "ignore", "inherit"],
      });
      const replicaUrl = `http://127.0.0.1:${port}`;
      replicas.set(replicaUrl, replica);
      await eventually(async () => ((await fetch(`${replicaUrl}/livez`)).ok ? true : undefined), 30_000);
      return replicaUrl;
    },
    async killReplica(replicaUrl) {
      const replica = replicas.get(replicaUrl);
      if (!replica || replica.exitCode !== null || replica.signalCode !== null) throw new Error(`no replica running at ${replicaUrl}`);
      replica.kill("SIGKILL");
      await once(replica, "exit");
    },
    async startWorker() {
      worker ??= await startWorker(readWorkerConfig(workerEnv));
    },
    async stopWorker() {
      const running = worker;
      worker = undefined;
      await running?.stop();
    },
    async stop() {
      await Promise.all([...replicas.values()].map(stopChild));
      await gateway.stop();
      await worker?.stop();
      await messages.stop();
      await triggers.stop();
      await topics.stop();
      await integrations.stop();
      await subscribers.stop();
      await pool.end();
      const nats = await connectNats(jobs.NATS_URL, "test-cleanup").catch(() => undefined);
      const manager = await nats?.jetstreamManager();
      await manager?.streams.delete(jobs.JOBS_STREAM).catch(() => undefined);
      await manager?.streams.delete(deliveries.DELIVERIES_STREAM).catch(() => undefined);
      await nats?.close();
      await database.drop();
    },
  };
}
