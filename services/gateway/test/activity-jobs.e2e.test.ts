import { Novu } from "@novu/api";
import type { ActivityNotificationResponseDto } from "@novu/api/models/components/index.js";
import { createPool } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// The jobs of delay and digest steps, and of steps their conditions skipped, as Novu's activity
// shows them: read through @novu/api 3.19.1, which checks every job it is given.

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
});
afterAll(async () => {
  await stack?.stop();
});

const WAIT_S = 2;
const inApp = (content: string, extra: Record<string, unknown> = {}) => ({ template: { type: "in_app", content }, ...extra });

async function trigger(name: string, to: string, transactionId: string, payload: Record<string, unknown> = {}) {
  const reply = await stack.request("POST", "/v1/events/trigger", { name, to, transactionId, payload });
  expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
}

/** The notification of a transaction, once `ready` says it is as the test waits for it. */
async function notificationOf(transactionId: string, ready: (notification: ActivityNotificationResponseDto) => boolean, timeoutMs = 15_000) {
  return eventually(async () => {
    const [notification] = (await novu.notifications.list({ transactionId })).result.data;
    return notification && ready(notification) ? notification : undefined;
  }, timeoutMs);
}

const summary = (notification: ActivityNotificationResponseDto) =>
  notification.jobs?.map((job) => ({ type: job.type, status: job.status, details: job.executionDetails.map((detail) => `${detail.status} ${detail.detail}`) }));

describe("a delay step's job", () => {
  it("waits delayed with Novu's details, then completes when the delay ends, between the jobs of the steps around it", async () => {
    const name = await createWorkflow(stack, "Activity delay", [
      inApp("Before"),
      { template: { type: "delay" }, metadata: { type: "regular", amount: WAIT_S, unit: "seconds" } },
      inApp("After"),
    ]);
    await trigger(name, "aj-delay", "aj-delay-1", { n: 1 });

    const waiting = await notificationOf("aj-delay-1", (notification) => (notification.jobs?.length ?? 0) >= 2);
    expect(waiting.channels).toEqual(["in_app", "delay"]);
    // The step behind the delay shows its job pending, as Novu's made at the trigger.
    expect(summary(waiting)).toEqual([
      { type: "in_app", status: "completed", details: [] },
      { type: "delay", status: "delayed", details: ["Pending Step delayed", "Pending Step queued"] },
      { type: "in_app", status: "pending", details: [] },
    ]);
    const delayJob = waiting.jobs![1]!;
    // As Novu stores a delay's: with the digest key it lacks.
    expect(delayJob.digest).toEqual({ type: "regular", amount: WAIT_S, unit: "seconds", digestKey: "No-Key-Provided", events: [] });
    expect(delayJob.providerId).toBe("novu");
    expect(delayJob.step).toMatchObject({ active: true });
    const raw = JSON.parse(delayJob.executionDetails[0]!.raw!) as { delay: number };
    expect(raw.delay).toBeGreaterThan(0);
    expect(raw.delay).toBeLessThanOrEqual(WAIT_S * 1000);

    // The run's messages are written before its step jobs change: waited for until both are.
    const done = await notificationOf("aj-delay-1", (notification) => notification.jobs?.length === 3 && notification.jobs[1]!.status === "completed");
    expect(summary(done)).toEqual([
      { type: "in_app", status: "completed", details: [] },
      { type: "delay", status: "completed", details: ["Pending Step delayed", "Pending Step queued", "Success Delay is finished"] },
      { type: "in_app", status: "completed", details: [] },
    ]);
    expect(done.channels).toEqual(["in_app", "delay"]);

    // The same through GET /v1/notifications/:id (the SDK keeps no payload: it reads one as {}) and the subscriber's execution details.
    const one = await novu.notifications.retrieve(done.id!);
    expect(summary(one.result)).toEqual(summary(done));
    const json = await stack.request<Data<{ jobs: { payload: unknown }[] }>>("GET", `/v1/notifications/${done.id}`);
    expect(json.body.data.jobs.map((job) => job.payload)).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }]);
    const details = await stack.request<Data<{ _jobId: string; channel: string; detail: string; source: string; _messageId?: string }[]>>(
      "GET",
      `/v1/execution-details?notificationId=${done.id}&subscriberId=aj-delay`,
    );
    expect(details.status).toBe(200);
    expect(details.body.data.map((detail) => [detail.channel, detail.detail, detail.source, detail._jobId, detail._messageId])).toEqual([
      ["delay", "Step delayed", "Internal", delayJob.id, undefined],
      ["delay", "Step queued", "Internal", delayJob.id, undefined],
      ["delay", "Delay is finished", "Internal", delayJob.id, undefined],
    ]);
  });

  it("ends canceled when its trigger is canceled during the delay, with the jobs of the steps behind it", async () => {
    const name = await createWorkflow(stack, "Activity canceled delay", [
      { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "hours" } },
      inApp("Never"),
      { template: { type: "email", subject: "Never", content: "Never" } },
      { template: { type: "sms", content: "Never" }, active: false },
    ]);
    await trigger(name, "aj-cancel", "aj-cancel-1");
    const waiting = await notificationOf("aj-cancel-1", (notification) => notification.jobs?.[0]?.status === "delayed");
    // Each active step behind the delay has a job of its own, pending, with its step and Novu's provider of its channel.
    expect(summary(waiting)).toEqual([
      { type: "delay", status: "delayed", details: ["Pending Step delayed", "Pending Step queued"] },
      { type: "in_app", status: "pending", details: [] },
      { type: "email", status: "pending", details: [] },
    ]);
    const workflow = await stack.request<Data<{ steps: { _id: string }[] }>>("GET", `/v1/workflows/${waiting.templateId}`);
    const stepIds = workflow.body.data.steps.map((step) => step._id);
    expect(waiting.jobs!.map((job) => job.step.id)).toEqual(stepIds.slice(0, 3));
    expect(waiting.jobs!.map((job) => job.providerId)).toEqual(["novu", "novu", "novu-email"]);
    const ids = waiting.jobs!.map((job) => job.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{24}$/);
    // The same ids at every read.
    expect((await novu.notifications.retrieve(waiting.id!)).result.jobs?.map((job) => job.id)).toEqual(ids);
    // The workflow changes while the run waits: a step added behind the others. The jobs are still
    // those of the workflow the run was triggered with, as Novu made them at the trigger.
    const { steps } = (await stack.request<Data<{ steps: Record<string, unknown>[] }>>("GET", `/v1/workflows/${waiting.templateId}`)).body.data;
    const edited = await stack.request("PUT", `/v1/workflows/${waiting.templateId}`, { steps: [...steps, { template: { type: "chat", content: "New" } }] });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect((await novu.notifications.retrieve(waiting.id!)).result.jobs?.map((job) => job.type)).toEqual(["delay", "in_app", "email"]);

    expect((await stack.request("DELETE", "/v1/events/trigger/aj-cancel-1")).body).toEqual({ data: true });
    const canceled = await notificationOf("aj-cancel-1", (notification) => notification.jobs?.[0]?.status !== "delayed");
    expect(summary(canceled)).toEqual([
      { type: "delay", status: "canceled", details: ["Pending Step delayed", "Pending Step queued"] },
      { type: "in_app", status: "canceled", details: [] },
      { type: "email", status: "canceled", details: [] },
    ]);
    expect(canceled.jobs!.map((job) => job.id)).toEqual(ids);
  });

  it("ends a merged digest job canceled with its trigger, and leaves the digest's other events waiting", async () => {
    const name = await createWorkflow(stack, "Activity canceled digest", [
      { template: { type: "digest" }, metadata: { type: "regular", amount: 1, unit: "hours" } },
      inApp("Later"),
    ]);
    await trigger(name, "aj-cancel-digest", "aj-cancel-digest-1");
    await notificationOf("aj-cancel-digest-1", (notification) => notification.jobs?.[0]?.status === "delayed");
    await trigger(name, "aj-cancel-digest", "aj-cancel-digest-2");
    const merged = await notificationOf("aj-cancel-digest-2", (notification) => notification.jobs?.[0]?.status === "merged");
    expect(merged.jobs?.map((job) => job.status)).toEqual(["merged", "merged"]);
    expect((await stack.request("DELETE", "/v1/events/trigger/aj-cancel-digest-2")).body).toEqual({ data: true });
    const canceled = await notificationOf("aj-cancel-digest-2", (notification) => notification.jobs?.[0]?.status === "canceled");
    expect(canceled.jobs?.map((job) => job.status)).toEqual(["canceled", "canceled"]);
    const opener = await notificationOf("aj-cancel-digest-1", () => true);
    expect(opener.jobs?.map((job) => job.status)).toEqual(["delayed", "pending"]);
  });

  it("passes to the next event's job, delayed again with the steps behind it pending, when the trigger that opened it is canceled", async () => {
    const name = await createWorkflow(stack, "Activity passed digest", [
      { template: { type: "digest" }, metadata: { type: "regular", amount: 1, unit: "hours" } },
      inApp("Later"),
    ]);
    await trigger(name, "aj-pass-digest", "aj-pass-digest-1");
    await notificationOf("aj-pass-digest-1", (notification) => notification.jobs?.[0]?.status === "delayed");
    await trigger(name, "aj-pass-digest", "aj-pass-digest-2");
    await trigger(name, "aj-pass-digest", "aj-pass-digest-3");
    // Both merged jobs written before the cancel: the resume changes only the jobs written already.
    for (const transactionId of ["aj-pass-digest-2", "aj-pass-digest-3"]) {
      await notificationOf(transactionId, (notification) => notification.jobs?.[0]?.status === "merged");
    }
    expect((await stack.request("DELETE", "/v1/events/trigger/aj-pass-digest-1")).body).toEqual({ data: true });
    const opener = await notificationOf("aj-pass-digest-1", (notification) => notification.jobs?.[0]?.status === "canceled");
    expect(opener.jobs?.map((job) => job.status)).toEqual(["canceled", "canceled"]);
    // As Novu makes the next merged job the digest's: the second event's, not the third's.
    const next = await notificationOf("aj-pass-digest-2", () => true);
    expect(next.jobs?.map((job) => job.status)).toEqual(["delayed", "pending"]);
    const third = await notificationOf("aj-pass-digest-3", () => true);
    expect(third.jobs?.map((job) => job.status)).toEqual(["merged", "merged"]);

    // The cancel's resume lost (as when the messages service failed after the cancel committed):
    // the cancel made again answers the digest it passed, and the job waits again.
    const pool = createPool(stack.database.url, 1);
    try {
      const lost = await pool.query(
        `UPDATE messages.step_jobs s SET status = 'merged' FROM messages.notifications n
          WHERE n.id = s.notification_id AND n.transaction_id = 'aj-pass-digest-2' AND s.type = 'digest'`,
      );
      expect(lost.rowCount).toBe(1);
    } finally {
      await pool.end();
    }
    expect((await notificationOf("aj-pass-digest-2", () => true)).jobs?.map((job) => job.status)).toEqual(["merged", "merged"]);
    expect((await stack.request("DELETE", "/v1/events/trigger/aj-pass-digest-1")).body).toEqual({ data: false });
    expect((await notificationOf("aj-pass-digest-2", () => true)).jobs?.map((job) => job.status)).toEqual(["delayed", "pending"]);
  });

  it("fails with Novu's 'Invalid delay configuration' when its date has passed, and the run stops there", async () => {
    const name = await createWorkflow(stack, "Activity bad delay", [
      { template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "sendAt" } },
      inApp("Never"),
    ]);
    await trigger(name, "aj-bad-delay", "aj-bad-delay-1", { sendAt: "2020-01-01T00:00:00Z" });
    const failed = await notificationOf("aj-bad-delay-1", (notification) => (notification.jobs?.length ?? 0) > 0);
    expect(summary(failed)).toEqual([{ type: "delay", status: "failed", details: ["Failed Invalid delay configuration"] }]);
    expect(JSON.parse(failed.jobs![0]!.executionDetails[0]!.raw!)).toEqual({ error: expect.stringContaining("future") });
    // A scheduled delay shows no digest metadata, as Novu's.
    expect(failed.jobs![0]!.digest).toBeUndefined();
  });
});

describe("a digest step's jobs", () => {
  it("shows the opening event's job digesting then triggering the events, and the others merged into it", async () => {
    const name = await createWorkflow(stack, "Activity digest", [
      { template: { type: "digest" }, metadata: { type: "regular", amount: WAIT_S, unit: "seconds", digestKey: "postId" } },
      inApp("{{step.total_count}} events"),
    ]);
    for (const n of [1, 2, 3]) await trigger(name, "aj-digest", `aj-digest-${n}`, { n, postId: "p1" });

    const jobsOf = async (transactionId: string) => notificationOf(transactionId, (notification) => (notification.jobs?.length ?? 0) > 0);
    const notifications = await Promise.all([1, 2, 3].map((n) => jobsOf(`aj-digest-${n}`)));
    // The worker may take the three events in any order: one opened the digest, the others joined it.
    const opener = notifications.find((notification) => notification.jobs![0]!.status !== "merged")!;
    const merged = notifications.filter((notification) => notification !== opener);
    expect(merged).toHaveLength(2);
    for (const notification of merged) {
      // Its workflow's step types, as Novu's, though only the digest's job exists.
      expect(notification.channels).toEqual(["digest", "in_app"]);
      // Its later steps merged with it, as Novu merges the follower's jobs.
      expect(summary(notification)).toEqual([
        { type: "digest", status: "merged", details: ["Success Digest was merged with other digest", "Pending Step queued"] },
        { type: "in_app", status: "merged", details: [] },
      ]);
      expect(notification.jobs![0]!.digest).toMatchObject({ type: "regular", amount: WAIT_S, unit: "seconds", digestKey: "postId" });
    }

    const done = await notificationOf(opener.transactionId, (notification) => notification.jobs?.length === 2 && notification.jobs[0]!.status === "completed");
    expect(done.channels).toEqual(["digest", "in_app"]);
    expect(summary(done)).toEqual([
      {
        type: "digest",
        status: "completed",
        details: ["Pending Step digested", "Pending Step queued", "Pending Start digesting", "Success Digest triggered events"],
      },
      { type: "in_app", status: "completed", details: [] },
    ]);
    const digestJob = done.jobs![0]!;
    const events = digestJob.digest?.events?.map((event) => event["n"]).sort();
    expect(events).toEqual([1, 2, 3]);
    expect(JSON.parse(digestJob.executionDetails.at(-1)!.raw!)).toHaveLength(3);
  });
});

describe("what a notification keeps of its trigger and workflow", () => {
  it("shows its severity, critical flag, tags and the topics that reached its subscriber, and is found by severity and topic", async () => {
    const created = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", {
      name: "Activity traits",
      active: true,
      critical: true,
      tags: ["billing"],
      steps: [inApp("Hi")],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const name = created.body.data.triggers[0].identifier;
    for (const subscriberId of ["aj-traits-named", "aj-traits-member"]) {
      expect((await stack.request("POST", "/v1/subscribers", { subscriberId })).status).toBe(201);
    }
    const topic = await stack.request<Data<{ _id: string }>>("POST", "/v1/topics", { key: "aj-traits-topic", name: "Traits" });
    expect(topic.status, JSON.stringify(topic.body)).toBe(201);
    const added = await stack.request("POST", "/v1/topics/aj-traits-topic/subscribers", { subscribers: ["aj-traits-named", "aj-traits-member"] });
    expect(added.status, JSON.stringify(added.body)).toBeLessThan(300);
    const triggered = await stack.request("POST", "/v1/events/trigger", {
      name,
      to: [{ type: "Topic", topicKey: "aj-traits-topic" }, "aj-traits-named"],
      transactionId: "aj-traits-1",
      overrides: { severity: "high" },
    });
    expect(triggered.status, JSON.stringify(triggered.body)).toBe(201);
    const listed = await eventually(async () => {
      const { data } = (await novu.notifications.list({ transactionId: "aj-traits-1" })).result;
      return data.length === 2 ? data : undefined;
    });
    const of = (subscriberId: string) => listed.find((notification) => notification.subscriber?.subscriberId === subscriberId)!;
    // As Novu's: the trigger's severity, the workflow's flag and tags; the trigger's topics only
    // for the subscriber reached through them, not for one it named.
    expect(of("aj-traits-member")).toMatchObject({
      severity: "high",
      critical: true,
      tags: ["billing"],
      topics: [{ topicId: topic.body.data._id, topicKey: "aj-traits-topic" }],
    });
    expect(of("aj-traits-named")).toMatchObject({ severity: "high", critical: true, tags: ["billing"], topics: [] });

    const found = async (request: Parameters<typeof novu.notifications.list>[0]) =>
      (await novu.notifications.list({ transactionId: "aj-traits-1", ...request })).result.data.map((notification) => notification.subscriber?.subscriberId);
    expect(await found({ topicKey: "aj-traits-topic" })).toEqual(["aj-traits-member"]);
    expect(await found({ topicKey: "no-such-topic" })).toEqual([]);
    expect((await found({ severity: ["high", "low"] })).sort()).toEqual(["aj-traits-member", "aj-traits-named"]);
    expect(await found({ severity: ["low"] })).toEqual([]);
    expect((await stack.request("GET", "/v1/notifications?severity=urgent")).status).toBe(422);

    // A notification its run's first step job makes (a delay's) keeps them too.
    const delayedName = await createWorkflow(stack, "Activity traits delayed", [
      { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "hours" } },
      inApp("Later"),
    ]);
    const delayedTrigger = await stack.request("POST", "/v1/events/trigger", {
      name: delayedName,
      to: [{ type: "Topic", topicKey: "aj-traits-topic" }],
      transactionId: "aj-traits-2",
      overrides: { severity: "low" },
    });
    expect(delayedTrigger.status, JSON.stringify(delayedTrigger.body)).toBe(201);
    const waiting = await eventually(async () => {
      const { data } = (await novu.notifications.list({ transactionId: "aj-traits-2" })).result;
      return data.length === 2 && data.every((notification) => notification.jobs?.[0]?.status === "delayed") ? data : undefined;
    });
    for (const notification of waiting) {
      expect(notification).toMatchObject({ severity: "low", critical: false, tags: [], topics: [{ topicKey: "aj-traits-topic" }] });
    }
    expect((await stack.request("DELETE", "/v1/events/trigger/aj-traits-2")).body).toEqual({ data: true });
  });
});

describe("a step its conditions skip", () => {
  it("shows its job canceled with Novu's detail, in a notification of its own even when nothing was sent", async () => {
    const pro = [{ isNegated: false, type: "GROUP", value: "AND", children: [{ field: "plan", value: "pro", operator: "EQUAL", on: "payload" }] }];
    const name = await createWorkflow(stack, "Activity skipped", [inApp("Pro only", { filters: pro })]);
    await trigger(name, "aj-skipped", "aj-skipped-1", { plan: "free" });
    const skipped = await notificationOf("aj-skipped-1", (notification) => (notification.jobs?.length ?? 0) > 0);
    expect(summary(skipped)).toEqual([
      { type: "in_app", status: "canceled", details: ["Pending Step queued", "Failed Step was skipped based on steps conditions"] },
    ]);
    expect(skipped.jobs![0]!.providerId).toBe("novu");
    // Found by its step's channel, though no message was written on it.
    const byChannel = async (channel: "in_app" | "email") =>
      (await stack.request<Data<{ _id: string }[]>>("GET", `/v1/notifications?transactionId=aj-skipped-1&channels=${channel}`)).body.data.map(
        (found) => found._id,
      );
    expect(await byChannel("in_app")).toEqual([skipped.id]);
    expect(await byChannel("email")).toEqual([]);
  });
});

describe("a channel step preferences turn off", () => {
  it("shows its job canceled, naming the layer that turned it off, as Novu's", async () => {
    const reply = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", {
      name: "Activity preferences",
      active: true,
      preferenceSettings: { sms: false },
      steps: [inApp("Hi"), { template: { type: "email", subject: "Hi", content: "Hi" } }, { template: { type: "sms", content: "Hi" } }],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const name = reply.body.data.triggers[0].identifier;
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "aj-prefs", email: "prefs@example.com", phone: "+15555550100" })).status).toBe(201);
    expect((await stack.request("PATCH", "/v2/subscribers/aj-prefs/preferences", { channels: { email: false } })).status).toBe(200);

    await trigger(name, "aj-prefs", "aj-prefs-1");
    const filtered = await notificationOf("aj-prefs-1", (notification) => (notification.jobs?.length ?? 0) >= 3);
    expect(summary(filtered)).toEqual([
      { type: "in_app", status: "completed", details: [] },
      { type: "email", status: "canceled", details: ["Pending Step queued", "Success Step filtered by subscriber global preferences"] },
      { type: "sms", status: "canceled", details: ["Pending Step queued", "Success Step filtered by workflow preferences"] },
    ]);
    expect(JSON.parse(filtered.jobs![1]!.executionDetails[1]!.raw!)).toEqual({
      channels: { in_app: true, email: false, sms: false, chat: true, push: true },
    });
    // A channel with no active integration at the trigger: its job shows Novu's own provider.
    expect(filtered.jobs!.map((job) => job.providerId)).toEqual(["novu", "novu-email", "novu-sms"]);

    // Jobs carry the provider of the environment's first active integration of their channel as
    // it was at the trigger, as Novu's do: the steps filtered out, and those behind a delay.
    const integration = (body: Record<string, unknown>) =>
      stack.request("POST", "/v1/integrations", { credentials: { apiKey: "k", from: "a@example.com" }, ...body });
    expect((await integration({ providerId: "twilio", channel: "sms", active: false })).status).toBe(201);
    expect((await integration({ providerId: "sendgrid", channel: "email", active: true })).status).toBe(201);
    expect((await integration({ providerId: "mailgun", channel: "email", active: true })).status).toBe(201);
    expect((await novu.notifications.retrieve(filtered.id!)).result.jobs?.map((job) => job.providerId)).toEqual(["novu", "novu-email", "novu-sms"]);
    await trigger(name, "aj-prefs", "aj-prefs-2");
    const later = await notificationOf("aj-prefs-2", (notification) => (notification.jobs?.length ?? 0) >= 3);
    expect(later.jobs!.map((job) => job.providerId)).toEqual(["novu", "sendgrid", "novu-sms"]);
    const delayed = await createWorkflow(stack, "Activity providers later", [
      { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "hours" } },
      { template: { type: "email", subject: "Later", content: "Later" } },
      { template: { type: "sms", content: "Later" } },
    ]);
    await trigger(delayed, "aj-prefs", "aj-prefs-3");
    const waiting = await notificationOf("aj-prefs-3", (notification) => notification.jobs?.[0]?.status === "delayed");
    expect(waiting.jobs!.map((job) => [job.type, job.status, job.providerId])).toEqual([
      ["delay", "delayed", "novu"],
      ["email", "pending", "sendgrid"],
      ["sms", "pending", "novu-sms"],
    ]);
    expect((await stack.request("DELETE", "/v1/events/trigger/aj-prefs-3")).body).toEqual({ data: true });
  });
});
