// Plumbing the benchmarks share: free ports, child processes of the services, a database of
// their own, and autocannon load. Benchmarks run each service as its own process, as deployed.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { connect } from "nats";
import { createPool } from "@notify/runtime";
import { freePort } from "@notify/testing";
import { entryOf } from "./services.mjs";

// The ports of the tests: the same race (a port handed out, bound seconds later by a child) applies here.
export { freePort };

export async function waitFor(probe, what, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** A database of the benchmark's own, dropped by `drop()`. */
export async function benchDatabase(label) {
  const baseUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/notify");
  const adminUrl = new URL(baseUrl);
  adminUrl.pathname = "/postgres";
  const name = `notify_bench_${label}_${randomBytes(4).toString("hex")}`;
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const admin = createPool(adminUrl.toString(), 1);
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * A service (or another script) as a child process. With BENCH_PROFILE_DIR set, each child writes
 * a V8 CPU profile there when it exits (open it in Chrome DevTools or speedscope).
 */
export function startProcess(name, env, entry = entryOf(name)) {
  const profile = process.env.BENCH_PROFILE_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`, `--cpu-prof-name=${name}.${Date.now()}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...profile, fileURLToPath(entry)], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  child.name = name;
  // A bench that dies of an uncaught error never reaches its cleanup; its services must not
  // outlive it, holding their database and ports.
  const orphaned = () => child.kill("SIGTERM");
  process.once("exit", orphaned);
  child.once("exit", (code, signal) => {
    process.off("exit", orphaned);
    if (!child.stopping) console.error(`${name} exited (${signal ?? code})`);
  });
  return child;
}

export async function stopProcess(child) {
  if (child.exitCode !== null) return;
  child.stopping = true;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** A floor server (bench-floor-server.mjs, FLOOR=kind) in a process of its own, once it answers. */
export async function startFloor(kind, env = {}) {
  const port = await freePort();
  const child = startProcess(`floor-${kind}`, { FLOOR: kind, PORT: String(port), ...env }, new URL("./bench-floor-server.mjs", import.meta.url));
  const origin = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${origin}/`)).status === 404, `floor ${kind}`);
  return { origin, headers: { authorization: "ApiKey floor-key" }, child, pid: child.pid, stop: () => stopProcess(child) };
}

/** CPU seconds (user + system) a process has used, from /proc. */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}

/** autocannon: a warm-up second, then the measured run; every non-2xx counts as a failure. */
export async function load(options) {
  const warmup = await autocannon({ ...options, duration: 1 });
  const result = await autocannon(options);
  return {
    rps: result.requests.average,
    total: result.requests.total,
    warmup: warmup.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.errors + result.timeouts + result.non2xx,
  };
}

export { autocannon };

/** The tables whose existence says a service has migrated its schema and is up. */
const SCHEMA_OF = {
  subscribers: "subscribers.subscribers",
  integrations: "integrations.integrations",
  topics: "topics.topics",
  messages: "messages.messages",
  triggers: "triggers.trigger_records",
};

/**
 * The RPC services as child processes on free ports (added to `children`), started one after
 * another so each migrates before the next needs it; answers the ports (the gateway's and the
 * worker's chosen too) and the variables every process needs to reach them.
 */
export async function startServices(pool, children, env) {
  const names = Object.keys(SCHEMA_OF);
  const ports = Object.fromEntries(await Promise.all([...names, "gateway", "worker"].map(async (name) => [name, await freePort()])));
  const common = { ...env, ...Object.fromEntries(names.map((name) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${ports[name]}`])) };
  for (const name of names) {
    children.push(startProcess(name, { ...common, [`${name.toUpperCase()}_PORT`]: String(ports[name]) }));
    await waitFor(async () => (await pool.query("SELECT to_regclass($1) AS t", [SCHEMA_OF[name]])).rows[0].t, name);
  }
  return { ports, common };
}

/** The job stream a bench run uses, of its own so that no other run or process meets its jobs. */
export const benchJobStream = (suffix) => ({ JOBS_STREAM: `BENCH_JOBS_${suffix}`, JOBS_SUBJECT_PREFIX: `bench.${suffix}.jobs` });

/**
 * Ends a bench run: its processes callers first (a client whose server goes away first can crash on
 * the GOAWAY, connectrpc/connect-es#1768), then every `*_STREAM` of `streams`, its pool, its database.
 */
export async function tearDownBench({ children, streams, pool, database }) {
  for (const child of children.reverse()) await stopProcess(child);
  const nats = await connect({ servers: "127.0.0.1:4222" });
  const manager = await nats.jetstreamManager();
  for (const [name, stream] of Object.entries(streams)) {
    if (name.endsWith("_STREAM")) await manager.streams.delete(stream).catch(() => undefined);
  }
  await nats.close();
  await pool.end();
  await database.drop();
}

/** Linux's unit for CPU time in /proc (USER_HZ). */
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) a process has used so far, from /proc; 0 once it is gone. */
async function cpuSecondsOf(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (!stat) return 0;
  // The fields after the command name (which may hold spaces) start at its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** The machine's servers a step also makes work, by their processes' command name. */
const SERVERS = new Map([
  ["postgres", "postgres"],
  ["nats-server", "nats"],
]);

/**
 * CPU seconds used so far by each child, by this process, and by the machine's PostgreSQL and
 * NATS servers: taken before and after a step, the differences say where its time went (the
 * servers' figures hold whatever else the machine ran meanwhile, and lose what a process that
 * ended in between had used).
 */
export async function cpuUse(children) {
  const own = process.cpuUsage();
  const use = { bench: (own.user + own.system) / 1e6, postgres: 0, nats: 0 };
  for (const child of children) use[child.name] = (use[child.name] ?? 0) + (await cpuSecondsOf(child.pid));
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const server = SERVERS.get((await readFile(`/proc/${entry}/comm`, "utf8").catch(() => "")).trim());
    if (server) use[server] += await cpuSecondsOf(entry);
  }
  return use;
}

/** What `cpuUse` grew by between two readings, one line: each name's seconds, largest first. */
export function cpuLine(before, after) {
  const grown = Object.keys(after).map((name) => [name, after[name] - (before[name] ?? 0)]);
  grown.sort((a, b) => b[1] - a[1]);
  const total = grown.reduce((sum, [, seconds]) => sum + seconds, 0);
  return `CPU ${total.toFixed(1)} s: ${grown.map(([name, seconds]) => `${name} ${seconds.toFixed(2)}`).join(", ")}`;
}
