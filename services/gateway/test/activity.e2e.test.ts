import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { commonV1 } from "@notify/proto";
import { eventually, startReceiver, startSmtpSink, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, messagesOf, settledMessage, sinkCredentials } from "./delivery-helpers.js";
import { newMessage, seeder, type SeededSubscriber, type Seeder } from "./messages-fixtures.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let sink: SmtpSink;
const seeders: Seeder[] = [];

beforeAll(async () => {
  sink = await startSmtpSink();
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
});
afterAll(async () => {
  for (const seed of seeders) seed.close();
  await stack?.stop();
  await sink?.close();
});

const sdkOf = (key: string) => new Novu({ secretKey: key, serverURL: stack.url });

/** An environment of its own: its key, the SDK on it and a seeder of its messages (the worker's write path). */
async function environment(name: string) {
  const key = await stack.createKey(name);
  const subscribe = async (subscriberId: string, email?: string): Promise<SeededSubscriber> => {
    const reply = await stack.request<Data<{ _id: string; _organizationId: string; _environmentId: string }>>(
      "POST",
      "/v1/subscribers",
      { subscriberId, firstName: subscriberId, ...(email ? { email } : {}) },
      { authorization: `ApiKey ${key}` },
    );
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    scope ??= { organizationId: reply.body.data._organizationId, environmentId: reply.body.data._environmentId };
    return { id: reply.body.data._id, subscriberId };
  };
  let scope: { organizationId: string; environmentId: string } | undefined;
  const first = await subscribe(`${name}-first`);
  const seed = seeder(stack, scope!);
  seeders.push(seed);
  return { key, novu: sdkOf(key), subscribe, seed, first };
}

const WORKFLOW_A = "64b7f0c2a1b2c3d4e5f6a001";
const WORKFLOW_B = "64b7f0c2a1b2c3d4e5f6b002";

describe("GET /v1/notifications through @novu/api 3.19.1: filters", () => {
  let env: Awaited<ReturnType<typeof environment>>;
  /** Transaction ids by what they are, newest last. */
  const seeded = { adaA: [] as string[], adaEmail: "", bobB: [] as string[] };

  beforeAll(async () => {
    env = await environment("filters");
    const ada = await env.subscribe("fil-ada", "ada@filters.test");
    const bob = await env.subscribe("fil-bob", "bob@corp.test");
    for (let index = 0; index < 3; index++) {
      const message = newMessage(ada, { templateId: WORKFLOW_A });
      seeded.adaA.push(message.transactionId);
      await env.seed.create([message]);
    }
    const email = newMessage(ada, { templateId: WORKFLOW_B, channel: commonV1.Channel.EMAIL, stepId: "email", email: "ada@filters.test" });
    seeded.adaEmail = email.transactionId;
    await env.seed.create([email, newMessage(ada, { transactionId: email.transactionId, templateId: WORKFLOW_B })]);
    for (let index = 0; index < 2; index++) {
      const message = newMessage(bob, { templateId: WORKFLOW_B });
      seeded.bobB.push(message.transactionId);
      await env.seed.create([message]);
    }
  });

  const transactionsOf = async (request: Parameters<Novu["notifications"]["list"]>[0]) => {
    const reply = await env.novu.notifications.list(request);
    return reply.result.data.map((notification) => notification.transactionId);
  };

  it("lists every notification of the environment newest first, each with its jobs, subscriber and payload", async () => {
    const reply = await env.novu.notifications.list({});
    expect(reply.result).toMatchObject({ page: 0, pageSize: 10, hasMore: false });
    expect(reply.result.data.map((notification) => notification.transactionId)).toEqual([
      ...[...seeded.bobB].reverse(),
      seeded.adaEmail,
      ...[...seeded.adaA].reverse(),
    ]);
    const mixed = reply.result.data.find((notification) => notification.transactionId === seeded.adaEmail)!;
    expect(mixed).toMatchObject({
      templateId: WORKFLOW_B,
      subscriber: { subscriberId: "fil-ada", email: "ada@filters.test", firstName: "fil-ada" },
      payload: { name: "Ada" },
    });
    expect(mixed.channels?.sort()).toEqual(["email", "in_app"]);
    expect(mixed.jobs?.map((job) => [job.type, job.status, job.executionDetails])).toEqual(
      expect.arrayContaining([
        ["email", "pending", []],
        ["in_app", "completed", []],
      ]),
    );
  });

  it("filters by channels", async () => {
    expect(await transactionsOf({ channels: ["email"] })).toEqual([seeded.adaEmail]);
    expect(await transactionsOf({ channels: ["in_app", "email"] })).toHaveLength(6);
    expect(await transactionsOf({ channels: ["push"] })).toEqual([]);
  });

  it("filters by templates", async () => {
    expect((await transactionsOf({ templates: [WORKFLOW_A] })).sort()).toEqual([...seeded.adaA].sort());
    expect(await transactionsOf({ templates: [WORKFLOW_A, WORKFLOW_B] })).toHaveLength(6);
    expect(await transactionsOf({ templates: ["64b7f0c2a1b2c3d4e5f6ffff"] })).toEqual([]);
  });

  it("filters by subscriberIds, emails and search (email containing it, any case, or the subscriberId)", async () => {
    expect((await transactionsOf({ subscriberIds: ["fil-bob"] })).sort()).toEqual([...seeded.bobB].sort());
    expect(await transactionsOf({ subscriberIds: ["fil-ada", "fil-bob"] })).toHaveLength(6);
    expect((await transactionsOf({ emails: ["bob@corp.test"] })).sort()).toEqual([...seeded.bobB].sort());
    expect(await transactionsOf({ search: "ADA@FILTERS" })).toHaveLength(4);
    expect((await transactionsOf({ search: "fil-bob" })).sort()).toEqual([...seeded.bobB].sort());
    // A search is matched literally: LIKE's wildcards are not wildcards.
    expect(await transactionsOf({ search: "%" })).toEqual([]);
    expect(await transactionsOf({ subscriberIds: ["nobody"] })).toEqual([]);
    expect(await transactionsOf({ emails: ["nobody@example.com"] })).toEqual([]);
  });

  it("filters by transactionId, and combines filters", async () => {
    expect(await transactionsOf({ transactionId: seeded.adaA[1]! })).toEqual([seeded.adaA[1]]);
    expect(await transactionsOf({ transactionId: "no-such-transaction" })).toEqual([]);
    expect(await transactionsOf({ subscriberIds: ["fil-ada"], channels: ["in_app"], templates: [WORKFLOW_B] })).toEqual([seeded.adaEmail]);
    expect(await transactionsOf({ emails: ["bob@corp.test"], templates: [WORKFLOW_A] })).toEqual([]);
  });

  it("takes a filter's values as repeated parameters or comma-separated", async () => {
    const repeated = await stack.request<{ data: unknown[] }>("GET", "/v1/notifications?channels=email&channels=push", undefined, {
      authorization: `ApiKey ${env.key}`,
    });
    const commas = await stack.request<{ data: unknown[] }>("GET", "/v1/notifications?channels=email,push", undefined, {
      authorization: `ApiKey ${env.key}`,
    });
    expect(repeated.status).toBe(200);
    expect(repeated.body.data).toHaveLength(1);
    expect(commas.body).toEqual(repeated.body);
  });
});

describe("pagination, stats and bad queries", () => {
  let env: Awaited<ReturnType<typeof environment>>;
  const transactions: string[] = [];

  beforeAll(async () => {
    env = await environment("paging");
    for (let index = 0; index < 25; index++) {
      const message = newMessage(env.first, { templateId: index % 2 ? WORKFLOW_A : WORKFLOW_B });
      transactions.unshift(message.transactionId);
      await env.seed.create([message]);
    }
  });

  it("pages newest first: every notification once, hasMore until the last page", async () => {
    const pages = [];
    for (let page = 0; page < 3; page++) pages.push((await env.novu.notifications.list({ page, limit: 10 })).result);
    expect(pages.map((page) => [page.page, page.pageSize, page.data.length, page.hasMore])).toEqual([
      [0, 10, 10, true],
      [1, 10, 10, true],
      [2, 10, 5, false],
    ]);
    expect(pages.flatMap((page) => page.data.map((notification) => notification.transactionId))).toEqual(transactions);
    expect((await env.novu.notifications.list({ limit: 50 })).result.data).toHaveLength(25);
  });

  it("keeps to the dates after and before name, and refuses one that is not a date, as Novu does", async () => {
    const hour = 3_600_000;
    const listed = async (after?: Date, before?: Date) =>
      (await env.novu.notifications.list({ limit: 50, ...(after ? { after: after.toISOString() } : {}), ...(before ? { before: before.toISOString() } : {}) }))
        .result.data.length;
    expect(await listed(new Date(Date.now() - hour), new Date(Date.now() + hour))).toBe(25);
    expect(await listed(new Date(Date.now() + hour))).toBe(0);
    expect(await listed(undefined, new Date(Date.now() - hour))).toBe(0);
    const refused = async (query: string) =>
      (await stack.request<{ message: string }>("GET", `/v1/notifications?${query}`, undefined, { authorization: `ApiKey ${env.key}` })).body;
    expect(await refused("after=yesterday")).toMatchObject({
      statusCode: 400,
      message: "Invalid date format for parameter 'after': yesterday. Please provide a valid ISO 8601 date string.",
    });
    expect(await refused(`after=${new Date(Date.now() + hour).toISOString()}&before=${new Date().toISOString()}`)).toMatchObject({
      statusCode: 400,
      message: "Invalid date range: start date (after) must be earlier than end date (before)",
    });
  });

  it("counts the week's and the month's notifications, and the days' messages", async () => {
    const stats = await stack.request("GET", "/v1/notifications/stats", undefined, { authorization: `ApiKey ${env.key}` });
    expect(stats.status).toBe(200);
    expect(stats.body).toEqual({ data: { weeklySent: 25, monthlySent: 25 } });
    const graph = await stack.request<Data<{ _id: string; count: number; templates: string[]; channels: string[] }[]>>(
      "GET",
      "/v1/notifications/graph/stats?days=7",
      undefined,
      { authorization: `ApiKey ${env.key}` },
    );
    expect(graph.status).toBe(200);
    expect(graph.body.data).toEqual([{ _id: new Date().toISOString().slice(0, 10), count: 25, templates: expect.any(Array), channels: ["in_app"] }]);
    expect(graph.body.data[0]!.templates.sort()).toEqual([WORKFLOW_A, WORKFLOW_B]);
  });

  it("answers a bad query with a 422 naming the field, and an unknown notification with a 404", async () => {
    const bad = [
      ["/v1/notifications?limit=51", "limit"],
      ["/v1/notifications?limit=0", "limit"],
      ["/v1/notifications?page=-1", "page"],
      ["/v1/notifications?page=x", "page"],
      ["/v1/notifications?channels=fax", "channels[0]"],
      [`/v1/notifications?${Array.from({ length: 101 }, (_, index) => `subscriberIds=s${index}`).join("&")}`, "subscriberIds"],
      [`/v1/notifications?search=${"x".repeat(256)}`, "search"],
      ["/v1/notifications/not-an-id", "notificationId"],
      ["/v1/notifications/graph/stats?days=0", "days"],
      ["/v1/notifications/graph/stats?days=367", "days"],
    ] as const;
    for (const [path, field] of bad) {
      const reply = await stack.request<{ statusCode: number; errors: Record<string, unknown> }>("GET", path, undefined, {
        authorization: `ApiKey ${env.key}`,
      });
      expect(reply.status, path).toBe(422);
      expect(reply.body.statusCode, path).toBe(422);
      expect(Object.keys(reply.body.errors), path).toEqual([field]);
    }
    await expect(env.novu.notifications.list({ limit: 101 })).rejects.toBeInstanceOf(errors.ValidationErrorDto);
    await expect(env.novu.notifications.retrieve("64b7f0c2a1b2c3d4e5f6ffff")).rejects.toMatchObject({ statusCode: 404 });
  });
});

describe("another environment's notifications", () => {
  it("are never listed, found or counted", async () => {
    const mine = await environment("isolated-mine");
    const theirs = await environment("isolated-theirs");
    const shared = newMessage(theirs.first);
    await theirs.seed.create([shared]);
    await mine.seed.create([newMessage(mine.first, { transactionId: shared.transactionId })]);
    const [theirNotification] = (await theirs.novu.notifications.list({})).result.data;
    expect(theirNotification?.transactionId).toBe(shared.transactionId);

    const listed = (await mine.novu.notifications.list({ transactionId: shared.transactionId })).result.data;
    expect(listed).toHaveLength(1);
    expect(listed[0]!.id).not.toBe(theirNotification!.id);
    expect(listed[0]!.environmentId).not.toBe(theirNotification!.environmentId);
    expect((await mine.novu.notifications.list({ subscriberIds: [theirs.first.subscriberId] })).result.data).toEqual([]);
    await expect(mine.novu.notifications.retrieve(theirNotification!.id!)).rejects.toMatchObject({ statusCode: 404 });
    expect((await theirs.novu.notifications.retrieve(theirNotification!.id!)).result.id).toBe(theirNotification!.id);
    const stats = await stack.request<Data<{ weeklySent: number }>>("GET", "/v1/notifications/stats", undefined, { authorization: `ApiKey ${mine.key}` });
    expect(stats.body.data.weeklySent).toBe(1);
  });
});

describe("a triggered notification delivered by email", () => {
  it("shows its jobs and the execution details of its email send", async () => {
    await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      identifier: "activity-sink",
      credentials: sinkCredentials(sink, { senderName: "Notify" }),
    });
    const workflow = await createWorkflow(stack, "Activity receipt", [
      { template: { type: "in_app", content: "You paid {{amount}}" } },
      { template: { type: "email", subject: "Receipt", content: [{ type: "text", content: "You paid {{amount}}." }] } },
    ]);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "activity-ada", firstName: "Ada", email: "ada@activity.test" });
    const novu = sdkOf(stack.key);
    const triggered = await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to: "activity-ada",
      payload: { amount: "12 €" },
      transactionId: "activity-mail-1",
    });
    expect(triggered.status).toBe(201);
    await settledMessage(stack, "activity-mail-1", "email", delivered);
    expect(sink.received.filter((mail) => mail.envelope.to.includes("ada@activity.test"))).toHaveLength(1);

    const [listed] = (await novu.notifications.list({ transactionId: "activity-mail-1" })).result.data;
    const notification = (await novu.notifications.retrieve(listed!.id!)).result;
    expect(notification).toMatchObject({
      id: listed!.id,
      transactionId: "activity-mail-1",
      subscriber: { subscriberId: "activity-ada", firstName: "Ada", email: "ada@activity.test" },
      template: { name: "Activity receipt", triggers: [{ type: "event", identifier: workflow }] },
      payload: { amount: "12 €" },
    });
    expect(notification.jobs?.map((job) => [job.type, job.status])).toEqual([
      ["in_app", "completed"],
      ["email", "completed"],
    ]);
    const email = notification.jobs![1]!;
    expect(email).toMatchObject({ providerId: "nodemailer", step: { active: true, filters: [] } });
    expect(email.executionDetails).toEqual([expect.objectContaining({ status: "Success", providerId: "nodemailer", isRetry: false, source: "Internal" })]);
    // The same attempts as GET /v1/execution-details answers for the notification.
    const details = await stack.request<Data<{ _id: string }[]>>("GET", `/v1/execution-details?notificationId=${notification.id}&subscriberId=activity-ada`);
    expect(email.executionDetails.map((detail) => detail.id)).toEqual(details.body.data.map((detail) => detail._id));
    expect(listed!.jobs).toEqual(notification.jobs);
    // A subscriber that does not exist is not found, as Novu answers it.
    expect(await stack.request("GET", `/v1/execution-details?notificationId=${notification.id}&subscriberId=nobody`)).toMatchObject({
      status: 404,
      body: { message: "Subscriber not found for id nobody" },
    });
  });

  it("shows a push step sent to several devices as one job with every device's attempts, completed when any got it", async () => {
    // Expo answers a ticket per message: one of the devices is no longer registered.
    const expo = await startReceiver((request) => ({
      body: {
        data: (JSON.parse(request.body) as { to: string }[]).map(({ to }) =>
          to === "stale-device" ? { status: "error", message: "not registered", details: { error: "DeviceNotRegistered" } } : { status: "ok", id: "ticket" },
        ),
      },
    }));
    try {
      await createIntegration(stack, { providerId: "expo", channel: "push", identifier: "activity-expo", credentials: { baseUrl: expo.url } });
      const workflow = await createWorkflow(stack, "Activity push", [{ template: { type: "push", title: "Paid", content: "You paid" } }]);
      await stack.request("POST", "/v1/subscribers", { subscriberId: "activity-phones" });
      await stack.request("PUT", "/v1/subscribers/activity-phones/credentials", {
        providerId: "expo",
        credentials: { deviceTokens: ["stale-device", "good-device"] },
      });
      await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "activity-phones", transactionId: "activity-push-1" });
      await eventually(async () => {
        const messages = await messagesOf(stack, "activity-push-1", "push");
        return messages.length === 2 && messages.every((message) => message.status === "error" || delivered(message)) ? messages : undefined;
      });
      const [listed] = (await sdkOf(stack.key).notifications.list({ transactionId: "activity-push-1" })).result.data;
      expect(listed!.jobs?.map((job) => [job.type, job.status, job.providerId])).toEqual([["push", "completed", "expo"]]);
      expect(listed!.jobs![0]!.executionDetails.map((detail) => detail.status).sort()).toEqual(["Failed", "Success"]);
    } finally {
      await expo.close();
    }
  });
});
