// Triggers: acceptance throughput, trigger → in-app message latency, broadcast fan-out and idle
// CPU, each beside a floor measured in this same run (DESIGN §5, performance-floors.md):
//   - floor (g): Koa + router + ApiKey check + JSON body + Redis SET NX EX + JetStream
//     publish-with-ack in one process, no RPC hop;
//   - e2e floor: the same HTTP → JetStream path plus a pull consumer that writes each fetched
//     batch with one multi-row INSERT;
//   - batched INSERT floor: 1,000-row INSERTs of 100,000 rows.
// The services run as child processes over a database and a JetStream stream of this run.
// BENCH_SECONDS, BENCH_E2E_SECONDS and BENCH_BROADCAST shrink a run while working on it.
import { createHash, randomBytes } from "node:crypto";
import Router from "@koa/router";
import Koa from "koa";
import { AckPolicy, connect, nanos, RetentionPolicy, StorageType } from "nats";
import getRawBody from "raw-body";
import { createClient } from "redis";
import { createPool } from "@notify/runtime";
import { autocannon, benchDatabase, cpuSeconds, freePort, load, percentile, startProcess, stopProcess, waitFor } from "../scripts/bench-lib.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const E2E_SECONDS = Number(process.env.BENCH_E2E_SECONDS ?? 60);
const BROADCAST = Number(process.env.BENCH_BROADCAST ?? 100_000);
const CONNECTIONS = 100;

const { addKey } = await import(new URL("../services/gateway/dist/accounts.js", import.meta.url).href);

/** The floor servers: HTTP → (Redis NX) → JetStream publish, and optionally a consumer writing batches. */
async function startFloor(stream, pool, withConsumer) {
  const nats = await connect({ servers: "127.0.0.1:4222" });
  const manager = await nats.jetstreamManager();
  await manager.streams.add({ name: stream, subjects: [`${stream}.>`], retention: RetentionPolicy.Workqueue, storage: StorageType.File });
  const js = nats.jetstream();
  const redis = createClient({ url: "redis://127.0.0.1:6379" });
  await redis.connect();
  const keyHash = createHash("sha256").update("floor-key").digest("hex");
  const router = new Router();
  router.post("/v1/events/trigger", async (ctx) => {
    const header = ctx.get("authorization");
    if (createHash("sha256").update(header.slice(7)).digest("hex") !== keyHash) ctx.throw(401);
    const body = JSON.parse((await getRawBody(ctx.req, { limit: "5mb" })).toString());
    const transactionId = body.transactionId ?? randomBytes(8).toString("hex");
    if (withConsumer === false) await redis.set(`bench:floor:${transactionId}`, "1", { NX: true, EX: 60 });
    await js.publish(`${stream}.trigger`, new TextEncoder().encode(JSON.stringify({ ...body, transactionId })), { msgID: transactionId });
    ctx.status = 201;
    ctx.body = { data: { acknowledged: true, status: "processed", transactionId } };
  });
  const app = new Koa();
  app.silent = true;
  app.use(router.routes());
  const port = await freePort();
  const server = app.listen(port, "127.0.0.1");
  let consuming;
  if (withConsumer) {
    await pool.query("CREATE TABLE IF NOT EXISTS bench_floor_rows (transaction_id text PRIMARY KEY, sent_at double precision, committed_at timestamptz DEFAULT clock_timestamp())");
    await manager.consumers.add(stream, { durable_name: "floor", ack_policy: AckPolicy.Explicit, ack_wait: nanos(30_000) });
    const consumer = await js.consumers.get(stream, "floor");
    let running = true;
    consuming = (async () => {
      while (running) {
        const batch = await consumer.fetch({ max_messages: 256, expires: 1000 });
        const rows = [];
        for await (const message of batch) rows.push([message, JSON.parse(new TextDecoder().decode(message.data))]);
        if (rows.length === 0) continue;
        await pool.query("INSERT INTO bench_floor_rows (transaction_id, sent_at) SELECT * FROM unnest($1::text[], $2::float8[]) ON CONFLICT DO NOTHING", [
          rows.map(([, body]) => body.transactionId),
          rows.map(([, body]) => body.payload.sentAt),
        ]);
        for (const [message] of rows) message.ack();
      }
    })();
    consuming.stop = () => {
      running = false;
    };
  }
  return {
    url: `http://127.0.0.1:${port}/v1/events/trigger`,
    headers: { authorization: "ApiKey floor-key", "content-type": "application/json" },
    async stop() {
      consuming?.stop();
      await consuming;
      // Requests autocannon left in flight finish before their stream goes.
      await new Promise((resolve) => {
        server.close(resolve);
        server.closeIdleConnections();
      });
      await manager.streams.delete(stream);
      await redis.quit();
      await nats.close();
    },
  };
}

/** Fixed-rate triggers with `sentAt` in the payload; answers how many were accepted. */
async function paced(url, headers, rate, seconds, label, name, to) {
  let sequence = 0;
  const result = await autocannon({
    url,
    method: "POST",
    headers,
    connections: 50,
    overallRate: rate,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ name, to, transactionId: `${label}-${sequence++}`, payload: { sentAt: Date.now() } }),
        }),
      },
    ],
  });
  return { accepted: result["2xx"], failed: result.errors + result.timeouts + result.non2xx };
}

export default async function triggersBench({ report }) {
  const database = await benchDatabase("triggers");
  const pool = createPool(database.url, 4);
  const children = [];
  const suffix = randomBytes(4).toString("hex");
  const jobs = { JOBS_STREAM: `BENCH_JOBS_${suffix}`, JOBS_SUBJECT_PREFIX: `bench.${suffix}.jobs` };
  try {
    const names = ["subscribers", "integrations", "topics", "messages", "triggers"];
    const ports = Object.fromEntries(await Promise.all([...names, "gateway", "worker"].map(async (name) => [name, await freePort()])));
    const common = {
      DATABASE_URL: database.url,
      ...jobs,
      ...Object.fromEntries(names.map((name) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${ports[name]}`])),
    };
    const schemaOf = { subscribers: "subscribers.subscribers", integrations: "integrations.integrations", topics: "topics.topics", messages: "messages.messages", triggers: "triggers.trigger_records" };
    for (const name of names) {
      children.push(startProcess(name, { ...common, [`${name.toUpperCase()}_PORT`]: String(ports[name]) }));
      await waitFor(async () => (await pool.query("SELECT to_regclass($1) AS t", [schemaOf[name]])).rows[0].t, name);
    }
    const key = randomBytes(16).toString("hex");
    children.push(startProcess("gateway", { ...common, GATEWAY_HOST: "127.0.0.1", GATEWAY_PORT: String(ports.gateway), BOOTSTRAP_API_KEY: key }));
    const api = `http://127.0.0.1:${ports.gateway}`;
    const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
    await waitFor(async () => (await fetch(`${api}/readyz`)).ok, "gateway", 60_000);
    const post = async (path, body, as = headers) => (await fetch(`${api}${path}`, { method: "POST", headers: as, body: JSON.stringify(body) })).json();
    const workflow = (await post("/v1/workflows", { name: "Bench", active: true, steps: [{ template: { type: "in_app", content: "Order {{n}}" } }] })).data;
    const name = workflow.triggers[0].identifier;
    await post("/v1/subscribers", { subscriberId: "bench-sub" });
    const messageCount = async (pattern) =>
      (await pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE transaction_id LIKE $1", [pattern])).rows[0].n;

    // 1. Acceptance at 100 connections, no worker running (the floor has no consumer either).
    const floorG = await startFloor(`BENCH_FLOOR_G_${suffix}`, pool, false);
    const floor = await load({ url: floorG.url, method: "POST", headers: floorG.headers, connections: CONNECTIONS, duration: SECONDS, body: JSON.stringify({ name, to: "bench-sub", payload: {} }) });
    await floorG.stop();
    const accepted = await load({ url: `${api}/v1/events/trigger`, method: "POST", headers, connections: CONNECTIONS, duration: SECONDS, body: JSON.stringify({ name, to: "bench-sub", payload: { n: 1 } }) });
    if (accepted.failed > 0) throw new Error(`${accepted.failed} trigger requests failed`);
    report({ name: "trigger acceptance, 100 connections", value: accepted.rps, unit: "req/s", floor: floor.rps, target: "ratio ≥ 0.50 of floor (g)" });
    report({ name: "trigger acceptance p99, 100 connections", value: accepted.p99, unit: "ms", floor: floor.p99 });

    // Every accepted trigger becomes a message once the worker runs: accepted = persisted.
    const acceptedTotal = (await pool.query("SELECT count(*)::int AS n FROM triggers.trigger_records")).rows[0].n;
    children.push(startProcess("worker", { ...common, WORKER_PORT: String(ports.worker) }));
    const drainStarted = performance.now();
    await waitFor(async () => (await pool.query("SELECT count(*)::int AS n FROM messages.messages")).rows[0].n >= acceptedTotal, "backlog drained", 600_000);
    report({ name: `backlog of ${acceptedTotal} triggers → in-app messages`, value: acceptedTotal / ((performance.now() - drainStarted) / 1000), unit: "messages/s" });

    // 2. Trigger → in-app message committed, at fixed rates.
    const floorE2e = await startFloor(`BENCH_FLOOR_E_${suffix}`, pool, true);
    for (const rate of [1000, 3000]) {
      const floorRun = await paced(floorE2e.url, floorE2e.headers, rate, Math.min(E2E_SECONDS, 20), `floor-${rate}`, name, "bench-sub");
      await waitFor(async () => (await pool.query("SELECT count(*)::int AS n FROM bench_floor_rows WHERE transaction_id LIKE $1", [`floor-${rate}-%`])).rows[0].n >= floorRun.accepted, "floor drained", 120_000);
      const floorLatencies = (await pool.query("SELECT extract(epoch FROM committed_at) * 1000 - sent_at AS ms FROM bench_floor_rows WHERE transaction_id LIKE $1", [`floor-${rate}-%`])).rows.map((row) => Number(row.ms));

      const run = await paced(`${api}/v1/events/trigger`, headers, rate, E2E_SECONDS, `e2e-${rate}`, name, "bench-sub");
      await waitFor(async () => (await messageCount(`e2e-${rate}-%`)) >= run.accepted, "e2e drained", 300_000);
      const persisted = await messageCount(`e2e-${rate}-%`);
      const latencies = (
        await pool.query("SELECT extract(epoch FROM created_at) * 1000 - (payload->>'sentAt')::float8 AS ms FROM messages.messages WHERE transaction_id LIKE $1", [`e2e-${rate}-%`])
      ).rows.map((row) => Number(row.ms));
      report({ name: `trigger → in-app p50 at ${rate}/s`, value: percentile(latencies, 50), unit: "ms", floor: percentile(floorLatencies, 50) });
      report({ name: `trigger → in-app p99 at ${rate}/s`, value: percentile(latencies, 99), unit: "ms", floor: percentile(floorLatencies, 99), target: "ratio ≤ 7" });
      report({ name: `accepted = persisted at ${rate}/s (${run.accepted} accepted, ${run.failed} refused)`, value: persisted, unit: "messages", floor: run.accepted, target: "ratio = 1" });
    }
    await floorE2e.stop();

    // 3. Broadcast to BROADCAST subscribers of another environment while this one keeps triggering.
    await pool.query("CREATE TABLE bench_floor_copy (id text, environment_id text, n int)");
    const copyStarted = performance.now();
    for (let offset = 0; offset < BROADCAST; offset += 1000) {
      await pool.query("INSERT INTO bench_floor_copy SELECT md5(i::text), 'floor', i FROM generate_series($1::int, $1::int + 999) AS i", [offset]);
    }
    const copyFloor = BROADCAST / ((performance.now() - copyStarted) / 1000);
    const otherKey = randomBytes(16).toString("hex");
    await addKey(pool, otherKey, { environment: "Broadcast" });
    const otherHeaders = { ...headers, authorization: `ApiKey ${otherKey}` };
    const broadcastWorkflow = (await post("/v1/workflows", { name: "Everyone", active: true, steps: [{ template: { type: "in_app", content: "Hello everyone" } }] }, otherHeaders)).data;
    const environmentId = broadcastWorkflow._environmentId;
    await pool.query(
      `INSERT INTO subscribers.subscribers (id, organization_id, environment_id, subscriber_id)
       SELECT 'd' || lpad(to_hex(i), 23, '0'), $1, $2, 'everyone-' || i FROM generate_series(1, $3) AS i`,
      [broadcastWorkflow._organizationId, environmentId, BROADCAST],
    );
    await pool.query("ANALYZE subscribers.subscribers");
    const broadcastStarted = performance.now();
    const broadcast = (await post("/v1/events/trigger/broadcast", { name: broadcastWorkflow.triggers[0].identifier, payload: {} }, otherHeaders)).data;
    const during = await load({ url: `${api}/v1/events/trigger`, method: "POST", headers, connections: CONNECTIONS, duration: SECONDS, body: JSON.stringify({ name, to: "bench-sub", payload: { n: 2 } }) });
    await waitFor(async () => (await messageCount(broadcast.transactionId)) >= BROADCAST, "broadcast committed", 600_000);
    const broadcastSeconds = (performance.now() - broadcastStarted) / 1000;
    report({
      name: `broadcast to ${BROADCAST} subscribers, all in-app messages committed`,
      value: broadcastSeconds,
      unit: "s",
      floor: BROADCAST / (0.1 * copyFloor),
      target: "ratio ≤ 1 (within subscribers ÷ 10 % of the batched-INSERT floor)",
    });
    report({ name: "single triggers of another environment during the broadcast", value: during.rps, unit: "req/s", floor: accepted.rps, target: "ratio ≥ 0.50" });

    // 4. Idle: every process together, once every accepted trigger has left its messages.
    await waitFor(
      async () =>
        (
          await pool.query(
            `SELECT NOT EXISTS (SELECT 1 FROM triggers.trigger_records r
                                 WHERE NOT EXISTS (SELECT 1 FROM messages.messages m
                                                    WHERE m.environment_id = r.environment_id AND m.transaction_id = r.transaction_id)) AS done`,
          )
        ).rows[0].done,
      "every trigger delivered",
      600_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const before = children.map((child) => cpuSeconds(child.pid));
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const used = children.reduce((sum, child, index) => sum + cpuSeconds(child.pid) - before[index], 0);
    report({ name: `idle CPU of all ${children.length} processes`, value: (used / 10) * 100, unit: "% of one core", target: "< 2" });
  } finally {
    for (const child of children.reverse()) await stopProcess(child);
    const nats = await connect({ servers: "127.0.0.1:4222" });
    await (await nats.jetstreamManager()).streams.delete(jobs.JOBS_STREAM).catch(() => undefined);
    await nats.close();
    await pool.end();
    await database.drop();
  }
}
