import { randomBytes } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { commonV1, deliveriesV1, triggersV1 } from "@notify/proto";
import { connectNats, ensureJobStream, JOB_KINDS, jobSubject, type NatsConnection } from "@notify/runtime";
import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deadLettersReport, replayDeadLetters, type WorkerStreams } from "../src/dead-letters.js";
import { pageSubject } from "../src/deliveries.js";
import { migrations } from "../src/server.js";
import * as store from "../src/store.js";

// Dead letters are listed in words an operator acts on, and replayed onto their streams.

let fixture: DatabaseFixture;
let nats: NatsConnection;
const suffix = randomBytes(6).toString("hex");
const streams: WorkerStreams = {
  jobs: { name: `TEST_DL_JOBS_${suffix}`, subjectPrefix: `test.${suffix}.jobs` },
  deliveries: { name: `TEST_DL_DELIVERIES_${suffix}`, subjectPrefix: `test.${suffix}.deliveries` },
};

beforeAll(async () => {
  fixture = await openTestDatabase([migrations], 2);
  nats = await connectNats("nats://127.0.0.1:4222", "dead-letters-test");
  await ensureJobStream(nats, streams.jobs);
  await ensureJobStream(nats, streams.deliveries);
});
afterAll(async () => {
  const manager = await nats?.jetstreamManager();
  for (const stream of [streams.jobs, streams.deliveries]) await manager?.streams.delete(stream.name).catch(() => undefined);
  await nats?.close();
  await fixture?.close();
});

const deadLetter = (subject: string, job: Uint8Array) =>
  store.insertDeadLetter(fixture.pool, "env-1", { organizationId: "org-1", subject, job, error: "downstream refused:\nINVALID_ARGUMENT", deliveries: 5 });

const messagesOn = async (stream: string) => (await (await nats.jetstreamManager()).streams.info(stream)).state.messages;

describe("dead letters", () => {
  it("lists each job in words, newest first, and replays the chosen ones onto their stream once", async () => {
    const trigger = create(triggersV1.TriggerJobSchema, { triggerId: "t1", transactionId: "txn-1", workflow: { identifier: "welcome" } });
    await deadLetter(jobSubject(streams.jobs, JOB_KINDS.trigger), toBinary(triggersV1.TriggerJobSchema, trigger));
    const send = create(deliveriesV1.DeliveryJobSchema, { messageId: "m1", channel: commonV1.Channel.EMAIL, providerId: "sendgrid" });
    await deadLetter(`${streams.deliveries.subjectPrefix}.email`, toBinary(deliveriesV1.DeliveryJobSchema, send));
    const page = create(deliveriesV1.DeliveryPageSchema, {
      jobs: [
        { messageId: "m2", channel: commonV1.Channel.CHAT, providerId: "slack" },
        { messageId: "m3", channel: commonV1.Channel.CHAT, providerId: "slack" },
      ],
    });
    await deadLetter(pageSubject(streams.deliveries, commonV1.Channel.CHAT), toBinary(deliveriesV1.DeliveryPageSchema, page));
    await deadLetter(jobSubject(streams.jobs, JOB_KINDS.trigger), new Uint8Array([0xff, 0xff, 0xff]));

    const report = (await deadLettersReport(fixture.pool, streams, 10)).trim().split("\n");
    expect(report[0]).toBe("ID\tDEAD SINCE\tENVIRONMENT\tDELIVERIES\tJOB\tERROR");
    expect(report.slice(1).map((line) => line.split("\t")[4])).toEqual([
      "a job that cannot be read",
      "chat send of message m2 through slack and 1 more",
      "email send of message m1 through sendgrid",
      "trigger of welcome (transaction txn-1)",
    ]);
    expect(report[1]?.split("\t")[5]).toBe("downstream refused: INVALID_ARGUMENT");
    const [, , sendId, triggerId] = report.slice(1).map((line) => line.split("\t")[0]!);

    const replayed = await replayDeadLetters(fixture.pool, nats, [triggerId!, sendId!, "999999"]);
    expect([...replayed]).toEqual([
      [triggerId, true],
      [sendId, true],
      ["999999", false],
    ]);
    expect(await messagesOn(streams.jobs.name)).toBe(1);
    expect(await messagesOn(streams.deliveries.name)).toBe(1);
    expect((await deadLettersReport(fixture.pool, streams, 10)).trim().split("\n")).toHaveLength(3);
    expect([...(await replayDeadLetters(fixture.pool, nats, [triggerId!]))]).toEqual([[triggerId, false]]);
    expect(await messagesOn(streams.jobs.name)).toBe(1);
  });
});
