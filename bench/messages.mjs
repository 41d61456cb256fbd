// Messages: unseen count, first feed page and mark-all for a subscriber holding 1,000,000 in-app
// messages in a 2,000,000-row table, each beside its floor measured in the same run:
//   - DB time of what one request runs, vs the raw statement over the ideal index (EXPLAIN ANALYZE);
//   - HTTP p99 at 100 connections (autocannon) through gateway → messages (→ subscribers), vs the
//     same gateway answering /livez (no auth, no RPC) and a subscriber GET (auth + one RPC);
//   - mark-all seen (chunked), vs one UPDATE of the same rows, with requests served meanwhile.
// Processes run as children of this one (LOG_LEVEL=warn), over a database created and dropped here.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { createPool } from "@notify/runtime";
import { entryOf } from "../scripts/services.mjs";

const HEAVY_MESSAGES = Number(process.env.BENCH_HEAVY_MESSAGES ?? 1_000_000);
const OTHER_SUBSCRIBERS = 1_000;
const TOTAL_MESSAGES = 2 * HEAVY_MESSAGES;
const HTTP_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const DB_SAMPLES = 300;

const messagesStore = await import(new URL("../services/messages/dist/store.js", import.meta.url).href);
const subscribersStore = await import(new URL("../services/subscribers/dist/store.js", import.meta.url).href);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(probe, what, ms = 30_000) {
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

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Planning + execution time (ms) Postgres reports for every statement `run` makes, summed. */
async function dbTime(pool, run) {
  let total = 0;
  const explaining = {
    async query(text, values) {
      const { rows } = await pool.query(`EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ${text}`, values);
      const [plan] = rows[0]["QUERY PLAN"];
      total += plan["Planning Time"] + plan["Execution Time"];
      return { rows: [{ count: 0 }], rowCount: 0 };
    },
  };
  await run(explaining);
  return total;
}

async function medianDbTime(pool, run) {
  for (let index = 0; index < 30; index++) await dbTime(pool, run);
  const samples = [];
  for (let index = 0; index < DB_SAMPLES; index++) samples.push(await dbTime(pool, run));
  return median(samples);
}

/** autocannon against one URL; a warm-up second first, then the measured run. */
async function load(url, headers, connections = 100, seconds = HTTP_SECONDS) {
  await autocannon({ url, headers, connections, duration: 1 });
  const result = await autocannon({ url, headers, connections, duration: seconds });
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) throw new Error(`${url}: ${failed} failed requests of ${result.requests.total}`);
  return { p99: result.latency.p99, rps: result.requests.average };
}

/** Runs `work` while a background load hits `url`; returns the work's duration and the load's latencies. */
async function during(work, url, headers, connections) {
  const background = autocannon({ url, headers, connections, duration: 3600 });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  background.stop();
  const result = await background;
  return { seconds, p99: result.latency.p99, max: result.latency.max, requests: result.requests.total, failed: result.errors + result.timeouts + result.non2xx };
}

function startProcess(name, env) {
  const child = spawn(process.execPath, [fileURLToPath(entryOf(name))], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  child.once("exit", (code, signal) => {
    if (!child.stopping) console.error(`${name} exited (${signal ?? code})`);
  });
  return child;
}

async function stopProcess(child) {
  if (child.exitCode !== null) return;
  child.stopping = true;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

export default async function messagesBench({ report }) {
  const baseUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/notify");
  const adminUrl = new URL(baseUrl);
  adminUrl.pathname = "/postgres";
  const name = `notify_bench_messages_${randomBytes(4).toString("hex")}`;
  const databaseUrl = new URL(baseUrl);
  databaseUrl.pathname = `/${name}`;
  const admin = createPool(adminUrl.toString(), 1);
  await admin.query(`CREATE DATABASE ${name}`);
  const children = [];
  const pool = createPool(databaseUrl.toString(), 4);

  try {
    const [subscribersPort, messagesPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
    const key = randomBytes(16).toString("hex");
    const common = {
      DATABASE_URL: databaseUrl.toString(),
      SUBSCRIBERS_URL: `http://127.0.0.1:${subscribersPort}`,
      MESSAGES_URL: `http://127.0.0.1:${messagesPort}`,
    };
    // Started one after another: each applies its migrations to the new database first.
    children.push(startProcess("subscribers", { ...common, SUBSCRIBERS_PORT: String(subscribersPort) }));
    await waitFor(async () => (await pool.query("SELECT to_regclass('subscribers.subscribers') AS t")).rows[0].t, "subscribers");
    children.push(startProcess("messages", { ...common, MESSAGES_PORT: String(messagesPort) }));
    await waitFor(async () => (await pool.query("SELECT to_regclass('messages.messages') AS t")).rows[0].t, "messages");
    children.push(startProcess("gateway", { ...common, GATEWAY_HOST: "127.0.0.1", GATEWAY_PORT: String(gatewayPort), BOOTSTRAP_API_KEY: key }));
    const api = `http://127.0.0.1:${gatewayPort}`;
    const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
    await waitFor(async () => (await fetch(`${api}/livez`)).ok, "gateway");

    // Data: the heavy subscriber through the API, the rest straight into the tables.
    const created = await fetch(`${api}/v1/subscribers`, { method: "POST", headers, body: JSON.stringify({ subscriberId: "bench-heavy" }) });
    const heavy = (await created.json()).data;
    const environmentId = heavy._environmentId;
    const organizationId = heavy._organizationId;
    console.log(`loading ${TOTAL_MESSAGES.toLocaleString()} messages (${HEAVY_MESSAGES.toLocaleString()} for one subscriber) …`);
    const loadStarted = performance.now();
    await pool.query(
      `INSERT INTO subscribers.subscribers (id, organization_id, environment_id, subscriber_id)
       SELECT 'b' || lpad(to_hex(i), 23, '0'), $1, $2, 'bench-other-' || i FROM generate_series(0, $3 - 1) AS i`,
      [organizationId, environmentId, OTHER_SUBSCRIBERS],
    );
    // Every other message is the heavy subscriber's; ids grow with time, as ObjectIds do.
    const owner = `CASE WHEN i % 2 = 0 THEN $3 ELSE 'b' || lpad(to_hex((i / 2) % $5), 23, '0') END`;
    const externalOwner = `CASE WHEN i % 2 = 0 THEN 'bench-heavy' ELSE 'bench-other-' || ((i / 2) % $5) END`;
    await pool.query(
      `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id, created_at)
       SELECT 'c' || lpad(to_hex(i), 23, '0'), $1, $2, 'bench-' || i, ${owner}, ${externalOwner}, 'workflow',
              now() - interval '1 day' + i * interval '1 millisecond'
         FROM generate_series(1, $4) AS i`,
      [organizationId, environmentId, heavy._id, TOTAL_MESSAGES, OTHER_SUBSCRIBERS],
    );
    await pool.query(
      `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                      template_id, template_identifier, message_template_id, step_id, transaction_id, channel,
                                      content, provider_id, cta, feed_id, feed_identifier, payload, created_at, updated_at)
       SELECT 'a' || lpad(to_hex(i), 23, '0'), $1, $2, 'c' || lpad(to_hex(i), 23, '0'), ${owner}, ${externalOwner},
              'workflow', 'welcome', 'step-template', 'step', 'bench-' || i, 'in_app',
              to_jsonb('Your order ' || i || ' has shipped'), 'novu', '{"type":"redirect","url":"https://example.com/orders"}',
              'feed', 'general', jsonb_build_object('orderId', i),
              now() - interval '1 day' + i * interval '1 millisecond', now() - interval '1 day' + i * interval '1 millisecond'
         FROM generate_series(1, $4) AS i`,
      [organizationId, environmentId, heavy._id, TOTAL_MESSAGES, OTHER_SUBSCRIBERS],
    );
    await pool.query("VACUUM ANALYZE messages.messages");
    await pool.query("VACUUM ANALYZE messages.notifications");
    await pool.query("VACUUM ANALYZE subscribers.subscribers");
    console.log(`loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

    const heavyScope = { subscriberId: heavy._id, feedIdentifiers: null, read: null, seen: null };
    const resolve = (db) => subscribersStore.selectSubscribersByIds(db, environmentId, ["bench-heavy"], []);

    // Unseen count: what one request runs (resolve the subscriber, count up to 100) vs the raw
    // capped count over a partial index WHERE NOT seen, created for the floor and dropped after it.
    const ourCount = await medianDbTime(pool, async (db) => {
      await resolve(db);
      await messagesStore.countMessages(db, environmentId, [{ subscriberId: heavy._id, seen: false, limit: 100 }]);
    });
    await pool.query(
      "CREATE INDEX bench_floor_unseen ON messages.messages (environment_id, subscriber_id) WHERE channel = 'in_app' AND NOT seen",
    );
    const countFloor = await medianDbTime(pool, (db) =>
      db.query(
        `SELECT count(*) FROM (SELECT 1 FROM messages.messages
          WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app' AND NOT seen LIMIT 100) capped`,
        [environmentId, heavy._id],
      ),
    );
    await pool.query("DROP INDEX messages.bench_floor_unseen");
    report({ name: "unseen count (limit 100) DB time per request, 1M of 2M rows", value: ourCount, unit: "ms", floor: countFloor, target: "≤ 5× floor" });

    // First feed page (20 newest): what one request runs vs the raw keyset page.
    const ourFeed = await medianDbTime(pool, async (db) => {
      await resolve(db);
      await messagesStore.selectFeedPage(db, environmentId, heavyScope, 0, 20);
      await messagesStore.countFeed(db, environmentId, heavyScope, 1000);
    });
    const feedFloor = await medianDbTime(pool, (db) =>
      db.query(
        `SELECT * FROM messages.messages WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app'
          ORDER BY created_at DESC, id DESC LIMIT 20`,
        [environmentId, heavy._id],
      ),
    );
    report({ name: "first feed page (20) DB time per request, incl. capped total", value: ourFeed, unit: "ms", floor: feedFloor });

    // HTTP at 100 connections.
    const auth = { authorization: `ApiKey ${key}` };
    const livez = await load(`${api}/livez`, {});
    const oneRpc = await load(`${api}/v1/subscribers/bench-heavy`, auth);
    const unseen = await load(`${api}/v1/subscribers/bench-heavy/notifications/unseen?limit=100`, auth);
    const feed = await load(`${api}/v1/subscribers/bench-heavy/notifications/feed?limit=20`, auth);
    report({ name: "HTTP floor: /livez p99 (no auth, no RPC)", value: livez.p99, unit: "ms" });
    report({ name: "HTTP floor: GET subscriber p99 (auth + one RPC)", value: oneRpc.p99, unit: "ms" });
    report({ name: "unseen count p99 at 100 connections", value: unseen.p99, unit: "ms", floor: oneRpc.p99, target: "≤ 10 ms" });
    report({ name: "first feed page p99 at 100 connections", value: feed.p99, unit: "ms", floor: oneRpc.p99, target: "≤ 10 ms" });
    report({ name: "throughput: /livez / GET subscriber / unseen / feed", value: unseen.rps, unit: `req/s unseen (livez ${Math.round(livez.rps)}, subscriber ${Math.round(oneRpc.rps)}, feed ${Math.round(feed.rps)})` });

    // Mark-all seen over the 1M messages: one UPDATE (the floor) vs our chunked mark-all, each
    // with the same load meanwhile: another subscriber's unseen count at 20 connections.
    const otherUnseen = `${api}/v1/subscribers/bench-other-7/notifications/unseen`;
    const reset = async () => {
      await pool.query(
        `UPDATE messages.messages SET seen = false, read = false, last_seen_date = NULL, last_read_date = NULL
          WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app' AND seen`,
        [environmentId, heavy._id],
      );
      await pool.query("VACUUM ANALYZE messages.messages");
    };
    const floorUpdate = async () => {
      const { rowCount } = await pool.query(
        `UPDATE messages.messages SET seen = true, last_seen_date = now(), updated_at = now()
          WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app' AND NOT seen`,
        [environmentId, heavy._id],
      );
      if (rowCount !== HEAVY_MESSAGES) throw new Error(`the floor UPDATE changed ${rowCount} rows`);
    };
    const ourMarkAll = async () => {
      const reply = await fetch(`${api}/v1/subscribers/bench-heavy/messages/mark-all`, { method: "POST", headers, body: JSON.stringify({ markAs: "seen" }) });
      const body = await reply.json();
      if (body.data !== HEAVY_MESSAGES) throw new Error(`mark-all answered ${reply.status} ${JSON.stringify(body)}`);
    };
    // Floor before and after ours, each on a table reset to the same state, averaged.
    const floorFirst = await during(floorUpdate, otherUnseen, auth, 20);
    await reset();
    const ours = await during(ourMarkAll, otherUnseen, auth, 20);
    await reset();
    const floorSecond = await during(floorUpdate, otherUnseen, auth, 20);
    const markAllFloor = (floorFirst.seconds + floorSecond.seconds) / 2;
    report({ name: "mark-all seen, 1M messages (chunked, via HTTP)", value: ours.seconds, unit: "s", floor: markAllFloor, target: "≤ 2× floor" });
    report({ name: "  other requests meanwhile: p99 / max", value: ours.p99, unit: `ms p99, max ${ours.max} ms, ${ours.requests} served, ${ours.failed} failed` });
    report({ name: "  same during the one-UPDATE floor: p99 / max", value: floorFirst.p99, unit: `ms p99, max ${floorFirst.max} ms, ${floorFirst.requests} served` });
  } finally {
    await Promise.all(children.map(stopProcess));
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
