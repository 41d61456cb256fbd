// Messages: unseen count, first feed page and mark-all for a subscriber holding 1,000,000 in-app
// messages in a 2,000,000-row table, each beside its floor measured in the same run:
//   - DB time of what one request runs (EXPLAIN ANALYZE of our store's statements) vs the raw
//     statement over the ideal index;
//   - HTTP p99 at 100 connections (autocannon) through gateway → messages vs floor (b), Koa +
//     router + ApiKey check + JSON with no RPC, in a process of its own; also feeds of 1,000
//     inboxes whose messages look like real ones (a ~1.5 KB payload, a two-step workflow); feeds
//     also through a second gateway that keeps no page, as pages that keep changing are served;
//   - mark-all seen (chunked, through HTTP) vs one UPDATE of the same rows, with other requests
//     measured meanwhile.
// The processes run as children of this one (LOG_LEVEL=warn) over a database created and dropped
// here. BENCH_HEAVY_MESSAGES and BENCH_SECONDS shrink a run while working on it.
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPool, createPreparedReadPool } from "@notify/runtime";
import { explaining } from "@notify/testing";
import {
  autocannon,
  benchDatabase,
  freePort,
  load as loadOnce,
  percentile,
  startFloor,
  startProcess,
  waitFor,
  benchJobStream,
  tearDownBench,
} from "../scripts/bench-lib.mjs";

const HEAVY_MESSAGES = Number(process.env.BENCH_HEAVY_MESSAGES ?? 1_000_000);
const OTHER_SUBSCRIBERS = 1_000;
/** Inboxes as real ones look: 20 messages each, with a ~1.5 KB payload and a two-step workflow. */
const INBOXES = 1_000;
const INBOX_MESSAGES = 20;
const INBOX_PAYLOAD = Object.fromEntries(
  Array.from({ length: 40 }, (_, index) => [
    `field${index}`,
    index % 3 === 0 ? { nested: `value ${index}`, n: index, list: [1, 2, 3] } : `some text value ${index}`,
  ]),
);
const TOTAL_MESSAGES = 2 * HEAVY_MESSAGES;
const HTTP_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const DB_SAMPLES = 300;

const messagesStore = await import(new URL("../services/messages/dist/store.js", import.meta.url).href);
const subscribersStore = await import(new URL("../services/subscribers/dist/store.js", import.meta.url).href);

/** Planning + execution time (ms) Postgres reports for every statement `run` makes, summed. */
async function dbTime(pool, preparedClient, run) {
  let total = 0;
  await run(explaining(pool, preparedClient, (report) => (total += report["Planning Time"] + report["Execution Time"])));
  return total;
}

/** The median dbTime; named statements run prepared on a connection like the service's prepared-read pool's. */
async function medianDbTime(pool, run) {
  const preparedPool = createPreparedReadPool(pool.options.connectionString, 1);
  const preparedClient = await preparedPool.connect();
  try {
    for (let index = 0; index < 30; index++) await dbTime(pool, preparedClient, run);
    const samples = [];
    for (let index = 0; index < DB_SAMPLES; index++) samples.push(await dbTime(pool, preparedClient, run));
    return percentile(samples, 50);
  } finally {
    preparedClient.release();
    await preparedPool.end();
  }
}

/** autocannon at `connections` against one URL, or paths `pathOf` picks per request; any failed request fails the run. */
async function load(url, headers, connections = 100, pathOf = undefined) {
  const requests = pathOf ? [{ setupRequest: (request) => ({ ...request, path: pathOf() }) }] : undefined;
  const result = await loadOnce({ url, headers, connections, duration: HTTP_SECONDS, requests });
  if (result.failed > 0) throw new Error(`${url}: ${result.failed} failed requests of ${result.total}`);
  return result;
}

/** Runs `work` while a background load hits `url`; returns the work's duration and the load's latencies. */
async function during(work, url, headers, connections) {
  const background = autocannon({ url, headers, connections, duration: 3600 });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  let seconds;
  try {
    await work();
    seconds = (performance.now() - started) / 1000;
  } finally {
    background.stop();
  }
  const result = await background;
  return {
    seconds,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    failed: result.errors + result.timeouts + result.non2xx,
  };
}

export default async function messagesBench({ report }) {
  const database = await benchDatabase("messages");
  const children = [];
  const pool = createPool(database.url, 4);
  const suffix = randomBytes(4).toString("hex");
  // The triggers process runs a relay: it gets a job stream of this run's own.
  const jobs = benchJobStream(suffix);

  try {
    const [subscribersPort, triggersPort, messagesPort, gatewayPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const key = randomBytes(16).toString("hex");
    const common = {
      DATABASE_URL: database.url,
      SUBSCRIBERS_URL: `http://127.0.0.1:${subscribersPort}`,
      TRIGGERS_URL: `http://127.0.0.1:${triggersPort}`,
      MESSAGES_URL: `http://127.0.0.1:${messagesPort}`,
      ...jobs,
    };
    // Started one after another: each applies its migrations to the new database first.
    children.push(startProcess("subscribers", { ...common, SUBSCRIBERS_PORT: String(subscribersPort) }));
    await waitFor(async () => (await pool.query("SELECT to_regclass('subscribers.subscribers') AS t")).rows[0].t, "subscribers");
    // The workflow catalogue: feeds and lists carry each message's workflow (`template`).
    children.push(startProcess("triggers", { ...common, TRIGGERS_PORT: String(triggersPort) }));
    await waitFor(async () => (await pool.query("SELECT to_regclass('triggers.workflows') AS t")).rows[0].t, "triggers");
    children.push(startProcess("messages", { ...common, MESSAGES_PORT: String(messagesPort) }));
    await waitFor(async () => (await pool.query("SELECT to_regclass('messages.messages') AS t")).rows[0].t, "messages");
    // The rate limits run, as they do in production, at a global limit above what the load asks:
    // a refused request would measure the limiter's 429 instead of the read.
    const unrefused = { RATE_LIMIT_GLOBAL: "1000000" };
    children.push(
      startProcess("gateway", {
        ...common,
        ...unrefused,
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_METRICS_PORT: "0",
        GATEWAY_PORT: String(gatewayPort),
        BOOTSTRAP_API_KEY: key,
      }),
    );
    // A second gateway that keeps no feed page: every poll takes the batched RPC.
    const unkeptPort = await freePort();
    children.push(
      startProcess("gateway", {
        ...common,
        ...unrefused,
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_METRICS_PORT: "0",
        GATEWAY_PORT: String(unkeptPort),
        BOOTSTRAP_API_KEY: key,
        FEED_CACHE_MB: "0",
      }),
    );
    const api = `http://127.0.0.1:${gatewayPort}`;
    const unkeptApi = `http://127.0.0.1:${unkeptPort}`;
    const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
    await waitFor(async () => (await fetch(`${api}/livez`)).ok && (await fetch(`${unkeptApi}/livez`)).ok, "gateways");

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
    const groups = await (await fetch(`${api}/v1/notification-groups`, { headers })).json();
    const inboxWorkflow = await fetch(`${api}/v1/workflows`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "Bench order shipped",
        notificationGroupId: groups.data[0]._id,
        active: true,
        tags: ["orders"],
        steps: [
          {
            template: {
              type: "in_app",
              content: "Your order {{orderId}} has shipped.",
              cta: { type: "redirect", data: { url: "https://example.com/orders/{{orderId}}" } },
            },
          },
          {
            template: {
              type: "email",
              subject: "Your order {{orderId}}",
              content: "<p>Hello {{subscriber.firstName}}, your order {{orderId}} has shipped.</p>",
            },
          },
        ],
      }),
    });
    const inboxWorkflowId = (await inboxWorkflow.json()).data._id;
    await pool.query(
      `INSERT INTO subscribers.subscribers (id, organization_id, environment_id, subscriber_id)
       SELECT 'd' || lpad(to_hex(i), 23, '0'), $1, $2, 'bench-inbox-' || i FROM generate_series(0, $3 - 1) AS i`,
      [organizationId, environmentId, INBOXES],
    );
    const inboxOwner = `'d' || lpad(to_hex(i % $3::int), 23, '0')`;
    await pool.query(
      `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id)
       SELECT 'f' || lpad(to_hex(i), 23, '0'), $1, $2, 'inbox-' || i, ${inboxOwner}, 'bench-inbox-' || (i % $3), $4
         FROM generate_series(0, $3::int * $5::int - 1) AS i`,
      [organizationId, environmentId, INBOXES, inboxWorkflowId, INBOX_MESSAGES],
    );
    await pool.query(
      `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                      template_id, template_identifier, message_template_id, step_id, transaction_id, channel,
                                      content, provider_id, cta, feed_identifier, payload, created_at, updated_at)
       SELECT 'e' || lpad(to_hex(i), 23, '0'), $1, $2, 'f' || lpad(to_hex(i), 23, '0'), ${inboxOwner}, 'bench-inbox-' || (i % $3),
              $4, 'bench-order-shipped', 'step-template', 'step', 'inbox-' || i, 'in_app',
              to_jsonb('Your order ' || i || ' has shipped.'), 'novu', '{"type":"redirect","url":"https://example.com/orders"}',
              'general', jsonb_build_object('orderId', i) || $6::jsonb, now() - i * interval '1 millisecond', now() - i * interval '1 millisecond'
         FROM generate_series(0, $3::int * $5::int - 1) AS i`,
      [organizationId, environmentId, INBOXES, inboxWorkflowId, INBOX_MESSAGES, JSON.stringify(INBOX_PAYLOAD)],
    );
    await pool.query("VACUUM ANALYZE messages.messages");
    await pool.query("VACUUM ANALYZE messages.notifications");
    await pool.query("VACUUM ANALYZE subscribers.subscribers");
    console.log(`loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

    const heavyFirstPage = { subscriberId: heavy._id, feedIdentifiers: null, read: null, seen: null, offset: 0, limit: 20 };
    const resolve = (db) => subscribersStore.selectSubscribersByIds(db, environmentId, ["bench-heavy"], []);

    // Unseen count: what one request runs (resolve the subscriber, count up to 100) vs the raw
    // capped count over a partial index WHERE NOT seen, created for the floor and dropped after it.
    const ourCount = await medianDbTime(pool, async (db) => {
      await resolve(db);
      await messagesStore.countMessages(db, environmentId, [{ subscriberId: heavy._id, seen: false, limit: 100 }]);
    });
    await pool.query("CREATE INDEX bench_floor_unseen ON messages.messages (environment_id, subscriber_id) WHERE channel = 'in_app' AND NOT seen");
    const countFloor = await medianDbTime(pool, (db) =>
      db.query(
        `SELECT count(*) FROM (SELECT 1 FROM messages.messages
          WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app' AND NOT seen LIMIT 100) capped`,
        [environmentId, heavy._id],
      ),
    );
    await pool.query("DROP INDEX messages.bench_floor_unseen");
    report({
      name: `unseen count (limit 100) DB time per request, ${HEAVY_MESSAGES.toLocaleString()} of ${TOTAL_MESSAGES.toLocaleString()} rows`,
      value: ourCount,
      unit: "ms",
      floor: countFloor,
      target: "≤ 5× floor",
    });

    // First feed page (20 newest): what one request runs vs the raw keyset page.
    const ourFeed = await medianDbTime(pool, async (db) => {
      await resolve(db);
      await messagesStore.selectFeedPages(db, environmentId, [heavyFirstPage]);
    });
    const feedFloor = await medianDbTime(pool, (db) =>
      db.query(
        `SELECT * FROM messages.messages WHERE environment_id = $1 AND subscriber_id = $2 AND channel = 'in_app'
          ORDER BY created_at DESC, id DESC LIMIT 20`,
        [environmentId, heavy._id],
      ),
    );
    report({ name: "first feed page (20) DB time per request", value: ourFeed, unit: "ms", floor: feedFloor });

    // HTTP at 100 connections: floor (b) of performance-floors.md (Koa + router + ApiKey check +
    // JSON, a process of its own) before and after our reads; the gateway's /livez (no auth, no
    // RPC) and a subscriber GET (auth and a batched read of another service) for where the time
    // goes; then our two reads for the heavy subscriber, and the same reads spread over the 1,000 other
    // subscribers (no two waiting requests alike). The issue's 10 ms target was set on the floors'
    // machine, so it is reported as its ratio to floor (b) there (the target below).
    const auth = { authorization: `ApiKey ${key}` };
    const floorB = await startFloor("http");
    children.push(floorB.child);
    const floorUrl = `${floorB.origin}/v1/subscribers/bench-heavy/notifications/unseen`;
    const floorBefore = await load(floorUrl, floorB.headers);
    const livez = await load(`${api}/livez`, {});
    const subscriberGet = await load(`${api}/v1/subscribers/bench-heavy`, auth);
    const unseen = await load(`${api}/v1/subscribers/bench-heavy/notifications/unseen?limit=100`, auth);
    const feed = await load(`${api}/v1/subscribers/bench-heavy/notifications/feed?limit=20`, auth);
    const feedOfFive = await load(`${unkeptApi}/v1/subscribers/bench-heavy/notifications/feed?limit=5`, auth);
    const feedUnkept = await load(`${unkeptApi}/v1/subscribers/bench-heavy/notifications/feed?limit=20`, auth);
    const anyOther = (suffix) => () => `/v1/subscribers/bench-other-${Math.floor(Math.random() * OTHER_SUBSCRIBERS)}${suffix}`;
    const unseenSpread = await load(api, auth, 100, anyOther("/notifications/unseen?limit=100"));
    const feedSpread = await load(api, auth, 100, anyOther("/notifications/feed?limit=20"));
    const anyInbox = () => `/v1/subscribers/bench-inbox-${Math.floor(Math.random() * INBOXES)}/notifications/feed?limit=20`;
    const feedSpreadUnkept = await load(unkeptApi, auth, 100, anyOther("/notifications/feed?limit=20"));
    const inboxes = await load(api, auth, 100, anyInbox);
    const inboxesUnkept = await load(unkeptApi, auth, 100, anyInbox);
    const floorAfter = await load(floorUrl, floorB.headers);
    await floorB.stop();
    const floorP99 = (floorBefore.p99 + floorAfter.p99) / 2;
    // Floor (b) answering the feed page's own bytes: the load generator and the kernel pay per
    // byte, the same for both.
    const feedPage = Buffer.from(await (await fetch(`${api}/v1/subscribers/bench-heavy/notifications/feed?limit=20`, { headers: auth })).arrayBuffer());
    const feedPageFile = join(tmpdir(), `notify-bench-feed-${suffix}.json`);
    await writeFile(feedPageFile, feedPage);
    const floorSized = await startFloor("http", { BODY_FILE: feedPageFile });
    children.push(floorSized.child);
    const sized = await load(floorUrl.replace(floorB.origin, floorSized.origin), floorSized.headers);
    await floorSized.stop();
    await rm(feedPageFile);
    const rps = (result) => `${Math.round(result.rps)} req/s`;
    report({
      name: `HTTP floor (b): Koa + router + ApiKey check + JSON, 100 connections, ${rps(floorBefore)} and ${rps(floorAfter)}: p99`,
      value: floorP99,
      unit: "ms",
    });
    report({ name: `gateway /livez (no auth, no RPC), ${rps(livez)}: p99`, value: livez.p99, unit: "ms", floor: floorP99 });
    report({ name: `GET subscriber (auth + batched read), ${rps(subscriberGet)}: p99`, value: subscriberGet.p99, unit: "ms", floor: floorP99 });
    const target = "≤ 10 ms (≤ 4.3× floor (b))";
    report({ name: `unseen count, heavy subscriber, ${rps(unseen)}: p99`, value: unseen.p99, unit: "ms", floor: floorP99, target });
    report({ name: `first feed page (20), heavy subscriber, ${rps(feed)}: p99`, value: feed.p99, unit: "ms", floor: floorP99, target });
    report({
      name: `  the same against floor (b) answering its ${feedPage.length.toLocaleString()} bytes (${rps(sized)}): p99`,
      value: feed.p99,
      unit: "ms",
      floor: sized.p99,
    });
    // The gateway keeps a page polled again while nothing changed it; these two take the batched
    // RPC every time, as a page that keeps changing would. The page of 5 is the same route and the
    // same one RPC per round with a quarter of the messages: how much of the cost is per message
    // (decoded, mapped, encoded, written) rather than per call.
    report({ name: `  the same, the gateway keeping no page (${rps(feedUnkept)}): p99`, value: feedUnkept.p99, unit: "ms", floor: floorP99 });
    report({ name: `  the same, keeping no page, 5 messages instead of 20 (${rps(feedOfFive)}): p99`, value: feedOfFive.p99, unit: "ms", floor: floorP99 });
    report({ name: `unseen count, 1,000 subscribers at random, ${rps(unseenSpread)}: p99`, value: unseenSpread.p99, unit: "ms", floor: floorP99 });
    report({ name: `first feed page, 1,000 subscribers at random, ${rps(feedSpread)}: p99`, value: feedSpread.p99, unit: "ms", floor: floorP99 });
    report({ name: `  the same, the gateway keeping no page (${rps(feedSpreadUnkept)}): p99`, value: feedSpreadUnkept.p99, unit: "ms", floor: floorP99 });
    const inboxPayload = `${(JSON.stringify(INBOX_PAYLOAD).length / 1024).toFixed(1)} KB`;
    report({
      name: `first feed page, ${INBOXES.toLocaleString()} inboxes at random (${inboxPayload} payloads, a two-step workflow), ${rps(inboxes)}: p99`,
      value: inboxes.p99,
      unit: "ms",
      floor: floorP99,
    });
    report({ name: `  the same, the gateway keeping no page (${rps(inboxesUnkept)}): p99`, value: inboxesUnkept.p99, unit: "ms", floor: floorP99 });

    // Mark-all seen over the 1M messages: one UPDATE (the floor) vs our chunked mark-all via HTTP.
    // Meanwhile, both times: another subscriber's unseen count at 20 connections, and a mark-as
    // ("unseen": it takes the row lock without changing what mark-all counts) on the heavy
    // subscriber's messages every 20 ms, which waits for whichever statement holds that row.
    const otherUnseen = `${api}/v1/subscribers/bench-other-7/notifications/unseen`;
    const heavyMessageId = () => `a${(2 * (1 + Math.floor(Math.random() * HEAVY_MESSAGES))).toString(16).padStart(23, "0")}`;
    const markAsProbe = async (signal) => {
      const latencies = [];
      while (!signal.aborted) {
        const started = performance.now();
        const reply = await fetch(`${api}/v1/subscribers/bench-heavy/messages/mark-as`, {
          method: "POST",
          headers,
          body: JSON.stringify({ messageId: heavyMessageId(), markAs: "unseen" }),
        });
        await reply.arrayBuffer();
        if (reply.status !== 201) throw new Error(`mark-as answered ${reply.status}`);
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return latencies;
    };
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
    const measured = async (work) => {
      const stopProbe = new AbortController();
      const probe = markAsProbe(stopProbe.signal);
      // When the work fails, its error is the one to report: the probe's (once the services
      // stop) must not end the process first. A probe failure after successful work still throws below.
      probe.catch(() => undefined);
      let result;
      try {
        result = await during(work, otherUnseen, auth, 20);
      } finally {
        stopProbe.abort();
      }
      return { ...result, markAsMax: Math.max(...(await probe)) };
    };
    // Every measured run starts from a table that has been through an update and a reset (after
    // a first, unmeasured cycle), with autovacuum off so none lands inside a run; the floor runs
    // before and after ours.
    await pool.query("ALTER TABLE messages.messages SET (autovacuum_enabled = false)");
    await floorUpdate();
    await reset();
    const floorFirst = await measured(floorUpdate);
    await reset();
    const ours = await measured(ourMarkAll);
    await reset();
    const floorSecond = await measured(floorUpdate);
    console.log(`one-UPDATE floor runs: ${floorFirst.seconds.toFixed(1)} s and ${floorSecond.seconds.toFixed(1)} s`);
    const floor = (pick) => (pick(floorFirst) + pick(floorSecond)) / 2;
    report({
      name: `mark-all seen, ${HEAVY_MESSAGES.toLocaleString()} messages (chunked, through HTTP)`,
      value: ours.seconds,
      unit: "s",
      floor: floor((run) => run.seconds),
      target: "≤ 2× floor",
    });
    report({
      name: `  meanwhile, another subscriber's unseen at 20 connections (${ours.failed} failed): p99`,
      value: ours.p99,
      unit: "ms",
      floor: floor((run) => run.p99),
    });
    report({ name: "  meanwhile, mark-as on the same subscriber: slowest", value: ours.markAsMax, unit: "ms", floor: floor((run) => run.markAsMax) });
  } finally {
    await tearDownBench({ children, streams: jobs, pool, database });
  }
}
