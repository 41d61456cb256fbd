import { execFile, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { eventually, startReceiver, startSmtpSink, type Receiver, type SmtpSink } from "@notify/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

// A worker killed (SIGKILL) while it hands mails to providers: nothing is sent twice, nothing is
// lost without a trace. The worker runs as a child process so it can be killed mid-call; the
// providers are a slow SMTP sink (no idempotency key) and a Resend stand-in (idempotency key).

const workerEntry = fileURLToPath(new URL("../../worker/dist/server.js", import.meta.url));
const workerCli = fileURLToPath(new URL("../../worker/dist/cli.js", import.meta.url));
const run = promisify(execFile);

const OUTCOME_UNKNOWN = "delivery_outcome_unknown";
/** Sends under way at once per integration. */
const PER_INTEGRATION = 16;
/**
 * Delivery jobs one worker holds at once: the most sends a kill can leave unknown (those calling
 * their provider, the few claimed for the next free slots, those whose outcome was being written).
 */
const HELD = PER_INTEGRATION + 4;

interface Message {
  _id: string;
  status: string;
  email?: string;
  deliveredAt: string[];
  errorId?: string;
  errorText?: string;
}

let stack: Stack;
let sink: SmtpSink;
/** The workers this file started and has not killed yet: none may outlive its test and take the next test's jobs. */
const workers = new Set<ChildProcess>();

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, [workerEntry], {
    env: {
      ...process.env,
      ...stack.workerEnv,
      // A short ack wait: a killed worker's jobs come back, and its 'sending' leases count as orphaned, within seconds.
      WORKER_ACK_WAIT_MS: "1500",
      DELIVERY_CONCURRENCY_PER_INTEGRATION: String(PER_INTEGRATION),
      // Few more jobs taken than one integration may run: the rest would only come back busy, again and again.
      DELIVERY_CONCURRENCY: String(HELD),
      // DEBUG_WORKER=1 shows the worker's log when the test needs explaining.
      LOG_LEVEL: process.env.DEBUG_WORKER ? "info" : "silent",
    },
    stdio: process.env.DEBUG_WORKER ? "inherit" : "ignore",
  });
  workers.add(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  workers.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

beforeAll(async () => {
  // Each mail's reply is held a little, so the kill lands while mails are on the wire unanswered.
  sink = await startSmtpSink({ replyDelayMs: 25 });
  // The SMTP sink and the receiver are on loopback: the gateway takes them in settings and the workers reach them.
  stack = await startStack({ worker: false, outboundAllowedCidrs: "127.0.0.0/8" });
});
afterEach(async () => {
  await Promise.all([...workers].map(kill));
});
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

async function createWorkflow(name: string): Promise<string> {
  const reply = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", {
    name,
    active: true,
    steps: [{ template: { type: "email", subject: "Hello {{subscriber.subscriberId}}", content: [{ type: "text", content: "One mail, once." }] } }],
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.data.triggers[0].identifier;
}

async function createIntegration(body: Record<string, unknown>): Promise<void> {
  const reply = await stack.request("POST", "/v1/integrations", { active: true, channel: "email", ...body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
}

/** Triggers `count` recipients (created by the trigger, each with its own address) in triggers of 100. */
async function triggerMany(workflow: string, prefix: string, count: number, integrationIdentifier: string): Promise<string[]> {
  const transactionIds: string[] = [];
  for (let start = 0; start < count; start += 100) {
    const to = Array.from({ length: Math.min(100, count - start) }, (_, index) => ({
      subscriberId: `${prefix}-${start + index}`,
      email: `${prefix}-${start + index}@example.com`,
    }));
    const transactionId = `${prefix}-t${start / 100}`;
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, transactionId, overrides: { email: { integrationIdentifier } } });
    expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
    transactionIds.push(transactionId);
  }
  return transactionIds;
}

async function emailsOf(transactionIds: string[]): Promise<Message[]> {
  const messages: Message[] = [];
  for (let page = 0; ; page += 1) {
    const reply = await stack.request<Data<Message[]> & { hasMore: boolean }>(
      "GET",
      `/v1/messages?channel=email&transactionId=${transactionIds.join(",")}&limit=1000&page=${page}`,
    );
    expect(reply.status).toBe(200);
    messages.push(...reply.body.data);
    if (!reply.body.hasMore) return messages;
  }
}

/** What a failed assertion shows of a message. */
const brief = ({ _id, email, status, deliveredAt, errorId }: Message) => ({ _id, email, status, delivered: deliveredAt.length, errorId });

/** A message whose send has an outcome: sent with a delivery time, or an error. A pending send shows `sent` without one. */
const settled = (message: Message) => (message.status === "sent" && message.deliveredAt.length > 0) || message.status === "error";

/** Waits until every message has an outcome or `timeoutMs` passes, and answers the messages as they then stand. */
async function outcomes(transactionIds: string[], expected: number, timeoutMs: number): Promise<Message[]> {
  const all = await eventually(
    async () => {
      const messages = await emailsOf(transactionIds);
      return messages.length === expected && messages.every(settled) ? messages : undefined;
    },
    timeoutMs,
    250,
  ).catch(() => undefined);
  return all ?? emailsOf(transactionIds);
}

async function unknownSendsListed(): Promise<string[]> {
  const { stdout } = await run(process.execPath, [workerCli, "unknown-sends", "--limit", "1000"], {
    env: { ...process.env, DATABASE_URL: stack.database.url },
  });
  const [header, ...lines] = stdout.trim().split("\n");
  expect(header).toBe("MESSAGE\tENVIRONMENT\tPROVIDER\tSINCE\tATTEMPTS\tERROR");
  return lines.filter((line) => line.length > 0).map((line) => line.split("\t")[0]!);
}

describe("a worker killed mid-send", () => {
  it("SMTP (no idempotency key): no recipient gets two mails; the sends caught in flight end as unknown, listed, never resent", async () => {
    await createIntegration({
      providerId: "nodemailer",
      identifier: "smtp-slow",
      credentials: { host: "127.0.0.1", port: String(sink.port), secure: false, ignoreTls: true, from: "notify@example.com" },
    });
    const workflow = await createWorkflow("Fault mail");
    const total = 1000;

    const first = startWorker();
    const transactionIds = await triggerMany(workflow, "smtp", total, "smtp-slow");
    // Kill once a good part is out and a mail is on the wire unanswered: its outcome cannot be known to the worker.
    await eventually(async () => (sink.received.length >= 150 && sink.unanswered > 0 ? true : undefined), 60_000, 2);
    await kill(first);
    const atKill = sink.received.length;
    expect(atKill).toBeLessThan(total); // it really was killed mid-sending

    startWorker();
    const messages = await outcomes(transactionIds, total, 240_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // a late second mail would arrive by now

    const mails = new Map<string, number>();
    for (const mail of sink.received) for (const address of mail.envelope.to) mails.set(address, (mails.get(address) ?? 0) + 1);
    const mailsOf = (message: Message) => mails.get(message.email ?? "") ?? 0;

    expect(messages).toHaveLength(total);
    expect(new Set(messages.map((message) => message.email)).size).toBe(total);
    const sent = messages.filter((message) => message.status === "sent" && message.deliveredAt.length > 0);
    const unknown = messages.filter((message) => message.status === "error" && message.errorId === OUTCOME_UNKNOWN);
    const unknownWithMail = unknown.filter((message) => mailsOf(message) === 1);
    console.log(
      `SMTP fault: ${total} messages, kill after ${atKill} mails; sent ${sent.length}, outcome unknown ${unknown.length} ` +
        `(${unknownWithMail.length} of them reached the sink before the kill, ${unknown.length - unknownWithMail.length} did not), ` +
        `mails received ${sink.received.length}`,
    );

    // No recipient receives two mails.
    expect([...mails.entries()].filter(([, count]) => count > 1)).toEqual([]);
    // Nothing is left without an outcome, and every outcome is sent or unknown: no other failure happened.
    expect(messages.filter((message) => !settled(message)).map(brief)).toEqual([]);
    expect(sent.length + unknown.length).toBe(total);
    // Every message shown sent has its one mail.
    expect(sent.filter((message) => mailsOf(message) !== 1).map((message) => message.email)).toEqual([]);
    // A recipient without a mail is one of the unknown sends: nothing is silently lost.
    const withoutMail = messages.filter((message) => mailsOf(message) === 0);
    expect(withoutMail.filter((message) => message.errorId !== OUTCOME_UNKNOWN).map(brief)).toEqual([]);
    // Only the sends in flight at the kill: at least the unanswered one, at most the jobs the worker held.
    expect(unknown.length).toBeGreaterThanOrEqual(1);
    expect(unknown.length).toBeLessThanOrEqual(HELD);
    expect(unknown[0]!.errorText).toMatch(/may or may not have been delivered/);

    // An operator finds exactly those sends.
    expect((await unknownSendsListed()).sort()).toEqual(unknown.map((message) => message._id).sort());
    // Generous: on a 2-core machine shared at a load of ~20 the stack sent about 5-10 mails a second.
  }, 300_000);

  it("Resend (idempotency key): the sends caught in flight go again with the same key, and every message ends sent", async () => {
    // A Resend stand-in that, like Resend, answers a repeated key with the first call's email instead of sending again.
    const emailOfKey = new Map<string, string>();
    let unanswered = 0;
    const receiver: Receiver = await startReceiver(async (request) => {
      const key = String(request.headers["idempotency-key"] ?? "");
      const to = (JSON.parse(request.body) as { to: string[] }).to.join(",");
      if (!emailOfKey.has(key)) emailOfKey.set(key, to);
      unanswered += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
      unanswered -= 1;
      return { body: { id: `re_${key}` } };
    });
    try {
      await createIntegration({
        providerId: "resend",
        identifier: "resend-slow",
        credentials: { apiKey: "re_test_key", from: "notify@example.com", baseUrl: receiver.url },
      });
      const workflow = await createWorkflow("Fault mail by API");
      const total = 100;

      const first = startWorker();
      const transactionIds = await triggerMany(workflow, "resend", total, "resend-slow");
      await eventually(async () => (receiver.received.length >= 30 && unanswered > 0 ? true : undefined), 60_000, 2);
      await kill(first);
      const atKill = receiver.received.length;
      expect(atKill).toBeLessThan(total);

      startWorker();
      const messages = await outcomes(transactionIds, total, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 2_000));

      const calls = new Map<string, string[]>();
      for (const request of receiver.received) {
        const key = String(request.headers["idempotency-key"] ?? "");
        calls.set(key, [...(calls.get(key) ?? []), (JSON.parse(request.body) as { to: string[] }).to.join(",")]);
      }
      const repeated = [...calls.entries()].filter(([, recipients]) => recipients.length > 1);
      console.log(
        `Resend fault: ${total} messages, kill after ${atKill} calls; calls ${receiver.received.length}, keys ${calls.size}, ` +
          `keys sent again after the restart ${repeated.length}, sent ${messages.filter((message) => message.status === "sent").length}`,
      );

      expect(messages).toHaveLength(total);
      expect(messages.filter((message) => !(message.status === "sent" && message.deliveredAt.length > 0)).map(brief)).toEqual([]);
      // The key is the message: one key per message, every call with a key went to that message's recipient.
      expect(new Set(calls.keys())).toEqual(new Set(messages.map((message) => message._id)));
      const emailOf = new Map(messages.map((message) => [message._id, message.email]));
      expect([...calls.entries()].filter(([key, recipients]) => recipients.some((to) => to !== emailOf.get(key)))).toEqual([]);
      // The calls cut off by the kill went again, with the same key; nothing went a third time.
      expect(repeated.length).toBeGreaterThanOrEqual(1);
      expect(repeated.length).toBeLessThanOrEqual(HELD);
      expect(repeated.filter(([, recipients]) => recipients.length > 2)).toEqual([]);
      // Nothing of this provider is left for an operator.
      const listed = new Set(await unknownSendsListed());
      expect(messages.filter((message) => listed.has(message._id)).map(brief)).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
