import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { commonV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSubscriber, newMessage, nextTransactionId, seeder, unknownMessageId, type Seeder } from "./messages-fixtures.js";
import { startStack, type Data, type Stack } from "./stack.js";

/** SDK calls that fail must not be retried for an hour. */
const once = { retries: { strategy: "none" as const } };

let stack: Stack;
let novu: Novu;
let seed: Seeder;

beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
  seed = seeder(stack, (await createSubscriber(stack, "sdk-scope")).scope);
});
afterAll(async () => {
  seed?.close();
  await stack?.stop();
});

describe("@novu/api 3.19.1 against the gateway: messages", () => {
  it("marks messages, marks all, counts unseen and deletes by transaction with no validation error", async () => {
    const ada = await createSubscriber(stack, "sdk-ada");
    const transactionId = nextTransactionId();
    const created = await seed.create([
      newMessage(ada, { transactionId }),
      newMessage(ada, { transactionId, channel: commonV1.Channel.EMAIL, stepId: "email", email: "a@example.com" }),
      newMessage(ada),
      newMessage(ada),
    ]);
    const [inApp, email] = created.messages.map((message) => message.id);

    const marked = await novu.subscribers.messages.markAllAs({ messageId: [inApp!, email!], markAs: "read" }, "sdk-ada");
    expect(marked.result.map((message) => [message.id, message.read, message.seen, message.channel])).toEqual([
      [inApp, true, true, "in_app"],
      [email, true, true, "email"],
    ]);
    expect(marked.result[0]).toMatchObject({ subscriberId: ada.id, transactionId, status: "sent", cta: { type: "redirect" } });

    const count = await novu.subscribers.notifications.unseenCount({ subscriberId: "sdk-ada" });
    expect(count.result).toEqual({ count: 2 });
    expect((await novu.subscribers.notifications.unseenCount({ subscriberId: "sdk-ada", seen: true, limit: 1 })).result).toEqual({ count: 1 });

    const all = await novu.subscribers.messages.markAll({ markAs: "seen" }, "sdk-ada");
    expect(all.result).toBe(2);
    expect((await novu.subscribers.messages.markAll({ markAs: "seen", feedIdentifier: ["general"] }, "sdk-ada")).result).toBe(0);
    expect((await novu.subscribers.notifications.unseenCount({ subscriberId: "sdk-ada" })).result.count).toBe(0);

    await novu.messages.deleteByTransactionId(transactionId, "email");
    expect((await novu.messages.retrieve({ transactionId: [transactionId] })).result.data.map((message) => message.channel)).toEqual(["in_app"]);
    await novu.messages.deleteByTransactionId(transactionId);
    expect((await novu.messages.retrieve({ transactionId: [transactionId] })).result.data).toEqual([]);
    const gone = await novu.messages.deleteByTransactionId(transactionId).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(errors.ErrorDto);
    expect((gone as errors.ErrorDto).statusCode).toBe(404);
  });

  it("lists messages with their subscriber, reads the feed and deletes one message", async () => {
    const ada = await createSubscriber(stack, "sdk-list");
    const transactionId = nextTransactionId();
    const [created] = (await seed.create([newMessage(ada, { transactionId, jobId: "64b7f0c2a1b2c3d4e5f60799" })])).messages;

    const listed = await novu.messages.retrieve({ transactionId: [transactionId] });
    expect(listed.result).toMatchObject({ page: 0, hasMore: false, totalCount: 1 });
    expect(listed.result.data[0]).toMatchObject({ id: created!.id, subscriber: { subscriberId: "sdk-list" } });

    const feed = await novu.subscribers.notifications.feed({ subscriberId: "sdk-list" });
    expect(feed.result.data.map((message) => message.id)).toEqual([created!.id]);

    const removed = await novu.messages.delete(created!.id);
    expect(removed.result).toEqual({ acknowledged: true, status: "deleted" });
  });

  it("parses a message's embedded workflow (template) as WorkflowResponse, in the list and the feed", async () => {
    const ada = await createSubscriber(stack, "sdk-template");
    const workflow = await stack.request<Data<{ _id: string; steps: { _id: string }[] }>>("POST", "/v1/workflows", {
      name: "SDK template",
      tags: ["sdk"],
      steps: [{ template: { type: "in_app", content: "Hi {{name}}" } }, { template: { type: "email", subject: "S", content: "E" } }],
    });
    const [created] = (await seed.create([newMessage(ada, { templateId: workflow.body.data._id, jobId: "64b7f0c2a1b2c3d4e5f60798" })])).messages;

    const listed = await novu.messages.retrieve({ subscriberId: "sdk-template" });
    const template = listed.result.data[0]!.template!;
    expect(listed.result.data[0]!.id).toBe(created!.id);
    expect(template).toMatchObject({ id: workflow.body.data._id, name: "SDK template", tags: ["sdk"], active: false, deleted: false });
    expect(template.triggers).toEqual([{ type: "event", identifier: "sdk-template", variables: [{ name: "name" }], subscriberVariables: [{ name: "email" }] }]);
    // The SDK's MessageTemplate schema keeps no fields, so the steps are told apart by their ids.
    expect(template.steps.map((step) => [step.active, step.id])).toEqual(workflow.body.data.steps.map((step) => [true, step._id]));

    const feed = await novu.subscribers.notifications.feed({ subscriberId: "sdk-template" });
    expect(feed.result.data.map((message) => message.id)).toEqual([created!.id]);
  });

  it("surfaces an unknown subscriber as a 404 ErrorDto and a bad limit as a ValidationErrorDto", async () => {
    const missing = await novu.subscribers.notifications.unseenCount({ subscriberId: "nobody" }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(errors.ErrorDto);
    const invalid = await novu.subscribers.notifications.unseenCount({ subscriberId: "sdk-scope", limit: 5000 }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(errors.ValidationErrorDto);
  });

  it("subscribers.messages.updateAsSeen completes and reverts a message's action", async () => {
    const ada = await createSubscriber(stack, "sdk-action");
    const [created] = (await seed.create([newMessage(ada)])).messages;
    const done = await novu.subscribers.messages.updateAsSeen({
      subscriberId: "sdk-action",
      messageId: created!.id,
      type: "primary",
      // The SDK's payload type has no fields, so it sends an empty object whatever it is given.
      markMessageActionAsSeenDto: { status: "done", payload: {} },
    });
    expect(done.result).toMatchObject({ id: created!.id, cta: { action: { status: "done", result: { type: "primary", payload: {} } } } });
    const pending = await novu.subscribers.messages.updateAsSeen({
      subscriberId: "sdk-action",
      messageId: created!.id,
      type: "secondary",
      markMessageActionAsSeenDto: { status: "pending" },
    });
    expect(pending.result.cta.action).toMatchObject({ status: "pending", result: { type: "secondary" } });

    const badType = await novu.subscribers.messages
      .updateAsSeen({ subscriberId: "sdk-action", messageId: created!.id, type: "tertiary", markMessageActionAsSeenDto: { status: "done" } }, once)
      .catch((error: unknown) => error);
    expect(badType).toBeInstanceOf(errors.ValidationErrorDto);
    const unknown = await novu.subscribers.messages
      .updateAsSeen({ subscriberId: "sdk-action", messageId: unknownMessageId(), type: "primary", markMessageActionAsSeenDto: { status: "done" } }, once)
      .catch((error: unknown) => error);
    expect((unknown as errors.ErrorDto).statusCode).toBe(404);
    const listed = await novu.messages.retrieve({ subscriberId: "sdk-action" });
    expect(listed.result.data[0]!.cta.action).toMatchObject({ status: "pending", result: { type: "secondary" } });
  });

  it("subscribers.notifications: list, count, read, unread, archive, unarchive, snooze, unsnooze, actions, bulk changes and deletes", async () => {
    const ada = await createSubscriber(stack, "sdk-notes");
    const [first, second, third] = (await seed.create([newMessage(ada), newMessage(ada), newMessage(ada)])).messages.map((message) => message.id);
    const subscriberId = "sdk-notes";

    const listed = await novu.subscribers.notifications.list({ subscriberId, limit: 10 });
    expect(listed.result.data.map((notification) => notification.id).sort()).toEqual([first, second, third].sort());
    expect(listed.result.hasMore).toBe(false);
    const counted = await novu.subscribers.notifications.count(subscriberId, JSON.stringify([{ read: false }, { archived: true }]));
    expect(counted.result.map((entry) => entry.count)).toEqual([3, 0]);

    const request = { subscriberId, notificationId: first! };
    expect((await novu.subscribers.notifications.markAsRead(request)).result).toMatchObject({ id: first, isRead: true });
    expect((await novu.subscribers.notifications.markAsUnread(request)).result.isRead).toBe(false);
    expect((await novu.subscribers.notifications.archive(request)).result.isArchived).toBe(true);
    expect((await novu.subscribers.notifications.unarchive(request)).result.isArchived).toBe(false);
    const snoozeUntil = new Date(Date.now() + 3_600_000);
    expect((await novu.subscribers.notifications.snooze({ ...request, snoozeSubscriberNotificationDto: { snoozeUntil } })).result.isSnoozed).toBe(true);
    expect((await novu.subscribers.notifications.unsnooze(request)).result.isSnoozed).toBe(false);
    const done = await novu.subscribers.notifications.completeAction({ ...request, actionType: "primary" });
    expect(done.result.primaryAction).toMatchObject({ isCompleted: true });
    expect((await novu.subscribers.notifications.revertAction({ ...request, actionType: "primary" })).result.primaryAction?.isCompleted).toBe(false);

    await novu.subscribers.notifications.markAsSeen({ notificationIds: [second!] }, subscriberId);
    await novu.subscribers.notifications.markAllAsRead({}, subscriberId);
    await novu.subscribers.notifications.archiveAllRead({}, subscriberId);
    expect((await novu.subscribers.notifications.list({ subscriberId, archived: true })).result.data).toHaveLength(3);
    await novu.subscribers.notifications.delete({ subscriberId, notificationId: third! });
    await novu.subscribers.notifications.archiveAll({}, subscriberId);
    await novu.subscribers.notifications.deleteAll({}, subscriberId);
    expect((await novu.subscribers.notifications.list({ subscriberId, archived: true })).result.data).toEqual([]);

    const missing = await novu.subscribers.notifications
      .markAsRead({ subscriberId, notificationId: unknownMessageId() }, once)
      .catch((error: unknown) => error);
    expect((missing as errors.ErrorDto).statusCode).toBe(404);
    const malformed = await novu.subscribers.notifications.markAsRead({ subscriberId, notificationId: "nope" }, once).catch((error: unknown) => error);
    expect(malformed).toBeInstanceOf(errors.ValidationErrorDto);
  });
});
