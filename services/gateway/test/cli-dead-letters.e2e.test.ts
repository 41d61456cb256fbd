import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { commonV1, deliveriesV1 } from "@notify/proto";
import { createPool, type Pool, type Scope } from "@notify/runtime";
import { eventually, startSmtpSink, type SmtpSink } from "@notify/testing";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, delivered, settledMessage, sinkCredentials } from "./delivery-helpers.js";
import { createSubscriber, newMessage, type SeededSubscriber, seeder } from "./messages-fixtures.js";
import { startStack, type Stack } from "./stack.js";

const notifyCli = fileURLToPath(new URL("../../../scripts/notify.mjs", import.meta.url));
const run = promisify(execFile);

let stack: Stack;
let sink: SmtpSink;
let pool: Pool;
/** Every command run and what it printed, kept as evidence when NOTIFY_EVIDENCE_DIR names a folder. */
const transcript: string[] = [];

/** `pnpm notify ARGS` as an operator runs it, against this stack's database and streams. */
async function notify(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [notifyCli, ...args], { env: { ...process.env, ...stack.workerEnv } });
  transcript.push(`$ pnpm notify ${args.join(" ")}\n${stdout}`);
  return stdout;
}

beforeAll(async () => {
  sink = await startSmtpSink();
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
  pool = createPool(stack.database.url, 1);
});
afterAll(async () => {
  const evidence = process.env.NOTIFY_EVIDENCE_DIR;
  if (evidence) {
    mkdirSync(evidence, { recursive: true });
    writeFileSync(join(evidence, "dead-letter-replay.txt"), transcript.join("\n"));
  }
  await pool?.end();
  await stack?.stop();
  await sink?.close();
});

/** An SMTP integration sending to the test's sink. */
const sinkIntegration = (identifier: string) =>
  createIntegration(stack, {
    providerId: "nodemailer",
    channel: "email",
    identifier,
    credentials: sinkCredentials(sink),
  });

/** The DeliveryJob of an email send of a written message, as the worker's fan-out makes it. */
function emailJob(subscriber: SeededSubscriber & { scope: Scope }, messageId: string, transactionId: string, integrationId: string) {
  return create(deliveriesV1.DeliveryJobSchema, {
    ...subscriber.scope,
    messageId,
    transactionId,
    externalSubscriberId: subscriber.subscriberId,
    subscriberId: subscriber.id,
    channel: commonV1.Channel.EMAIL,
    integrationId,
    providerId: "nodemailer",
    createdAt: timestampNow(),
    content: {
      case: "email",
      value: { to: [`${subscriber.subscriberId}@example.com`], subject: "Replayed", body: { case: "html", value: "<p>Back again</p>" } },
    },
  });
}

/**
 * Records an email send of a new message as the worker dead-letters a send it gives up on: the
 * message written through the messages service's batch RPC, its DeliveryJob's bytes and the last
 * error in the worker's dead letters. Answers the message's transaction id.
 */
async function deadLetteredSend(integrationId: string, subscriberId: string, error: string): Promise<string> {
  const subscriber = await createSubscriber(stack, subscriberId);
  const seed = seeder(stack, subscriber.scope);
  try {
    const message = newMessage(subscriber, { channel: commonV1.Channel.EMAIL, providerId: "nodemailer" });
    const [written] = (await seed.create([message])).messages;
    const job = emailJob(subscriber, written!.id, message.transactionId, integrationId);
    await pool.query("INSERT INTO worker.dead_letters (organization_id, environment_id, subject, job, error, deliveries) VALUES ($1, $2, $3, $4, $5, 3)", [
      subscriber.scope.organizationId,
      subscriber.scope.environmentId,
      `${stack.workerEnv.DELIVERIES_SUBJECT_PREFIX}.email`,
      Buffer.from(toBinary(deliveriesV1.DeliveryJobSchema, job)),
      error,
    ]);
    return message.transactionId;
  } finally {
    seed.close();
  }
}

/** The worker's count of sends it dead-lettered on their own. */
async function sendsDeadLettered(): Promise<number> {
  const text = await (await fetch(stack.metricsUrls.worker!)).text();
  const sample = /^notify_delivery_sends_dead_lettered_total (\d+)$/m.exec(text);
  if (!sample) throw new Error("the worker serves no notify_delivery_sends_dead_lettered_total");
  return Number(sample[1]);
}

describe("pnpm notify dead-letters", () => {
  it("lists and shows a dead-lettered send decoded with its last error; replayed, it delivers; a dropped one is gone", async () => {
    const integrationId = await sinkIntegration("smtp-sink");
    const replayed = await deadLetteredSend(integrationId, "grace", "connect ECONNREFUSED (the SMTP server was down)");
    await deadLetteredSend(integrationId, "linus", "a send nobody wants any more");

    const [header, ...rows] = (await notify("dead-letters", "list")).trim().split("\n");
    expect(header).toBe("ID\tDEAD SINCE\tENVIRONMENT\tDELIVERIES\tJOB\tERROR");
    expect(rows).toHaveLength(2);
    const [dropId, replayId] = rows.map((row) => row.split("\t")[0]!);
    expect(rows[1]!.split("\t").slice(3)).toEqual([
      "3",
      expect.stringMatching(/^email send of message [0-9a-f]{24} through nodemailer$/),
      "connect ECONNREFUSED (the SMTP server was down)",
    ]);

    const shown = JSON.parse(await notify("dead-letters", "show", replayId!));
    expect(shown).toMatchObject({
      id: Number(replayId),
      deliveries: 3,
      lastError: "connect ECONNREFUSED (the SMTP server was down)",
      job: { transactionId: replayed, providerId: "nodemailer", channel: "CHANNEL_EMAIL", email: { to: ["grace@example.com"], subject: "Replayed" } },
    });

    expect(await notify("dead-letters", "replay", replayId!)).toBe(`${replayId}\treplayed\n`);
    const message = await settledMessage(stack, replayed, "email", delivered);
    expect(message.status).toBe("sent");
    await eventually(async () => (sink.received.some((mail) => mail.envelope.to.includes("grace@example.com")) ? true : undefined));
    expect(sink.received.filter((mail) => mail.envelope.to.includes("grace@example.com"))).toHaveLength(1);

    expect(await notify("dead-letters", "drop", dropId!, "999999")).toBe(`${dropId}\tdropped\n999999\tno such dead letter\n`);
    expect((await notify("dead-letters", "list")).trim().split("\n")).toEqual([header]);
    expect(sink.received.some((mail) => mail.envelope.to.includes("linus@example.com"))).toBe(false);
  }, 60_000);

  it("dead-letters, and counts, a send a service refuses, while the other send of its page is delivered", async () => {
    const integrationId = await sinkIntegration("smtp-sink-pages");
    const subscriber = await createSubscriber(stack, "ada");
    const seed = seeder(stack, subscriber.scope);
    const messages = [0, 1].map(() => newMessage(subscriber, { channel: commonV1.Channel.EMAIL, providerId: "nodemailer" }));
    const [good, refused] = (await seed.create(messages)).messages;
    seed.close();
    // A send claiming the in-app channel, which no provider delivers: the worker refuses its data.
    const refusedJob = emailJob(subscriber, refused!.id, messages[1]!.transactionId, integrationId);
    refusedJob.channel = commonV1.Channel.IN_APP;
    const page = create(deliveriesV1.DeliveryPageSchema, { jobs: [refusedJob, emailJob(subscriber, good!.id, messages[0]!.transactionId, integrationId)] });
    const countedBefore = await sendsDeadLettered();

    const nats = await connect({ servers: stack.workerEnv.NATS_URL });
    try {
      await nats.jetstream().publish(`${stack.workerEnv.DELIVERIES_SUBJECT_PREFIX}.pages.email`, toBinary(deliveriesV1.DeliveryPageSchema, page));
    } finally {
      await nats.close();
    }

    expect((await settledMessage(stack, messages[0]!.transactionId, "email", delivered)).status).toBe("sent");
    await eventually(async () => (sink.received.some((mail) => mail.envelope.to.includes("ada@example.com")) ? true : undefined));
    const rows = await eventually(async () => {
      const [, ...listed] = (await notify("dead-letters", "list")).trim().split("\n");
      return listed.length > 0 ? listed : undefined;
    });
    expect(rows).toHaveLength(1);
    const [id, , , deliveries, job, error] = rows[0]!.split("\t");
    expect([deliveries, job]).toEqual(["1", `in_app send of message ${refused!.id} through nodemailer`]);
    expect(error).toContain("a delivery job of channel");
    expect(await sendsDeadLettered()).toBe(countedBefore + 1);
    expect(await notify("dead-letters", "drop", id!)).toBe(`${id}\tdropped\n`);
  }, 60_000);

  it("answers --help on every command, and refuses what it cannot read with its usage", async () => {
    // Each command is a process or two that load the CLI's modules: run side by side, they take the
    // time of a few, not of fourteen in a row, also on a busy machine.
    const workerCommands = [
      [],
      ["dead-letters"],
      ["dead-letters", "list"],
      ["dead-letters", "show"],
      ["dead-letters", "replay"],
      ["dead-letters", "drop"],
      ["unknown-sends"],
    ];
    const gatewayCommands = [
      ["keys"],
      ["keys", "create"],
      ["keys", "list"],
      ["keys", "revoke"],
      ["inbox", "origins"],
      ["rate-limits", "set"],
      ["rate-limits", "default"],
    ];
    const [workerHelp, gatewayHelp] = await Promise.all(
      [workerCommands, gatewayCommands].map((commands) => Promise.all(commands.map((command) => notify(...command, "--help")))),
    );
    workerCommands.forEach((command, index) => {
      expect(workerHelp![index], command.join(" ")).toMatch(/^usage:\n/);
      expect(workerHelp![index], command.join(" ")).toContain(`notify ${command.join(" ")}`.trim());
    });
    gatewayCommands.forEach((command, index) => {
      expect(gatewayHelp![index], command.join(" ")).toContain(`notify ${command.join(" ")}`);
    });
    await expect(notify("dead-letters", "show", "not-a-number")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("notify dead-letters show ID"),
    });
  }, 120_000);
});
