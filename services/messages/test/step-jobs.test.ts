import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { commonV1, type messagesV1 } from "@notify/proto";
import { fieldErrorsOf } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callAs, fakeSubscribers, fakeWorkflows, inMemoryClient, newMessage, newScope, openDatabase, rpcError, type Fixture } from "./fixtures.js";

let fixture: Fixture;
const subscribers = fakeSubscribers();
let client: ReturnType<typeof inMemoryClient>;

beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture, subscribers, 10_000, fakeWorkflows());
});
afterAll(() => fixture?.close());

function setUp() {
  const scope = newScope();
  return { scope, call: callAs(scope), ada: subscribers.add(scope, "ada"), bob: subscribers.add(scope, "bob") };
}

type Recipient = { id: string; subscriberId: string };

/** A delay step's change for some subscribers of one transaction. */
function delayGroup(transactionId: string, recipients: Recipient[], status: string, details: { detail: string; status: string; raw?: string }[]) {
  return {
    transactionId,
    templateId: "64b7f0c2a1b2c3d4e5f60718",
    templateIdentifier: "welcome",
    payload: { name: "Ada" },
    stepId: "step-delay",
    messageTemplateId: "64b7f0c2a1b2c3d4e5f6071a",
    type: "delay",
    status,
    digest: { type: "regular", amount: 5, unit: "minutes" },
    details,
    recipients: recipients.map((recipient) => ({ subscriberId: recipient.id, externalSubscriberId: recipient.subscriberId })),
  };
}

const DELAYED = [
  { detail: "Step delayed", status: "Pending", raw: '{"delay":300000}' },
  { detail: "Step queued", status: "Pending" },
];
const FINISHED = [{ detail: "Delay is finished", status: "Success" }];

const detailTexts = (details: readonly messagesV1.ExecutionDetail[]) => details.map((detail) => [detail.stepDetail?.detail, detail.stepDetail?.status]);

describe("RecordStepJobs", () => {
  it("creates each run's notification with its step job, which moves forward only, and the run's messages join it", async () => {
    const { call, ada, bob } = setUp();
    expect((await client.recordStepJobs({ groups: [delayGroup("t-1", [ada, bob], "delayed", DELAYED)] }, call)).changed).toBe(2);
    // Redelivered: the same change again adds nothing.
    expect((await client.recordStepJobs({ groups: [delayGroup("t-1", [ada, bob], "delayed", DELAYED)] }, call)).changed).toBe(0);

    const page = await client.listNotifications({ page: 0, limit: 10, transactionId: "t-1" }, call);
    expect(page.notifications).toHaveLength(2);
    const adas = page.notifications.find((notification) => notification.externalSubscriberId === "ada")!;
    expect(adas).toMatchObject({ templateIdentifier: "welcome", payloadJson: '{"name":"Ada"}', messages: [] });
    expect(adas.stepJobs).toMatchObject([
      { stepId: "step-delay", type: "delay", status: "delayed", digestJson: '{"type": "regular", "unit": "minutes", "amount": 5}' },
    ]);
    expect(detailTexts(adas.executionDetails)).toEqual([
      ["Step delayed", "Pending"],
      ["Step queued", "Pending"],
    ]);
    const [first, second] = adas.executionDetails;
    expect(first).toMatchObject({ jobId: adas.stepJobs[0]!.id, messageId: "", stepType: "delay", transactionId: "t-1", subscriberId: ada.id });
    expect(first!.stepDetail!.raw).toBe('{"delay":300000}');
    expect(first!.id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Set([first!.id, second!.id]).size).toBe(2);

    // The delay ends for Ada; the step after it writes her message into the same notification.
    expect((await client.recordStepJobs({ groups: [delayGroup("t-1", [ada], "completed", FINISHED)] }, call)).changed).toBe(1);
    await client.createMessages({ messages: [newMessage(ada, { transactionId: "t-1", channel: commonV1.Channel.EMAIL, stepId: "step-email" })] }, call);
    // A redelivered first run cannot move it back.
    expect((await client.recordStepJobs({ groups: [delayGroup("t-1", [ada], "delayed", DELAYED)] }, call)).changed).toBe(0);

    const { notification } = await client.getNotification({ notificationId: adas.id }, call);
    expect(notification!.messages.map((message) => message.stepId)).toEqual(["step-email"]);
    expect(notification!.stepJobs.map((job) => job.status)).toEqual(["completed"]);
    expect(detailTexts(notification!.executionDetails)).toEqual([
      ["Step delayed", "Pending"],
      ["Step queued", "Pending"],
      ["Delay is finished", "Success"],
    ]);
    const at = notification!.executionDetails.map((detail) => timestampDate(detail.createdAt!).getTime());
    expect([...at].sort((a, b) => a - b)).toEqual(at);

    // The subscriber's execution details list them too; Bob's are his own.
    const listed = await client.listExecutionDetails({ notificationId: adas.id, subscriberId: "ada" }, call);
    expect(detailTexts(listed.details)).toHaveLength(3);
    expect((await client.listExecutionDetails({ notificationId: adas.id, subscriberId: "bob" }, call)).details).toEqual([]);
  });

  it("keeps the steps behind a delay's job, from its first record on", async () => {
    const { call, ada } = setUp();
    const later = [
      { stepId: "step-email", type: "email" },
      { stepId: "step-digest", type: "digest" },
    ];
    await client.recordStepJobs({ groups: [{ ...delayGroup("t-later", [ada], "delayed", DELAYED), later }] }, call);
    // The change that finishes it names none: the job keeps those it had.
    await client.recordStepJobs({ groups: [delayGroup("t-later", [ada], "completed", FINISHED)] }, call);
    const [notification] = (await client.listNotifications({ page: 0, limit: 10, transactionId: "t-later" }, call)).notifications;
    expect(notification!.stepJobs.map((job) => [job.status, job.later.map((step) => [step.stepId, step.type])])).toEqual([
      [
        "completed",
        [
          ["step-email", "email"],
          ["step-digest", "digest"],
        ],
      ],
    ]);
    const refused = await rpcError(
      client.recordStepJobs({ groups: [{ ...delayGroup("t-later", [ada], "delayed", DELAYED), later: [{ stepId: "", type: "fax" }] }] }, call),
    );
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(refused) ?? {})).toEqual(["groups[0].later[0].stepId", "groups[0].later[0].type"]);
  });

  it("changes a job once when a call names it twice, the last change winning", async () => {
    const { call, ada } = setUp();
    const groups = [delayGroup("t-2", [ada], "delayed", DELAYED), delayGroup("t-2", [ada], "completed", FINISHED)];
    expect((await client.recordStepJobs({ groups }, call)).changed).toBe(1);
    const [notification] = (await client.listNotifications({ page: 0, limit: 10, transactionId: "t-2" }, call)).notifications;
    expect(notification!.stepJobs.map((job) => job.status)).toEqual(["completed"]);
    expect(detailTexts(notification!.executionDetails)).toEqual([["Delay is finished", "Success"]]);
  });

  it("finds a notification by the channel of a step that sent nothing, as Novu's filter reads the notification's step types", async () => {
    const { call, ada, bob } = setUp();
    const skipped = {
      ...delayGroup("t-skip", [ada], "canceled", [{ detail: "Step was skipped based on steps conditions", status: "Failed" }]),
      stepId: "step-email",
      type: "email",
      digest: undefined,
    };
    await client.recordStepJobs({ groups: [skipped, delayGroup("t-skip", [bob], "delayed", DELAYED)] }, call);
    const byChannel = async (channel: commonV1.Channel) =>
      (await client.listNotifications({ page: 0, limit: 10, transactionId: "t-skip", channels: [channel] }, call)).notifications.map(
        (notification) => notification.externalSubscriberId,
      );
    expect(await byChannel(commonV1.Channel.EMAIL)).toEqual(["ada"]);
    expect(await byChannel(commonV1.Channel.SMS)).toEqual([]);
    // Contexts are read from messages: a notification with none is not in a context's list.
    const inContext = await client.listNotifications(
      { page: 0, limit: 10, transactionId: "t-skip", channels: [commonV1.Channel.EMAIL], contextKeys: ["tenant:acme"] },
      call,
    );
    expect(inContext.notifications).toEqual([]);
  });

  it("keeps a merged digest job open to completion, and is out of another environment's reach", async () => {
    const { call, ada } = setUp();
    const digest = (status: string, detail: string) => ({
      ...delayGroup("t-3", [ada], status, [{ detail, status: "Success" }]),
      type: "digest",
      stepId: "step-digest",
    });
    await client.recordStepJobs({ groups: [digest("merged", "Digest was merged with other digest")] }, call);
    expect((await client.recordStepJobs({ groups: [digest("completed", "Digest triggered events")] }, call)).changed).toBe(1);
    expect((await client.recordStepJobs({ groups: [digest("merged", "Digest was merged with other digest")] }, call)).changed).toBe(0);

    const other = setUp();
    expect((await client.listNotifications({ page: 0, limit: 10, transactionId: "t-3" }, other.call)).notifications).toEqual([]);
  });

  it("cancels a canceled transaction's waiting jobs only, once, in the caller's environment", async () => {
    const { call, ada, bob } = setUp();
    await client.recordStepJobs({ groups: [delayGroup("t-5", [ada, bob], "delayed", DELAYED), delayGroup("t-5", [bob], "completed", FINISHED)] }, call);
    expect((await client.cancelStepJobs({ transactionId: "t-5" }, setUp().call)).canceled).toBe(0);
    expect((await client.cancelStepJobs({ transactionId: "t-5" }, call)).canceled).toBe(1);
    expect((await client.cancelStepJobs({ transactionId: "t-5" }, call)).canceled).toBe(0);
    const statuses = (await client.listNotifications({ page: 0, limit: 10, transactionId: "t-5" }, call)).notifications.map(
      (notification) => `${notification.externalSubscriberId} ${notification.stepJobs[0]!.status}`,
    );
    expect(statuses.sort()).toEqual(["ada canceled", "bob completed"]);
    // A job canceled does not move on: a resumption already under way finds it so.
    expect((await client.recordStepJobs({ groups: [delayGroup("t-5", [ada], "completed", FINISHED)] }, call)).changed).toBe(0);
  });

  it("refuses a malformed change whole, naming each field", async () => {
    const { call, ada } = setUp();
    const bad = { ...delayGroup("t-4", [ada], "waiting", [{ detail: "", status: "Done" }]), type: "sleep" };
    const error = await rpcError(client.recordStepJobs({ groups: [bad, delayGroup("t-4", [ada], "delayed", DELAYED)] }, call));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(error) ?? {}).sort()).toEqual([
      "groups[0].details[0].detail",
      "groups[0].details[0].status",
      "groups[0].status",
      "groups[0].type",
    ]);
    expect((await client.listNotifications({ page: 0, limit: 10, transactionId: "t-4" }, call)).notifications).toEqual([]);
  });
});
