// Triggers: acceptance throughput, trigger → in-app message latency, broadcast fan-out and idle
// CPU, each beside a floor measured in this same run (DESIGN §5, performance-floors.md):
//   - floor (g) and the e2e floor: scripts/bench-floor-server.mjs, a process of its own;
//   - COPY floor: 100,000 rows written with COPY in batches of 1,000 from this process (median of 3);
//   - acceptance: floor (g) and ours alternate, three runs each, medians compared.
// The services run as child processes over a database and a JetStream stream of this run.
// BENCH_SECONDS, BENCH_E2E_SECONDS and BENCH_BROADCAST shrink a run while working on it;
// BENCH_PHASES (acceptance,latency,broadcast,idle) picks phases.
import { randomBytes } from "node:crypto";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { from as copyFrom } from "pg-copy-streams";
import { createPool } from "@notify/runtime";
import {
  autocannon,
  benchDatabase,
  cpuSeconds,
  freePort,
  load,
  percentile,
  startFloor,
  startProcess,
  stopProcess,
  waitFor,
  startServices,
  benchJobStream,
  tearDownBench,
} from "../scripts/bench-lib.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const E2E_SECONDS = Number(process.env.BENCH_E2E_SECONDS ?? 60);
const BROADCAST = Number(process.env.BENCH_BROADCAST ?? 100_000);
const PHASES = new Set((process.env.BENCH_PHASES ?? "acceptance,latency,broadcast,idle").split(","));
const CONNECTIONS = 100;
const ACCEPTANCE_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const { addKey } = await import(new URL("../services/gateway/dist/accounts.js", import.meta.url).href);
// The gateways of this benchmark run without GATEWAY_ENCRYPTION_KEY: keys are sealed with the development key.
const { sealerOf } = await import(new URL("../services/gateway/dist/config.js", import.meta.url).href);
const sealer = sealerOf({});

/** A trigger floor server: its trigger URL and headers. */
async function startTriggerFloor(kind, stream, databaseUrl) {
  const floor = await startFloor(kind, { STREAM: stream, DATABASE_URL: databaseUrl });
  return { ...floor, url: `${floor.origin}/v1/events/trigger`, headers: { ...floor.headers, "content-type": "application/json" } };
}

/** CPU seconds the given processes use from now until the returned function is called. */
function cpuUse(pids) {
  const before = pids.map((pid) => cpuSeconds(pid));
  return () => pids.reduce((sum, pid, index) => sum + cpuSeconds(pid) - before[index], 0);
}

/** Rows per second that COPY reaches writing `count` small rows in batches of 1,000: the median of three runs, each into a new table. */
async function copyFloor(pool, count) {
  const rates = [];
  for (let run = 0; run < 3; run += 1) {
    const table = `bench_floor_copy_${run}`;
    await pool.query(`CREATE TABLE ${table} (id text, environment_id text, n int)`);
    const client = await pool.connect();
    try {
      const started = performance.now();
      for (let offset = 0; offset < count; offset += 1000) {
        const lines = [];
        for (let n = offset; n < Math.min(count, offset + 1000); n += 1) lines.push(`${randomBytes(12).toString("hex")}\tfloor\t${n}\n`);
        await pipeline(Readable.from([lines.join("")]), client.query(copyFrom(`COPY ${table} FROM STDIN`)));
      }
      rates.push(count / ((performance.now() - started) / 1000));
    } finally {
      client.release();
    }
  }
  return percentile(rates, 50);
}

/**
 * Fixed-rate triggers with `sentAt` in the payload; answers the transaction ids answered 2xx (a
 * request still in flight when the run ends may be accepted, but is not counted as such).
 */
async function paced(url, headers, rate, seconds, label, name, to) {
  let sequence = 0;
  const accepted = [];
  const result = await autocannon({
    url,
    method: "POST",
    headers,
    // Enough connections that the rate, not our latency, paces the run (50 capped 3,000/s at ~1,350/s).
    connections: 200,
    overallRate: rate,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ name, to, transactionId: `${label}-${sequence++}`, payload: { sentAt: Date.now() } }),
        }),
        onResponse: (status, body) => {
          if (status >= 200 && status < 300) accepted.push(JSON.parse(body).data.transactionId);
        },
      },
    ],
  });
  return { accepted, failed: result.errors + result.timeouts + result.non2xx, rate: accepted.length / seconds };
}

export default async function triggersBench({ report }) {
  const database = await benchDatabase("triggers");
  const pool = createPool(database.url, 4);
  const children = [];
  const suffix = randomBytes(4).toString("hex");
  const jobs = benchJobStream(suffix);
  try {
    const { ports, common } = await startServices(pool, children, { DATABASE_URL: database.url, ...jobs });
    const key = randomBytes(16).toString("hex");
    // Trigger rate limits far above what a run reaches, so none is refused; leases still come
    // from Redis several times a window.
    const gatewayEnv = { ...common, GATEWAY_HOST: "127.0.0.1", GATEWAY_METRICS_PORT: "0", BOOTSTRAP_API_KEY: key, RATE_LIMIT_TRIGGER: "20000" };
    children.push(startProcess("gateway", { ...gatewayEnv, GATEWAY_PORT: String(ports.gateway) }));
    const api = `http://127.0.0.1:${ports.gateway}`;
    const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
    await waitFor(async () => (await fetch(`${api}/readyz/dependencies`)).ok, "gateway", 60_000);
    const post = async (path, body, as = headers) => (await fetch(`${api}${path}`, { method: "POST", headers: as, body: JSON.stringify(body) })).json();
    const workflow = (await post("/v1/workflows", { name: "Bench", active: true, steps: [{ template: { type: "in_app", content: "Order {{n}}" } }] })).data;
    const name = workflow.triggers[0].identifier;
    await post("/v1/subscribers", { subscriberId: "bench-sub" });

    let workerStarted = false;
    const startWorker = () => {
      if (workerStarted) return;
      workerStarted = true;
      children.push(startProcess("worker", { ...common, WORKER_PORT: String(ports.worker) }));
    };
    const singleTriggers = (n, origin = api) => ({
      url: `${origin}/v1/events/trigger`,
      method: "POST",
      headers,
      connections: CONNECTIONS,
      duration: SECONDS,
      body: JSON.stringify({ name, to: "bench-sub", payload: { n } }),
    });

    // 1. Acceptance at 100 connections, no worker running (the floor has no consumer either).
    // The floor and ours alternate, ACCEPTANCE_ROUNDS runs each, and the medians are compared:
    // this machine's speed drifts within minutes, so one run of each is a coin toss.
    if (PHASES.has("acceptance")) {
      const floorG = await startTriggerFloor("acceptance", `BENCH_FLOOR_G_${suffix}`);
      const floorLoad = {
        url: floorG.url,
        method: "POST",
        headers: floorG.headers,
        connections: CONNECTIONS,
        duration: SECONDS,
        body: JSON.stringify({ name, to: "bench-sub", payload: {} }),
      };
      /** One load run with the CPU the given processes, and the first of them (the gateway), spent per request (warm-up included). */
      const measured = async (pids, options) => {
        const cpu = cpuUse(pids);
        const gatewayCpu = cpuUse([pids[0]]);
        const result = await load(options);
        const requests = result.total + result.warmup;
        return { ...result, cpuPerRequest: cpu() / requests, gatewayCpuPerRequest: gatewayCpu() / requests };
      };
      // What rate limiting costs: two more gateways over the same services, started alike, one
      // without it, measured one after the other in every round (which goes first alternates).
      // Not the gateway above: it served this run's setup, and a process's history moves its
      // CPU per request by as much as what is measured here.
      const startGateway = async (env) => {
        const port = await freePort();
        const child = startProcess("gateway", { ...gatewayEnv, ...env, GATEWAY_PORT: String(port) });
        const origin = `http://127.0.0.1:${port}`;
        await waitFor(async () => (await fetch(`${origin}/readyz`)).ok, "gateway", 60_000);
        return { child, origin };
      };
      const [limited, unlimited] = await Promise.all([startGateway({}), startGateway({ RATE_LIMITS: "off" })]);
      const servicePids = children.filter((child) => child.name !== "gateway").map((child) => child.pid);
      const floorRuns = [];
      const ourRuns = [];
      const limitedRuns = [];
      const unlimitedRuns = [];
      for (let round = 0; round < ACCEPTANCE_ROUNDS; round++) {
        floorRuns.push(await measured([floorG.pid], floorLoad));
        ourRuns.push(await measured([children.find((child) => child.name === "gateway").pid, ...servicePids], singleTriggers(1)));
        const pair = [
          async () => limitedRuns.push(await measured([limited.child.pid, ...servicePids], singleTriggers(1, limited.origin))),
          async () => unlimitedRuns.push(await measured([unlimited.child.pid, ...servicePids], singleTriggers(1, unlimited.origin))),
        ];
        if (round % 2 === 1) pair.reverse();
        for (const run of pair) await run();
        const line = (run) => `${Math.round(run.rps)} req/s (gateway ${Math.round(run.gatewayCpuPerRequest * 1e6)} µs/request)`;
        console.log(
          `acceptance round ${round + 1}: ours ${Math.round(ourRuns[round].rps)} req/s, floor ${Math.round(floorRuns[round].rps)} req/s; ` +
            `rate limits on ${line(limitedRuns[round])}, off ${line(unlimitedRuns[round])}`,
        );
      }
      await floorG.stop();
      await Promise.all([stopProcess(limited.child), stopProcess(unlimited.child)]);
      if ([...ourRuns, ...limitedRuns, ...unlimitedRuns].some((run) => run.failed > 0)) throw new Error("trigger requests failed");
      const median = (runs, pick) => percentile(runs.map(pick), 50);
      report({
        name: "trigger acceptance, 100 connections",
        value: median(ourRuns, (run) => run.rps),
        unit: "req/s",
        floor: median(floorRuns, (run) => run.rps),
        target: "ratio ≥ 0.50 of floor (g)",
      });
      report({
        name: "trigger acceptance p99, 100 connections",
        value: median(ourRuns, (run) => run.p99),
        unit: "ms",
        floor: median(floorRuns, (run) => run.p99),
      });
      report({
        name: "trigger acceptance with rate limits, against without",
        value: median(limitedRuns, (run) => run.rps),
        unit: "req/s",
        floor: median(unlimitedRuns, (run) => run.rps),
        target: "ratio ≥ 0.95",
      });
      // Steadier than throughput on a shared machine: the gateway's own CPU per request.
      report({
        name: "trigger acceptance, CPU of the gateway per request with rate limits, against without",
        value: median(limitedRuns, (run) => run.gatewayCpuPerRequest) * 1e6,
        unit: "µs",
        floor: median(unlimitedRuns, (run) => run.gatewayCpuPerRequest) * 1e6,
        target: "ratio ≤ 1.05",
      });
      // Where throughput goes: CPU of the Node processes per accepted request (Postgres, NATS and Redis apart).
      report({
        name: "trigger acceptance, CPU of our processes per request",
        value: median(ourRuns, (run) => run.cpuPerRequest) * 1e6,
        unit: "µs",
        floor: median(floorRuns, (run) => run.cpuPerRequest) * 1e6,
      });

      // Every accepted trigger becomes a message once the worker runs: accepted = persisted.
      const acceptedTotal = (await pool.query("SELECT count(*)::int AS n FROM triggers.trigger_records")).rows[0].n;
      startWorker();
      const drainStarted = performance.now();
      await waitFor(async () => (await pool.query("SELECT count(*)::int AS n FROM messages.messages")).rows[0].n >= acceptedTotal, "backlog drained", 600_000);
      report({
        name: `backlog of ${acceptedTotal} triggers → in-app messages`,
        value: acceptedTotal / ((performance.now() - drainStarted) / 1000),
        unit: "messages/s",
      });
    }
    startWorker();

    // 2. Trigger → in-app message committed, at fixed rates.
    if (PHASES.has("latency")) {
      const floorE2e = await startTriggerFloor("e2e", `BENCH_FLOOR_E_${suffix}`, database.url);
      for (const rate of [1000, 3000]) {
        const floorRun = await paced(floorE2e.url, floorE2e.headers, rate, Math.min(E2E_SECONDS, 20), `floor-${rate}`, name, "bench-sub");
        await waitFor(
          async () =>
            (await pool.query("SELECT count(*)::int AS n FROM bench_floor_rows WHERE transaction_id LIKE $1", [`floor-${rate}-%`])).rows[0].n >=
            floorRun.accepted.length,
          "floor drained",
          120_000,
        );
        const floorLatencies = (
          await pool.query("SELECT extract(epoch FROM committed_at) * 1000 - sent_at AS ms FROM bench_floor_rows WHERE transaction_id LIKE $1", [
            `floor-${rate}-%`,
          ])
        ).rows.map((row) => Number(row.ms));

        const run = await paced(`${api}/v1/events/trigger`, headers, rate, E2E_SECONDS, `e2e-${rate}`, name, "bench-sub");
        // Persisted: the answered triggers that left their message (one each: the idempotency key).
        const persistedOf = async () =>
          (await pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE transaction_id = ANY($1)", [run.accepted])).rows[0].n;
        await waitFor(async () => (await persistedOf()) >= run.accepted.length, "e2e drained", 300_000);
        const persisted = await persistedOf();
        const latencies = (
          await pool.query(
            "SELECT extract(epoch FROM created_at) * 1000 - (payload->>'sentAt')::float8 AS ms FROM messages.messages WHERE transaction_id LIKE $1",
            [`e2e-${rate}-%`],
          )
        ).rows.map((row) => Number(row.ms));
        console.log(
          `  offered ${rate}/s for ${E2E_SECONDS} s: ${run.rate.toFixed(0)}/s accepted (floor ${floorRun.rate.toFixed(0)}/s for ${Math.min(E2E_SECONDS, 20)} s)`,
        );
        report({ name: `trigger → in-app p50 at ${rate}/s`, value: percentile(latencies, 50), unit: "ms", floor: percentile(floorLatencies, 50) });
        report({
          name: `trigger → in-app p99 at ${rate}/s`,
          value: percentile(latencies, 99),
          unit: "ms",
          floor: percentile(floorLatencies, 99),
          target: "ratio ≤ 7",
        });
        report({
          name: `accepted = persisted at ${rate}/s (${run.accepted.length} accepted, ${run.failed} refused)`,
          value: persisted,
          unit: "messages",
          floor: run.accepted.length,
          target: "ratio = 1",
        });
      }
      await floorE2e.stop();
    }

    // 3. Broadcast to BROADCAST subscribers of another environment while this one keeps triggering.
    if (PHASES.has("broadcast")) {
      const copyRate = await copyFloor(pool, BROADCAST);
      const otherKey = randomBytes(16).toString("hex");
      await addKey(pool, sealer, otherKey, { environment: "Broadcast" });
      const otherHeaders = { ...headers, authorization: `ApiKey ${otherKey}` };
      const broadcastWorkflow = (
        await post("/v1/workflows", { name: "Everyone", active: true, steps: [{ template: { type: "in_app", content: "Hello everyone" } }] }, otherHeaders)
      ).data;
      const environmentId = broadcastWorkflow._environmentId;
      await pool.query(
        `INSERT INTO subscribers.subscribers (id, organization_id, environment_id, subscriber_id)
         SELECT 'd' || lpad(to_hex(i), 23, '0'), $1, $2, 'everyone-' || i FROM generate_series(1, $3) AS i`,
        [broadcastWorkflow._organizationId, environmentId, BROADCAST],
      );
      await pool.query("ANALYZE subscribers.subscribers");
      // Their throughput: the same single triggers, worker running, nothing else going on.
      const alone = await load(singleTriggers(2));
      // Where the broadcast's CPU goes: our processes and this database's server processes (a
      // connection opened meanwhile counts from zero; one closed meanwhile is missed).
      const databasePids = async () => (await pool.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")).rows.map((row) => row.pid);
      const cpuOrZero = (pid) => {
        try {
          return cpuSeconds(pid);
        } catch {
          return 0;
        }
      };
      const databaseBefore = new Map((await databasePids()).map((pid) => [pid, cpuOrZero(pid)]));
      const childrenBefore = children.map((child) => cpuSeconds(child.pid));
      const broadcastStarted = performance.now();
      const broadcast = (await post("/v1/events/trigger/broadcast", { name: broadcastWorkflow.triggers[0].identifier, payload: {} }, otherHeaders)).data;
      // The single triggers run for as long as the broadcast does, and only the ones answered
      // meanwhile count: the broadcast is timed beside the load, not after it.
      const singles = autocannon({ ...singleTriggers(3), duration: 600 });
      const answered = { ok: 0, failed: 0 };
      singles.on("response", (_client, status) => {
        if (status >= 200 && status < 300) answered.ok += 1;
        else answered.failed += 1;
      });
      // The poll must not load the database it measures: it counts on the idempotency index
      // (environment, transaction), and often only near the end (a count over a whole broadcast is
      // not cheap, and polled often it took a visible share of the broadcast's database CPU).
      const broadcastCount = async () =>
        (
          await pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE environment_id = $1 AND transaction_id = $2", [
            environmentId,
            broadcast.transactionId,
          ])
        ).rows[0].n;
      const deadline = Date.now() + 600_000;
      try {
        for (let count = await broadcastCount(); count < BROADCAST; count = await broadcastCount()) {
          if (Date.now() > deadline) throw new Error(`broadcast committed ${count} of ${BROADCAST} messages in 600 s`);
          await new Promise((resolve) => setTimeout(resolve, count >= 0.8 * BROADCAST ? 50 : 500));
        }
      } finally {
        singles.stop();
      }
      const broadcastSeconds = (performance.now() - broadcastStarted) / 1000;
      const during = { rps: answered.ok / broadcastSeconds, failed: answered.failed };
      await singles;
      const childrenCpu = children.map((child, index) => cpuSeconds(child.pid) - childrenBefore[index]);
      const databaseCpu = (await databasePids()).reduce((sum, pid) => sum + cpuOrZero(pid) - (databaseBefore.get(pid) ?? 0), 0);
      report({
        name: `broadcast to ${BROADCAST} subscribers, all in-app messages committed`,
        value: broadcastSeconds,
        unit: "s",
        floor: BROADCAST / (0.1 * copyRate),
        target: "ratio ≤ 1 (within subscribers ÷ 10 % of the COPY ×1000 floor)",
      });
      console.log(
        `  CPU during the broadcast (the single triggers of the other environment included): ${children.map((child, index) => `${child.name} ${childrenCpu[index].toFixed(1)} s`).join(", ")}, postgres ${databaseCpu.toFixed(1)} s`,
      );
      report({
        name: `single triggers of another environment during the broadcast (${during.failed} failed)`,
        value: during.rps,
        unit: "req/s",
        floor: alone.rps,
        target: "ratio ≥ 0.50",
      });
    }

    // 4. Idle: every process together, once every accepted trigger has left its messages.
    if (PHASES.has("idle")) {
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
      // Right after a load V8 still collects and compiles for a while (its memory reducer runs
      // GCs once allocation stops); at rest only timers and polls would cost anything. Both shown.
      const idleFor = async (label, seconds) => {
        const before = children.map((child) => cpuSeconds(child.pid));
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        const used = children.map((child, index) => cpuSeconds(child.pid) - before[index]);
        report({
          name: `idle CPU of all ${children.length} processes, ${label}`,
          value: (used.reduce((sum, cpu) => sum + cpu, 0) / seconds) * 100,
          unit: "% of one core",
          target: "< 2",
        });
        console.log(`  by process: ${children.map((child, index) => `${child.name} ${((used[index] / seconds) * 100).toFixed(2)} %`).join(", ")}`);
      };
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await idleFor("5–15 s after the last work", 10);
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      await idleFor("at rest (30–60 s after the last work)", 30);
    }
  } finally {
    await tearDownBench({ children, streams: jobs, pool, database });
  }
}
