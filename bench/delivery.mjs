// Delivery (issue 24): the same broadcast to SUBSCRIBERS subscribers as an in-app step, an email
// step through nodemailer to a local SMTP sink and a chat step (slack) to a local webhook receiver,
// each timed from the trigger until every message is written (in-app) or `sent` (email, chat).
// Floors, measured in this same run from this process against the same receivers:
//   - nodemailer alone, pooled with the provider's pool size, sending the same mails;
//   - undici alone posting the same bodies to the same URLs, as many at once as the worker sends
//     per integration (DELIVERY_CONCURRENCY_PER_INTEGRATION).
// Targets: email ≤ in-app + 2× nodemailer, chat ≤ in-app + 2× undici.
// One more figure, without a target, for what the chat target leaves the worker: undici with the
// writes the issue asks of every send (lease claimed before the call, its outcome, the attempt
// record), made by this process with the worker's and the messages service's own statements,
// and the chat step (less the in-app one) over it: what the step costs beyond those writes.
// BENCH_DELIVERY_STEPS=topic adds the in-app step again through a topic every subscriber is a
// member of, a tenth of them with a preference condition for the workflow, against the broadcast.
// The receivers (scripts/bench-receivers.mjs) and the services run as child processes over a database and
// job streams of this run. BENCH_DELIVERY_SUBSCRIBERS and BENCH_DELIVERY_STEPS shrink a run while
// working on it.
import { randomBytes } from "node:crypto";
import { createTransport } from "nodemailer";
import { Agent, request } from "undici";
import { createPool } from "@notify/runtime";
import { freePort, startProcess, benchDatabase, waitFor, startServices, benchJobStream, tearDownBench, cpuUse, cpuLine } from "../scripts/bench-lib.mjs";

const SUBSCRIBERS = Number(process.env.BENCH_DELIVERY_SUBSCRIBERS ?? 10_000);
/** The sending steps run after the in-app one: BENCH_DELIVERY_STEPS=chat runs one while working on it. */
const STEPS = new Set((process.env.BENCH_DELIVERY_STEPS ?? "email,chat").split(","));
/** nodemailer's own default: the nodemailer provider does not set maxConnections. */
const SMTP_POOL_SIZE = 5;
/** Sends at once per integration: the worker's DELIVERY_CONCURRENCY_PER_INTEGRATION, as this environment sets it or by default. */
const { readConfig: readWorkerConfig } = await import(new URL("../services/worker/dist/config.js", import.meta.url).href);
const PER_INTEGRATION = readWorkerConfig(process.env).DELIVERY_CONCURRENCY_PER_INTEGRATION;
const PAYLOAD = { orderId: "A-1001" };
const FROM = { address: "notify@example.com", name: "Notify" };
const EMAIL = { subject: "Your order {{orderId}}", content: "<p>Hello <b>{{subscriber.firstName}}</b>, your order {{orderId}} has shipped.</p>" };
const CHAT = "Order {{orderId}} has shipped for {{subscriber.firstName}}";

const { renderEmailBody } = await import(new URL("../packages/providers/dist/index.js", import.meta.url).href);
const { finishAndClaimLeases } = await import(new URL("../services/worker/dist/store.js", import.meta.url).href);
const { recordDeliveryAttempts } = await import(new URL("../services/messages/dist/store.js", import.meta.url).href);
/** Rounds of the bookkeeping floor under way at once, each PER_INTEGRATION sends: about as many leases held as the worker's lanes hold. */
const BOOKKEEPING_ROUNDS = 2;

/** Subscriber ids are this and their index. */
const SUBSCRIBER_PREFIX = "bench-";
const firstName = (index) => `User${index}`;
const emailOf = (index) => `user-${index}@example.com`;
const hookPath = (index) => `/hook/${index}`;

/** Runs `work(index)` for every index below `count`, at most `concurrency` at once. */
async function bounded(count, concurrency, work) {
  let next = 0;
  const lane = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

/** nodemailer alone: the same mails to the same sink, pooled as the provider pools, as many at once as the worker hands it. */
async function nodemailerAlone(smtpPort) {
  const mails = Array.from({ length: SUBSCRIBERS }, (_, index) => {
    const body = renderEmailBody(EMAIL.content.replace("{{subscriber.firstName}}", firstName(index)).replace("{{orderId}}", PAYLOAD.orderId));
    return { to: emailOf(index), subject: EMAIL.subject.replace("{{orderId}}", PAYLOAD.orderId), html: body.html, text: body.text };
  });
  const transport = createTransport({ pool: true, maxConnections: SMTP_POOL_SIZE, host: "127.0.0.1", port: smtpPort, secure: false, ignoreTLS: true });
  try {
    const started = performance.now();
    await bounded(SUBSCRIBERS, PER_INTEGRATION, (index) => transport.sendMail({ from: FROM, ...mails[index] }));
    return (performance.now() - started) / 1000;
  } finally {
    transport.close();
  }
}

const chatBodyOf = (index) => JSON.stringify({ text: CHAT.replace("{{orderId}}", PAYLOAD.orderId).replace("{{subscriber.firstName}}", firstName(index)) });

/** One post of the chat floors, its answer read. */
async function postChat(dispatcher, httpOrigin, index, body) {
  const response = await request(`${httpOrigin}${hookPath(index)}`, { dispatcher, method: "POST", headers: { "content-type": "application/json" }, body });
  await response.body.text();
  if (response.statusCode !== 200) throw new Error(`the receiver answered ${response.statusCode}`);
}

/** undici alone: the same JSON bodies to the same URLs, PER_INTEGRATION at once, every answer read. */
async function undiciAlone(httpOrigin) {
  const bodies = Array.from({ length: SUBSCRIBERS }, (_, index) => chatBodyOf(index));
  const dispatcher = new Agent();
  try {
    const started = performance.now();
    await bounded(SUBSCRIBERS, PER_INTEGRATION, (index) => postChat(dispatcher, httpOrigin, index, bodies[index]));
    return (performance.now() - started) / 1000;
  } finally {
    await dispatcher.close();
  }
}

/**
 * undici with each send's bookkeeping, straight to Postgres from this process, for the chat
 * step's messages: rounds of PER_INTEGRATION sends, BOOKKEEPING_ROUNDS at once, each claiming its
 * leases, posting, finishing the leases and recording the attempts (as a second attempt, so the
 * statements write as they did for the step). No fan-out, job stream or RPC: what is left of the
 * step's budget after this is theirs and the worker's own code.
 */
async function undiciWithBookkeeping(httpOrigin, pool, environmentId) {
  const dispatcher = new Agent();
  try {
    const { rows: messages } = await pool.query(
      "SELECT id, organization_id, external_subscriber_id FROM messages.messages WHERE environment_id = $1 AND channel = 'chat' LIMIT $2",
      [environmentId, SUBSCRIBERS],
    );
    // Each message's subscriber: its post goes to that subscriber's hook with its body, as the step's did.
    const indexes = messages.map((message) => Number(message.external_subscriber_id.slice(SUBSCRIBER_PREFIX.length)));
    const bodies = indexes.map((index) => chatBodyOf(index));
    const rounds = Math.ceil(messages.length / PER_INTEGRATION);
    let nextRound = 0;
    const started = performance.now();
    await bounded(rounds, BOOKKEEPING_ROUNDS, async () => {
      const first = nextRound++ * PER_INTEGRATION;
      const round = messages.slice(first, first + PER_INTEGRATION);
      // Leases of their own: the step's are taken (sent).
      const leaseIds = round.map((message) => `${message.id}:floor`);
      const claims = round.map((message, index) => ({
        messageId: leaseIds[index],
        organizationId: message.organization_id,
        environmentId,
        providerId: "slack",
      }));
      await finishAndClaimLeases(pool, [], claims);
      const sentAt = new Date();
      await Promise.all(round.map((_, index) => postChat(dispatcher, httpOrigin, indexes[first + index], bodies[first + index])));
      const durationMs = Date.now() - sentAt.getTime();
      await finishAndClaimLeases(
        pool,
        leaseIds.map((messageId) => ({ messageId, state: "sent", providerMessageId: "floor" })),
        [],
      );
      await recordDeliveryAttempts(
        pool,
        environmentId,
        round.map((message) => ({
          id: randomBytes(12).toString("hex"),
          message_id: message.id,
          attempt: 2,
          provider_id: "slack",
          status: "success",
          error_id: null,
          error_text: null,
          provider_message_id: "floor",
          detail: "Message sent by slack",
          started_at: sentAt,
          duration_ms: durationMs,
        })),
      );
    });
    return (performance.now() - started) / 1000;
  } finally {
    await dispatcher.close();
  }
}

export default async function deliveryBench({ report }) {
  const database = await benchDatabase("delivery");
  const pool = createPool(database.url, 2);
  const children = [];
  const suffix = randomBytes(4).toString("hex");
  const streams = {
    ...benchJobStream(suffix),
    DELIVERIES_STREAM: `BENCH_DELIVERIES_${suffix}`,
    DELIVERIES_SUBJECT_PREFIX: `bench.${suffix}.deliveries`,
  };
  try {
    // The receivers first, in a process of their own.
    const [smtpPort, httpPort] = [await freePort(), await freePort()];
    const receiversOrigin = `http://127.0.0.1:${httpPort}`;
    children.push(
      startProcess("receivers", { SMTP_PORT: String(smtpPort), HTTP_PORT: String(httpPort) }, new URL("../scripts/bench-receivers.mjs", import.meta.url)),
    );
    /** The receivers' counts; with `goal` ({ field, count }), once that count reaches it or after a second. */
    const received = async (goal) => (await fetch(`${receiversOrigin}/count${goal ? `?${goal.field}=${goal.count}` : ""}`)).json();
    await waitFor(async () => (await fetch(`${receiversOrigin}/count`)).ok, "receivers");

    const { ports, common } = await startServices(pool, children, { DATABASE_URL: database.url, ...streams });
    // The receivers are on loopback: the gateway accepts it in settings and the worker reaches it.
    const loopback = { OUTBOUND_ALLOWED_CIDRS: "127.0.0.0/8" };
    children.push(startProcess("worker", { ...common, ...loopback, WORKER_PORT: String(ports.worker) }));
    const key = randomBytes(16).toString("hex");
    children.push(
      startProcess("gateway", {
        ...common,
        ...loopback,
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_METRICS_PORT: "0",
        GATEWAY_PORT: String(ports.gateway),
        BOOTSTRAP_API_KEY: key,
      }),
    );
    const api = `http://127.0.0.1:${ports.gateway}`;
    const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
    await waitFor(
      async () => (await fetch(`${api}/readyz/dependencies`)).ok && (await fetch(`http://127.0.0.1:${ports.worker}/readyz`)).ok,
      "gateway and worker",
      60_000,
    );
    const post = async (path, body) => {
      const reply = await fetch(`${api}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const answer = await reply.json();
      if (!reply.ok) throw new Error(`POST ${path} answered ${reply.status}: ${JSON.stringify(answer)}`);
      return answer.data;
    };

    await post("/v1/integrations", {
      providerId: "nodemailer",
      channel: "email",
      identifier: "bench-smtp-sink",
      active: true,
      credentials: { host: "127.0.0.1", port: String(smtpPort), secure: false, ignoreTls: true, from: FROM.address, senderName: FROM.name },
    });
    const slack = await post("/v1/integrations", { providerId: "slack", channel: "chat", identifier: "bench-slack", active: true });
    const workflowOf = async (name, template) => (await post("/v1/workflows", { name, active: true, steps: [{ template }] })).triggers[0].identifier;
    const inApp = await workflowOf("Bench in-app", { type: "in_app", content: "Your order {{orderId}} has shipped." });
    const email = await workflowOf("Bench email", { type: "email", ...EMAIL });
    const chat = await workflowOf("Bench chat", { type: "chat", content: CHAT });

    // The recipients: every subscriber of the environment (the broadcast's), each with an
    // address and a webhook of its own on the receiver, written straight into the table.
    const environmentId = slack._environmentId;
    await pool.query(
      `INSERT INTO subscribers.subscribers (id, organization_id, environment_id, subscriber_id, first_name, email, channels)
       SELECT 'b' || lpad(to_hex(i), 23, '0'), $1, $2, $6 || i, 'User' || i, 'user-' || i || '@example.com',
              jsonb_build_array(jsonb_build_object('providerId', 'slack', 'integrationId', $4::text,
                                                   'credentials', jsonb_build_object('webhookUrl', $5 || '/hook/' || i, 'deviceTokens', '[]'::jsonb)))
         FROM generate_series(0, $3 - 1) AS i`,
      [slack._organizationId, environmentId, SUBSCRIBERS, slack._id, receiversOrigin, SUBSCRIBER_PREFIX],
    );
    await pool.query("ANALYZE subscribers.subscribers");

    /** How often the worker has handed a send back to the deliveries stream, by reason, from its metrics. */
    const sendsHandedBack = async () => {
      const text = await (await fetch(`http://127.0.0.1:${ports.worker}/metrics`)).text();
      const counts = {};
      for (const line of text.split("\n")) {
        const match = /^notify_delivery_sends_handed_back_total\{reason="(\w+)"\} (\S+)$/.exec(line);
        if (match) counts[match[1]] = Number(match[2]);
      }
      return counts;
    };

    /**
     * Broadcasts `name` and answers the seconds until all SUBSCRIBERS messages exist, or with
     * `arrived` (how many of the step's sends the receiver has, waiting up to a second for it to
     * have `goal`), until every one is `sent`. The database is read on the (environment,
     * transaction) index while the fan-out writes; then the receiver is asked, and the database
     * read again once a second (for failures) and once the receiver has everything: reading 10,000
     * rows every few milliseconds would be a good part of Postgres's work during the step, and
     * asking the receiver as often a good part of this process's.
     */
    const timed = async (name, arrived, trigger = () => post("/v1/events/trigger/broadcast", { name, payload: PAYLOAD })) => {
      const handedBackBefore = await sendsHandedBack();
      const cpuBefore = await cpuUse(children);
      const started = performance.now();
      const { transactionId } = await trigger();
      const counts = async () =>
        (
          await pool.query(
            `SELECT count(*)::int AS written,
                    count(*) FILTER (WHERE cardinality(delivered_at) > 0)::int AS sent,
                    count(*) FILTER (WHERE status <> 'sent')::int AS failed
               FROM messages.messages WHERE environment_id = $1 AND transaction_id = $2`,
            [environmentId, transactionId],
          )
        ).rows[0];
      const deadline = Date.now() + 600_000;
      let writtenSeconds;
      let done = 0;
      let readAt = 0;
      for (;;) {
        const atReceiver = arrived && writtenSeconds !== undefined ? await arrived(SUBSCRIBERS) : undefined;
        if (atReceiver === undefined || atReceiver >= SUBSCRIBERS || performance.now() - readAt >= 1_000) {
          readAt = performance.now();
          const count = await counts();
          if (writtenSeconds === undefined && count.written >= SUBSCRIBERS) writtenSeconds = (performance.now() - started) / 1000;
          done = arrived ? count.sent : count.written;
          if (done >= SUBSCRIBERS) break;
          if (count.failed > 0) {
            const { rows } = await pool.query(
              "SELECT error_id, error_text FROM messages.messages WHERE environment_id = $1 AND transaction_id = $2 AND status <> 'sent' LIMIT 1",
              [environmentId, transactionId],
            );
            throw new Error(`${name}: ${count.failed} messages failed, e.g. ${JSON.stringify(rows[0])}`);
          }
        }
        if (Date.now() > deadline) throw new Error(`${name}: ${done} of ${SUBSCRIBERS} messages in 600 s`);
        // A receiver that answered short of the goal has just waited its second.
        if (atReceiver !== undefined && atReceiver < SUBSCRIBERS) continue;
        await new Promise((resolve) => setTimeout(resolve, atReceiver !== undefined || done >= 0.9 * SUBSCRIBERS ? 20 : 100));
      }
      const seconds = (performance.now() - started) / 1000;
      console.log(`  ${name}: ${cpuLine(cpuBefore, await cpuUse(children))}`);
      if (arrived) {
        // Failed attempts that were retried: each cost a backoff of its own.
        const { rows } = await pool.query(
          `SELECT a.status, count(*)::int AS n, min(a.error_text) AS example
             FROM messages.delivery_attempts a JOIN messages.messages m ON m.id = a.message_id
            WHERE m.environment_id = $1 AND m.transaction_id = $2 GROUP BY a.status`,
          [environmentId, transactionId],
        );
        console.log(`  ${name}: attempts ${rows.map((row) => `${row.n} ${row.status}${row.example ? ` (e.g. ${row.example})` : ""}`).join(", ")}`);
        // Where the time went: the fan-out (every message written) against the sends after it,
        // and the sends handed back to the stream (their integration busy) to come again.
        console.log(`  ${name}: all written after ${writtenSeconds.toFixed(2)} s, all sent after ${seconds.toFixed(2)} s`);
        const handedBack = await sendsHandedBack();
        const reasons = Object.entries(handedBack).map(([reason, count]) => `${reason} ${(count - (handedBackBefore[reason] ?? 0)).toLocaleString("en")}`);
        console.log(`  ${name}: sends handed back to the stream: ${reasons.join(", ") || "none"}`);
      }
      return seconds;
    };
    const n = SUBSCRIBERS.toLocaleString("en");

    // 1. In-app: what every channel's fan-out costs before anything leaves the system.
    const inAppSeconds = await timed(inApp);
    report({ name: `in-app step to ${n} subscribers (broadcast), all messages written`, value: inAppSeconds, unit: "s" });

    /**
     * A sending step against its receiver, then its floor (the library alone to the same
     * receiver), each with where the CPU went; reports the three times and the ratio. Answers the
     * step's and the floor's seconds.
     */
    const sendingStep = async ({ step, label, workflow, counted, items, floorName, floorLabel, floor }) => {
      const before = await received();
      const arrived = async (goal) =>
        (await received(goal === undefined ? undefined : { field: counted, count: before[counted] + goal }))[counted] - before[counted];
      const stepSeconds = await timed(workflow, arrived);
      const afterStep = await received();
      const cpuBeforeFloor = await cpuUse(children);
      const floorSeconds = await floor();
      console.log(`  ${floorName} alone: ${cpuLine(cpuBeforeFloor, await cpuUse(children))}`);
      const afterFloor = await received();
      // Over how many connections, for HTTP: each new one costs both ends more than a request on a kept one.
      const got = (from, to) =>
        `${(to[counted] - from[counted]).toLocaleString("en")} ${items}${counted === "http" ? ` (${to.connections - from.connections} connections)` : ""}`;
      console.log(`  the receiver got ${got(before, afterStep)} from the worker, ${got(afterStep, afterFloor)} from ${floorName} alone`);
      report({ name: `${floorName} alone, ${n} ${items}, ${floorLabel}`, value: floorSeconds, unit: "s" });
      report({
        name: `${label} to ${n} subscribers, all sent`,
        value: stepSeconds,
        unit: "s",
        floor: inAppSeconds + 2 * floorSeconds,
        target: `ratio ≤ 1 (in-app + 2× ${floorName})`,
      });
      report({ name: `  ${step} − in-app, over ${floorName} alone`, value: stepSeconds - inAppSeconds, unit: "s", floor: floorSeconds, target: "ratio ≤ 2" });
      const ratio = (stepSeconds - inAppSeconds) / floorSeconds;
      console.log(`  ${step}: (${step} − in-app) / ${floorName} = ${ratio.toFixed(2)}, ≤ 2 ${ratio <= 2 ? "met" : "missed"}`);
      return { stepSeconds, floorSeconds };
    };
    // The same in-app step through a topic: its members paged with their preferences for the
    // workflow, a tenth answering a condition that holds. Memberships written straight into the table.
    if (STEPS.has("topic")) {
      const topic = await post("/v2/topics", { key: "bench-topic", name: "Bench topic" });
      const workflowId = (
        await pool.query("SELECT id FROM triggers.workflows WHERE environment_id = $1 AND trigger_identifier = $2 AND NOT deleted", [environmentId, inApp])
      ).rows[0].id;
      await pool.query(
        `INSERT INTO topics.subscriptions (id, organization_id, environment_id, topic_id, internal_subscriber_id, external_subscriber_id)
         SELECT 'c' || substr(s.id, 2), s.organization_id, s.environment_id, $2, s.id, s.subscriber_id FROM subscribers.subscribers s WHERE s.environment_id = $1`,
        [environmentId, topic._id],
      );
      await pool.query(
        `INSERT INTO topics.subscription_preferences (subscription_id, environment_id, workflow_id, enabled, condition)
         SELECT id, environment_id, $3, false, $4::jsonb FROM topics.subscriptions WHERE environment_id = $1 AND topic_id = $2 AND ('x' || right(id, 6))::bit(24)::int % 10 = 0`,
        [environmentId, topic._id, workflowId, JSON.stringify({ "==": [{ var: "payload.orderId" }, PAYLOAD.orderId] })],
      );
      await pool.query("ANALYZE topics.subscriptions, topics.subscription_preferences");
      const topicSeconds = await timed(inApp, undefined, () =>
        post("/v1/events/trigger", { name: inApp, to: [{ type: "Topic", topicKey: "bench-topic" }], payload: PAYLOAD }),
      );
      report({
        name: `in-app step to ${n} subscribers through a topic (a tenth by condition), all messages written`,
        value: topicSeconds,
        unit: "s",
        floor: inAppSeconds,
        target: "none (against the broadcast)",
      });
    }
    // 2. Email through nodemailer to the sink, then 3. nodemailer alone to the same sink.
    if (STEPS.has("email")) {
      await sendingStep({
        step: "email",
        label: "email step",
        workflow: email,
        counted: "smtp",
        items: "mails",
        floorName: "nodemailer",
        floorLabel: `pool of ${SMTP_POOL_SIZE}, ${PER_INTEGRATION} at once`,
        floor: () => nodemailerAlone(smtpPort),
      });
    }
    // 4. Chat through slack to the webhook receiver, then 5. undici alone to the same receiver,
    // then 6. undici with the sends' writes (after the floor: run before it, it would warm its code).
    if (STEPS.has("chat")) {
      const { stepSeconds: chatSeconds, floorSeconds: undiciSeconds } = await sendingStep({
        step: "chat",
        label: "chat step (slack)",
        workflow: chat,
        counted: "http",
        items: "posts",
        floorName: "undici",
        floorLabel: `${PER_INTEGRATION} at once`,
        floor: () => undiciAlone(receiversOrigin),
      });
      // A pool of its own, ended after the CPU is read: its connections' processes count until then.
      const writer = createPool(database.url, 2 * BOOKKEEPING_ROUNDS);
      const cpuBefore = await cpuUse(children);
      const seconds = await undiciWithBookkeeping(receiversOrigin, writer, environmentId).finally(async () => {
        console.log(`  undici with bookkeeping: ${cpuLine(cpuBefore, await cpuUse(children))}`);
        await writer.end();
      });
      report({
        name: `undici with each send's lease and attempt record, straight to Postgres (no fan-out, stream or RPC)`,
        value: seconds,
        unit: "s",
        floor: undiciSeconds,
        target: "none (the ratio is what the writes alone take of the chat target's 2)",
      });
      // What the step adds beyond those writes: the fan-out's share, the stream, the RPCs and the worker's own code.
      report({
        name: "  chat − in-app, over undici with bookkeeping",
        value: chatSeconds - inAppSeconds,
        unit: "s",
        floor: seconds,
        target: "none (the chat target restated against the writes the issue asks of every send)",
      });
    }
  } finally {
    // Callers first: the worker and gateway before the services they call, the receivers last.
    await tearDownBench({ children, streams, pool, database });
  }
}
