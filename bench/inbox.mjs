// The Inbox (issue 25), part (1): 10,000 subscribers holding 100 in-app messages each (1.5 KB
// payloads), GET /v1/inbox/notifications?limit=10 at 100 connections, each request with a random
// subscriber's session token, through gateway → messages; beside its floor measured in the same
// run (before and after ours): a process of its own answering the same route with the same
// token check, the same SQL and the same JSON, with no hop (scripts/bench-inbox-floor.mjs).
// Targets: throughput ≥ 50 % of the floor's, p99 ≤ 3× the floor's.
// Parts (2) and (3), the live events: 10,000 sockets opened by a process of their own (as @novu/js
// opens them) on one gateway, over the whole stack as processes: memory per idle socket (the
// gateway's RSS with them open, less before), the gateway's CPU while they stay idle over more
// than a ping interval (reported apart for the first rounds after they opened, when what opening
// them left is collected, and after), and a broadcast to those 10,000 subscribers written as the worker writes
// a fan-out (pages of a thousand recipients through CreateMessages): the time from the last
// page's commit to the last socket hearing its notification_received and its count events
// (scripts/bench-inbox-live.mjs; BENCH_INBOX_SOCKETS, BENCH_SETTLE_SECONDS and BENCH_IDLE_SECONDS shrink it).
// BENCH_INBOX_SUBSCRIBERS, BENCH_INBOX_TOKENS and BENCH_SECONDS shrink a run while working on it.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { createPool } from "@notify/runtime";
import { benchDatabase, freePort, load, startProcess, startServices, stopProcess, waitFor, benchJobStream, tearDownBench } from "../scripts/bench-lib.mjs";
import { liveEventsBench } from "../scripts/bench-inbox-live.mjs";

const SUBSCRIBERS = Number(process.env.BENCH_INBOX_SUBSCRIBERS ?? 10_000);
const MESSAGES_EACH = 100;
/** Sessions opened through POST /v1/inbox/session, subscribers picked at random: each request takes one of their tokens at random. */
const TOKENS = Math.min(SUBSCRIBERS, Number(process.env.BENCH_INBOX_TOKENS ?? 2_000));
const HTTP_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PAYLOAD = Object.fromEntries(
  Array.from({ length: 40 }, (_, index) => [
    `field${index}`,
    index % 3 === 0 ? { nested: `value ${index}`, n: index, list: [1, 2, 3] } : `some text value ${index}`,
  ]),
);

const fromGateway = createRequire(new URL("../services/gateway/package.json", import.meta.url));
const { SignJWT } = await import(pathToFileURL(fromGateway.resolve("jose")).href);

/** autocannon at 100 connections, each request with one of `tokens` at random; any failed request fails the run. */
async function loadWithTokens(url, tokens) {
  const pick = () => tokens[Math.floor(Math.random() * tokens.length)];
  const result = await load({
    url,
    connections: 100,
    duration: HTTP_SECONDS,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${pick()}` } }) }],
  });
  if (result.failed > 0) throw new Error(`${url}: ${result.failed} failed requests of ${result.total}`);
  return result;
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel(items, width, work) {
  const results = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]);
      }
    }),
  );
  return results;
}

/** BENCH_INBOX_PARTS=list or =live runs one part. */
const PARTS = (process.env.BENCH_INBOX_PARTS ?? "list,live").split(",");

export default async function inboxBench({ report }) {
  if (PARTS.includes("list")) await listBench({ report });
  if (PARTS.includes("live")) await liveEventsBench({ report });
}

async function listBench({ report }) {
  const database = await benchDatabase("inbox");
  const children = [];
  const pool = createPool(database.url, 4);
  const suffix = randomBytes(4).toString("hex");
  const jobs = benchJobStream(suffix);
  try {
    const { ports, common } = await startServices(pool, children, { DATABASE_URL: database.url, ...jobs });
    const key = randomBytes(16).toString("hex");
    children.push(
      startProcess("gateway", {
        ...common,
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_METRICS_PORT: "0",
        GATEWAY_PORT: String(ports.gateway),
        BOOTSTRAP_API_KEY: key,
        // The bench's subscriber reads far above any one person's Inbox, from one address: the
        // per-caller budgets are set above its load (the limiter still runs).
        RATE_LIMIT_INBOX: "1000000",
        RATE_LIMIT_PUBLIC: "1000000",
      }),
    );
    const api = `http://127.0.0.1:${ports.gateway}`;
    const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
    await waitFor(async () => (await fetch(`${api}/livez`)).ok, "gateway");

    const environment = (await (await fetch(`${api}/v1/environments/me`, { headers })).json()).data;
    const environmentId = environment._id;
    const organizationId = environment._organizationId;
    const created = await fetch(`${api}/v1/workflows`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "Bench order shipped",
        active: true,
        tags: ["orders"],
        steps: [
          { template: { type: "in_app", content: "Your order {{orderId}} has shipped.", cta: { type: "redirect", data: { url: "/orders/{{orderId}}" } } } },
        ],
      }),
    });
    const workflow = (await created.json()).data;

    console.log(`loading ${SUBSCRIBERS.toLocaleString()} subscribers with ${MESSAGES_EACH} messages each …`);
    const loadStarted = performance.now();
    await pool.query(
      `INSERT INTO subscribers.subscribers (id, organization_id, environment_id, subscriber_id, first_name)
       SELECT 'd' || lpad(to_hex(i), 23, '0'), $1, $2, 'bench-inbox-' || i, 'Reader ' || i FROM generate_series(0, $3 - 1) AS i`,
      [organizationId, environmentId, SUBSCRIBERS],
    );
    const owner = `'d' || lpad(to_hex(i % $3::int), 23, '0')`;
    await pool.query(
      `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id)
       SELECT 'f' || lpad(to_hex(i), 23, '0'), $1, $2, 'inbox-' || i, ${owner}, 'bench-inbox-' || (i % $3::int), $4
         FROM generate_series(0, $3::int * $5::int - 1) AS i`,
      [organizationId, environmentId, SUBSCRIBERS, workflow._id, MESSAGES_EACH],
    );
    await pool.query(
      `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                      template_id, template_identifier, message_template_id, step_id, transaction_id, channel,
                                      content, provider_id, cta, feed_identifier, payload, tags, read, seen, created_at, updated_at)
       SELECT 'e' || lpad(to_hex(i), 23, '0'), $1, $2, 'f' || lpad(to_hex(i), 23, '0'), ${owner}, 'bench-inbox-' || (i % $3::int),
              $4, $6, 'step-template', 'step', 'inbox-' || i, 'in_app',
              to_jsonb('Your order ' || i || ' has shipped.'), 'novu', jsonb_build_object('type', 'redirect', 'url', '/orders/' || i),
              'general', jsonb_build_object('orderId', i) || $7::jsonb, '{orders}', i % 4 = 0, i % 2 = 0,
              now() - i * interval '1 millisecond', now() - i * interval '1 millisecond'
         FROM generate_series(0, $3::int * $5::int - 1) AS i`,
      [organizationId, environmentId, SUBSCRIBERS, workflow._id, MESSAGES_EACH, workflow.triggers[0].identifier, JSON.stringify(PAYLOAD)],
    );
    for (const table of ["messages.messages", "messages.notifications", "subscribers.subscribers"]) await pool.query(`VACUUM ANALYZE ${table}`);
    console.log(`loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

    // Sessions as @novu/js opens them, for subscribers at random; the floor signs its own tokens for the same subscribers.
    const picked = new Set();
    while (picked.size < TOKENS) picked.add(Math.floor(Math.random() * SUBSCRIBERS));
    const sessionStarted = performance.now();
    const tokens = await inParallel([...picked], 20, async (index) => {
      const reply = await fetch(`${api}/v1/inbox/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ applicationIdentifier: environment.identifier, subscriber: { subscriberId: `bench-inbox-${index}` } }),
      });
      if (reply.status !== 201) throw new Error(`session: ${reply.status} ${await reply.text()}`);
      return (await reply.json()).data.token;
    });
    console.log(`${TOKENS.toLocaleString()} sessions in ${((performance.now() - sessionStarted) / 1000).toFixed(1)} s`);
    const secret = randomBytes(32);
    const floorTokens = await Promise.all(
      [...picked].map((index) =>
        new SignJWT({ _id: `d${index.toString(16).padStart(23, "0")}`, subscriberId: `bench-inbox-${index}`, organizationId, environmentId })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setAudience("widget_user")
          .setIssuer("notify")
          .setIssuedAt()
          .setExpirationTime("1h")
          .sign(secret),
      ),
    );
    const floorPort = await freePort();
    const floor = startProcess(
      "floor-inbox",
      {
        PORT: String(floorPort),
        DATABASE_URL: database.url,
        ENVIRONMENT_ID: environmentId,
        SECRET: secret.toString("hex"),
        WORKFLOW: JSON.stringify({ id: workflow._id, identifier: workflow.triggers[0].identifier, name: workflow.name, critical: false, tags: workflow.tags }),
      },
      new URL("../scripts/bench-inbox-floor.mjs", import.meta.url),
    );
    children.push(floor);
    const floorOrigin = `http://127.0.0.1:${floorPort}`;
    await waitFor(async () => (await fetch(`${floorOrigin}/`)).status === 404, "inbox floor");

    // Both answer the same page for the same subscriber.
    const sample = [...picked][0];
    const [ourPage, floorPage] = await Promise.all([
      fetch(`${api}/v1/inbox/notifications?limit=10`, { headers: { authorization: `Bearer ${tokens[0]}` } }).then((reply) => reply.json()),
      fetch(`${floorOrigin}/v1/inbox/notifications?limit=10`, { headers: { authorization: `Bearer ${floorTokens[0]}` } }).then((reply) => reply.json()),
    ]);
    if (JSON.stringify(ourPage.data.map((item) => item.id)) !== JSON.stringify(floorPage.data.map((item) => item.id)) || ourPage.data.length !== 10) {
      throw new Error(`the floor's page for bench-inbox-${sample} differs from ours`);
    }

    const list = "/v1/inbox/notifications?limit=10";
    const floorBefore = await loadWithTokens(`${floorOrigin}${list}`, floorTokens);
    const ours = await loadWithTokens(`${api}${list}`, tokens);
    const floorAfter = await loadWithTokens(`${floorOrigin}${list}`, floorTokens);
    await stopProcess(floor);
    const floorRps = (floorBefore.rps + floorAfter.rps) / 2;
    const floorP99 = (floorBefore.p99 + floorAfter.p99) / 2;
    const what = `GET /v1/inbox/notifications?limit=10, ${SUBSCRIBERS.toLocaleString()} subscribers × ${MESSAGES_EACH} messages, ${TOKENS.toLocaleString()} random sessions, 100 connections`;
    report({
      name: `${what}: throughput (floor ${Math.round(floorBefore.rps)} and ${Math.round(floorAfter.rps)} req/s)`,
      value: ours.rps,
      unit: "req/s",
      floor: floorRps,
      target: "≥ 0.5× floor",
    });
    report({ name: `${what}: p99`, value: ours.p99, unit: "ms", floor: floorP99, target: "≤ 3× floor" });
  } finally {
    await tearDownBench({ children, streams: jobs, pool, database });
  }
}
