// The live Inbox events benchmark (bench/inbox.mjs): see there for what it measures.
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createClient } from "@connectrpc/connect";
import { commonV1, messagesV1 } from "@notify/proto";
import { createLogger, createPool, createRpcTransport, scopeHeaders } from "@notify/runtime";
import { benchDatabase, cpuSeconds, startProcess, startServices, stopProcess, waitFor } from "./bench-lib.mjs";

const SOCKETS = Number(process.env.BENCH_INBOX_SOCKETS ?? 10_000);
const gatewayModule = (path) => import(new URL(`../services/gateway/dist/${path}`, import.meta.url).href);
const { readConfig: readGatewayConfig, encryptionKeyOf, sealerOf } = await gatewayModule("config.js");
/**
 * Whole rounds of the gateway's pings (every socket pinged the same number of times), several of
 * them: an idle socket costs nothing between its pings, and the garbage they leave is collected a
 * few rounds apart, so a window of one round and a bit reads more or less depending on where it falls.
 */
const PING_INTERVAL_SECONDS = readGatewayConfig(process.env).INBOX_SOCKET_PING_INTERVAL_MS / 1000;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 3 * PING_INTERVAL_SECONDS);
/**
 * How long after the sockets opened the idle sockets are measured: opening 10,000 of them leaves
 * the heap near its limit, and the collection that follows (its cost grows with every socket's
 * objects) falls in the first rounds of pings. Those rounds are reported apart.
 */
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 2 * PING_INTERVAL_SECONDS);
/** Recipients per CreateMessages, as the worker writes a fan-out page. */
const PAGE = 1_000;
const PAYLOAD = Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`field${index}`, `some text value ${index}`]));

const { createSessionTokens } = await gatewayModule("sessions.js");
const { createEnvironments } = await gatewayModule("environments.js");

const rssBytes = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) * 1024;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The share of a core `pid` uses over the next `seconds`. */
async function idleCpu(pid, seconds = IDLE_SECONDS) {
  const before = cpuSeconds(pid);
  const started = performance.now();
  await pause(seconds * 1000);
  return (cpuSeconds(pid) - before) / ((performance.now() - started) / 1000);
}

/** The socket process: forked, answering each command with one message. */
function startSocketProcess() {
  const child = fork(new URL("./bench-inbox-sockets.mjs", import.meta.url), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const ask = (command) =>
    new Promise((resolve, reject) => {
      const exited = (code) => reject(new Error(`the socket process exited (${code})`));
      child.once("exit", exited);
      child.once("message", (answer) => {
        child.off("exit", exited);
        resolve(answer);
      });
      child.send(command);
    });
  return { child, ask };
}

/** The soft limit of open files, which the gateway and the socket process inherit: each holds one per socket. */
function openFilesLimit() {
  const line = readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((text) => text.startsWith("Max open files"));
  return Number(line?.split(/\s{2,}/)[1] ?? Number.POSITIVE_INFINITY);
}

export async function liveEventsBench({ report }) {
  const limit = openFilesLimit();
  if (limit < SOCKETS + 1_000)
    throw new Error(`${SOCKETS} sockets need more open files than ulimit -n allows (${limit}): raise it, or set BENCH_INBOX_SOCKETS`);
  const database = await benchDatabase("inbox");
  const pool = createPool(database.url, 4);
  const children = [];
  const suffix = randomBytes(4).toString("hex");
  let sockets;
  let messagesTransport;
  try {
    const { ports, common } = await startServices(pool, children, {
      DATABASE_URL: database.url,
      JOBS_STREAM: `BENCH_JOBS_${suffix}`,
      JOBS_SUBJECT_PREFIX: `bench.${suffix}.jobs`,
    });
    const key = randomBytes(16).toString("hex");
    const gateway = startProcess("gateway", {
      ...common,
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_METRICS_PORT: "0",
      GATEWAY_PORT: String(ports.gateway),
      BOOTSTRAP_API_KEY: key,
    });
    children.push(gateway);
    const api = `http://127.0.0.1:${ports.gateway}`;
    const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
    await waitFor(async () => (await fetch(`${api}/readyz`)).ok, "gateway", 60_000);
    const post = async (path, body) => {
      const reply = await fetch(`${api}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const answer = await reply.json();
      if (!reply.ok) throw new Error(`POST ${path} answered ${reply.status}: ${JSON.stringify(answer)}`);
      return answer.data;
    };

    const first = await post("/v1/subscribers", { subscriberId: "bench-live-0" });
    const scope = { organizationId: first._organizationId, environmentId: first._environmentId };
    await pool.query(
      `INSERT INTO subscribers.subscribers (id, organization_id, environment_id, subscriber_id, first_name)
       SELECT 'b' || lpad(to_hex(i), 23, '0'), $1, $2, 'bench-live-' || i, 'User' || i FROM generate_series(1, $3 - 1) AS i`,
      [scope.organizationId, scope.environmentId, SOCKETS],
    );
    const recipients = [
      { subscriberId: first._id, externalSubscriberId: "bench-live-0" },
      ...Array.from({ length: SOCKETS - 1 }, (_, index) => ({
        subscriberId: `b${(index + 1).toString(16).padStart(23, "0")}`,
        externalSubscriberId: `bench-live-${index + 1}`,
      })),
    ];
    const workflow = await post("/v1/workflows", {
      name: "Bench live",
      active: true,
      tags: ["orders"],
      steps: [{ template: { type: "in_app", content: "Your order {{orderId}} has shipped." } }],
    });

    const tokens = new SessionTokensOf(pool, scope);
    const tokenList = await Promise.all(recipients.map((recipient) => tokens.issue(recipient)));

    await pause(2_000);
    const idleCpuWithout = await idleCpu(gateway.pid);
    const rssBefore = rssBytes(gateway.pid);
    sockets = startSocketProcess();
    const opened = await sockets.ask({ open: { url: api, tokens: tokenList } });
    if (opened.opened !== SOCKETS) throw new Error(`${opened.opened} of ${SOCKETS} sockets opened (${opened.failed} refused)`);
    console.log(`${SOCKETS.toLocaleString()} sockets opened in ${(opened.ms / 1000).toFixed(1)} s`);

    // Idle: the sockets do nothing for longer than a ping interval, once what opening them left has settled.
    await pause(3_000);
    const settlingCpu = await idleCpu(gateway.pid, SETTLE_SECONDS);
    const idleCpuWith = await idleCpu(gateway.pid);
    const rssIdle = rssBytes(gateway.pid);
    report({ name: "gateway memory per idle socket (RSS)", value: (rssIdle - rssBefore) / SOCKETS / 1024, unit: "KB", target: "≤ 30 KB" });
    report({ name: "gateway CPU idle, no socket", value: idleCpuWithout * 100, unit: "% of a core" });
    report({ name: `gateway CPU in the ${SETTLE_SECONDS} s after opening ${SOCKETS.toLocaleString()} sockets`, value: settlingCpu * 100, unit: "% of a core" });
    report({ name: `gateway CPU with ${SOCKETS.toLocaleString()} idle sockets, after that`, value: idleCpuWith * 100, unit: "% of a core", target: "< 2 %" });

    // The broadcast, as the worker writes a fan-out: pages of recipients, one CreateMessages each.
    messagesTransport = createRpcTransport(`http://127.0.0.1:${ports.messages}`, 30_000);
    const messages = createClient(messagesV1.MessageService, messagesTransport.transport);
    const template = {
      transactionId: `bench-live-${suffix}`,
      templateId: workflow._id,
      templateIdentifier: workflow.triggers[0].identifier,
      messageTemplateId: workflow.steps[0]._templateId ?? workflow._id,
      stepId: "in-app",
      channel: commonV1.Channel.IN_APP,
      content: { case: "text", value: "Your order A-1001 has shipped." },
      providerId: "novu",
      cta: { type: "redirect", url: "https://example.com/orders/A-1001" },
      payload: PAYLOAD,
    };
    await sockets.ask({ watch: true });
    const messagesProcess = children.find((child) => child.name === "messages");
    const busy = [
      ["gateway", gateway.pid],
      ["messages", messagesProcess.pid],
      ["sockets", sockets.child.pid],
    ].map(([name, pid]) => ({ name, pid, before: cpuSeconds(pid) }));
    const writeStarted = Date.now();
    let lastCommit = 0;
    for (let start = 0; start < recipients.length; start += PAGE) {
      await messages.createMessages(
        { groups: [{ message: template, recipients: recipients.slice(start, start + PAGE) }], countOnly: true },
        { headers: scopeHeaders(scope) },
      );
      lastCommit = performance.timeOrigin + performance.now();
    }
    let heard;
    await waitFor(
      async () => {
        heard = await sockets.ask({ report: true });
        return heard.received === SOCKETS && heard.counted === SOCKETS;
      },
      "every socket hearing the broadcast",
      30_000,
    ).catch((error) => console.error(`${error.message}: ${JSON.stringify(heard)}`));
    console.log(`CPU during the broadcast: ${busy.map(({ name, pid, before }) => `${name} ${(cpuSeconds(pid) - before).toFixed(2)} s`).join(", ")}`);
    console.log(`broadcast written in ${((lastCommit - writeStarted) / 1000).toFixed(2)} s; ${heard.received} sockets heard it, ${heard.counted} their counts`);
    report({
      name: "broadcast: last socket's notification_received after the last commit",
      value: (heard.lastReceived - lastCommit) / 1000,
      unit: "s",
      target: "≤ 2 s",
    });
    report({
      name: "broadcast: last socket's unread_count_changed after the last commit",
      value: (heard.lastCounted - lastCommit) / 1000,
      unit: "s",
      target: "≤ 2 s",
    });
  } finally {
    if (sockets && sockets.child.exitCode === null) {
      sockets.child.send({ close: true });
      await new Promise((resolve) => sockets.child.once("exit", resolve));
    }
    messagesTransport?.close();
    for (const child of children.reverse()) await stopProcess(child);
    await pool.end();
    await database.drop();
  }
}

/**
 * Session tokens of the environment's subscribers, signed as the gateway signs them (with its
 * environment's key, from the same database and GATEWAY_ENCRYPTION_KEY): issuing ten thousand
 * over POST /v1/inbox/session would measure the session route, not the sockets.
 */
class SessionTokensOf {
  constructor(pool, scope) {
    this.scope = scope;
    const config = { GATEWAY_ENCRYPTION_KEY: process.env.GATEWAY_ENCRYPTION_KEY };
    const environments = createEnvironments({ pool, sealer: sealerOf(config), encryptionKey: encryptionKeyOf(config), log: createLogger("bench", "silent") });
    this.tokens = createSessionTokens({ environments, ttlSeconds: 3600 });
  }
  issue({ subscriberId, externalSubscriberId }) {
    return this.tokens.issue({ scope: this.scope, subscriberId: externalSubscriberId, subscriberDbId: subscriberId });
  }
}
