import { Novu, SeverityLevelEnum, type Preference } from "@novu/js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { environmentIdentifier, openInbox, openSession } from "./inbox-helpers.js";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

let stack: Stack;

interface Workflow {
  _id: string;
  triggers: { identifier: string }[];
}

let news: Workflow;
let alerts: Workflow;
let security: Workflow;

const step = (type: string) =>
  type === "email"
    ? { template: { type, subject: "Hello", content: "Hi" } }
    : { template: { type, ...(type === "push" ? { title: "Hello" } : {}), content: "Hi" } };

async function workflow(body: Record<string, unknown>): Promise<Workflow> {
  const reply = await stack.request<Data<Workflow>>("POST", "/v1/workflows", { active: true, ...body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.data;
}

beforeAll(async () => {
  stack = await startStack({ worker: false });
  news = await workflow({ name: "News", tags: ["product"], steps: [step("in_app"), step("email")] });
  alerts = await workflow({ name: "Alerts", tags: ["ops", "billing"], preferenceSettings: { sms: false }, steps: [step("sms"), step("push")] });
  security = await workflow({ name: "Security", critical: true, steps: [step("email"), step("chat")] });
});
afterAll(async () => {
  await stack?.stop();
});

/** What the server-side API answers for the subscriber: the same store the Inbox writes. */
async function serverSide(subscriberId: string): Promise<Json> {
  const reply = await stack.request("GET", `/v2/subscribers/${subscriberId}/preferences`);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.data;
}

const serverSideOf = (preferences: Json, target: Workflow) =>
  preferences.workflows.find((preference) => String(preference.workflow.identifier) === target.triggers[0]!.identifier)!;

/** The Inbox routes over plain HTTP with a session token, for what the client would not send. */
const asInbox = (token: string) => (method: string, path: string, body?: unknown) => stack.request(method, path, body, { authorization: `Bearer ${token}` });

function data<T>(result: { data?: T; error?: unknown }): T {
  expect(result.error).toBeUndefined();
  return result.data!;
}

const byWorkflow = (preferences: readonly Preference[], target: Workflow) => preferences.find((preference) => preference.workflow?.id === target._id)!;

describe("Inbox preferences through @novu/js", () => {
  it("lists the global preference and one per non-critical workflow, filtered by tags and severity", async () => {
    const novu = await openInbox(stack, "pref-list");
    const listed = data(await novu.preferences.list());
    expect(listed.map((preference) => preference.level)).toEqual(["global", "template", "template"]);
    expect(listed[0]).toMatchObject({ level: "global", enabled: true, channels: { in_app: true, email: true, sms: true, push: true } });
    expect(byWorkflow(listed, news)).toMatchObject({
      level: "template",
      enabled: true,
      channels: { in_app: true, email: true },
      workflow: { id: news._id, identifier: "news", name: "News", critical: false, tags: ["product"], severity: "none" },
    });
    expect(byWorkflow(listed, alerts).channels).toEqual({ sms: false, push: true });
    const billing = data(await novu.preferences.list({ tags: ["billing"] }));
    expect(billing.map((preference) => preference.workflow?.identifier ?? "global")).toEqual(["global", "alerts"]);
    const high = data(await novu.preferences.list({ severity: SeverityLevelEnum.HIGH }));
    expect(high.map((preference) => preference.level)).toEqual(["global"]);
    const none = data(await novu.preferences.list({ severity: [SeverityLevelEnum.NONE, SeverityLevelEnum.HIGH], tags: ["product", "ops"] }));
    expect(none).toHaveLength(3);
    // criticality travels in the query; the client's cache keys ignore it, so this is asked directly.
    const { token } = await openSession(stack, "pref-list");
    const all = await asInbox(token)("GET", "/v1/inbox/preferences?criticality=all");
    expect(all.status).toBe(200);
    expect(all.body.data.map((preference: Json) => preference.workflow?.identifier ?? "global")).toEqual(["global", "news", "alerts", "security"]);
    expect(all.body.data[3].workflow).toMatchObject({ id: security._id, critical: true });
  });

  it("updates a workflow's channels by its database id, visible on the server-side API and back", async () => {
    const novu = await openInbox(stack, "pref-workflow");
    const listed = data(await novu.preferences.list());
    const updated = data(await byWorkflow(listed, news).update({ channels: { email: false } }));
    expect(updated).toMatchObject({ level: "template", channels: { in_app: true, email: false }, workflow: { id: news._id, identifier: "news" } });
    const stored = serverSideOf(await serverSide("pref-workflow"), news);
    expect(stored.channels).toEqual({ in_app: true, email: false });
    expect(stored.overrides).toContainEqual({ channel: "email", source: "subscriber" });
    // And a change made server-side is what the Inbox reads next.
    const patched = await stack.request("PATCH", "/v2/subscribers/pref-workflow/preferences", { workflowId: alerts._id, channels: { push: false } });
    expect(patched.status).toBe(200);
    const fresh = await openInbox(stack, "pref-workflow");
    expect(byWorkflow(data(await fresh.preferences.list()), alerts).channels).toEqual({ sms: false, push: false });
    // The identifier is accepted where the client sends the id.
    const { token } = await openSession(stack, "pref-workflow");
    const byIdentifier = await asInbox(token)("PATCH", "/v1/inbox/preferences/news", { in_app: false });
    expect(byIdentifier.status).toBe(200);
    expect(byIdentifier.body.data).toMatchObject({ level: "template", channels: { in_app: false, email: false }, workflow: { id: news._id } });
  });

  it("updates the global preference, which wins over earlier per-workflow choices of the same channel", async () => {
    const novu = await openInbox(stack, "pref-global");
    const listed = data(await novu.preferences.list());
    data(await byWorkflow(listed, alerts).update({ channels: { push: true } }));
    const global = data(await listed[0]!.update({ channels: { push: false, sms: true } }));
    expect(global).toMatchObject({ level: "global", enabled: true, channels: { push: false, sms: true, in_app: true, email: true } });
    const stored = await serverSide("pref-global");
    expect(stored.global.channels).toMatchObject({ push: false, sms: true });
    expect(serverSideOf(stored, alerts).channels).toEqual({ sms: true, push: false });
  });

  it("updates several workflows at once with bulkUpdate", async () => {
    const novu = await openInbox(stack, "pref-bulk");
    const listed = data(await novu.preferences.list());
    const updated = data(
      await novu.preferences.bulkUpdate([
        { preference: byWorkflow(listed, news), channels: { in_app: false } },
        { preference: byWorkflow(listed, alerts), channels: { sms: true } },
      ]),
    );
    expect(updated.map((preference) => [preference.workflow?.id, preference.channels])).toEqual([
      [news._id, { in_app: false, email: true }],
      [alerts._id, { sms: true, push: true }],
    ]);
    const stored = await serverSide("pref-bulk");
    expect(serverSideOf(stored, news).channels).toEqual({ in_app: false, email: true });
    expect(serverSideOf(stored, alerts).channels).toEqual({ sms: true, push: true });
    // Identifiers work as well as ids.
    const byIdentifier = data(await novu.preferences.bulkUpdate([{ workflowId: "alerts", channels: { push: false } }]));
    expect(byIdentifier.map((preference) => [preference.workflow?.id, preference.channels])).toEqual([[alerts._id, { sms: true, push: false }]]);
  });

  it("stores the weekly schedule, answers it in the global preference, and shows it server-side", async () => {
    const novu = await openInbox(stack, "pref-schedule");
    const weeklySchedule = {
      monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] },
      saturday: { isEnabled: false, hours: [] },
    };
    const schedule = data(await novu.preferences.schedule.update({ isEnabled: true, weeklySchedule }));
    expect(schedule).toMatchObject({ isEnabled: true, weeklySchedule });
    const fresh = await openInbox(stack, "pref-schedule");
    expect(data(await fresh.preferences.schedule.get())).toMatchObject({ isEnabled: true, weeklySchedule });
    expect(data(await fresh.preferences.list())[0]!.schedule).toMatchObject({ isEnabled: true, weeklySchedule });
    expect((await serverSide("pref-schedule")).global.schedule).toEqual({ isEnabled: true, weeklySchedule });
    // A schedule is replaced whole: the client's Schedule instance sends its days along.
    const off = data(await data(await fresh.preferences.schedule.get()).update({ isEnabled: false }));
    expect(off).toMatchObject({ isEnabled: false, weeklySchedule });
    expect((await serverSide("pref-schedule")).global.schedule).toEqual({ isEnabled: false, weeklySchedule });
  });

  it("applies the session's defaultSchedule only while the subscriber has none", async () => {
    const start = async (isEnabled: boolean) => {
      const novu = new Novu({
        applicationIdentifier: await environmentIdentifier(stack),
        subscriber: { subscriberId: "pref-default" },
        apiUrl: stack.url,
        socketUrl: stack.url,
        defaultSchedule: { isEnabled, weeklySchedule: { friday: { isEnabled: true, hours: [{ start: "10:00", end: "12:00" }] } } },
      });
      return data(await novu.preferences.schedule.get());
    };
    expect(await start(true)).toMatchObject({ isEnabled: true, weeklySchedule: { friday: { isEnabled: true } } });
    expect(await start(false)).toMatchObject({ isEnabled: true });
    expect((await serverSide("pref-default")).global.schedule).toMatchObject({ isEnabled: true });
    // A malformed one is refused with the session, which then gives no token.
    const refused = await stack.request(
      "POST",
      "/v1/inbox/session",
      {
        applicationIdentifier: await environmentIdentifier(stack),
        subscriber: { subscriberId: "pref-default-bad" },
        defaultSchedule: { weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "nine", end: "17:00" }] } } },
      },
      { authorization: "" },
    );
    expect(refused.status).toBe(422);
    expect(refused.body.data).toBeUndefined();
  });
});

describe("Inbox preferences: bad input and isolation", () => {
  it("refuses bad input with 4xx JSON and changes nothing", async () => {
    const { token } = await openSession(stack, "pref-bad");
    const inbox = asInbox(token);
    const before = await serverSide("pref-bad");
    const refusals: [string, string, unknown, number][] = [
      ["PATCH", "/v1/inbox/preferences", { email: "no" }, 422],
      ["PATCH", `/v1/inbox/preferences/${news._id}`, { in_app: 1 }, 422],
      ["PATCH", "/v1/inbox/preferences/no-such-workflow", { email: false }, 404],
      ["PATCH", "/v1/inbox/preferences/ffffffffffffffffffffffff", { email: false }, 404],
      ["PATCH", `/v1/inbox/preferences/${security._id}`, { email: false }, 400],
      ["PATCH", `/v1/inbox/preferences/${news._id}`, { schedule: { isEnabled: true } }, 422],
      [
        "PATCH",
        "/v1/inbox/preferences",
        { schedule: { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "25:00", end: "x" }] } } } },
        422,
      ],
      ["PATCH", "/v1/inbox/preferences", { schedule: { isEnabled: "yes" } }, 422],
      ["PATCH", "/v1/inbox/preferences", [], 422],
      // An empty list reaches the service, which answers as Novu does.
      ["PATCH", "/v1/inbox/preferences/bulk", { preferences: [] }, 400],
      [
        "PATCH",
        "/v1/inbox/preferences/bulk",
        {
          preferences: [
            { workflowId: news._id, email: false },
            { workflowId: "ghost", email: false },
          ],
        },
        404,
      ],
      [
        "PATCH",
        "/v1/inbox/preferences/bulk",
        {
          preferences: [
            { workflowId: news._id, email: false },
            { workflowId: security._id, email: false },
          ],
        },
        400,
      ],
      ["GET", "/v1/inbox/preferences?severity=urgent", undefined, 422],
      ["GET", "/v1/inbox/preferences?criticality=some", undefined, 422],
    ];
    for (const [method, path, body, status] of refusals) {
      const reply = await inbox(method, path, body);
      expect(reply.status, `${method} ${path} ${JSON.stringify(reply.body)}`).toBe(status);
      expect(reply.body).toMatchObject({ statusCode: status, path, message: expect.any(String) });
    }
    expect(await serverSide("pref-bad")).toEqual(before);
  });

  it("acts only on the session's own subscriber; API keys and forged tokens are refused", async () => {
    const victim = await openInbox(stack, "pref-victim");
    data(await byWorkflow(data(await victim.preferences.list()), news).update({ channels: { email: false } }));
    const before = await serverSide("pref-victim");
    const { token } = await openSession(stack, "pref-other");
    const other = asInbox(token);
    expect((await other("PATCH", `/v1/inbox/preferences/${news._id}`, { email: true, in_app: false })).status).toBe(200);
    expect((await other("PATCH", "/v1/inbox/preferences", { push: false })).status).toBe(200);
    expect((await other("GET", "/v1/inbox/preferences")).body.data[0].channels).toMatchObject({ push: false });
    expect(await serverSide("pref-victim")).toEqual(before);
    expect(serverSideOf(await serverSide("pref-other"), news).channels).toEqual({ email: true, in_app: false });
    // Another environment's subscriber of the same id is someone else too.
    const elsewhere = await stack.createKey("Production");
    const foreign = await openSession(stack, "pref-victim", { key: elsewhere });
    expect((await asInbox(foreign.token)("PATCH", "/v1/inbox/preferences", { email: true })).status).toBe(200);
    expect(await serverSide("pref-victim")).toEqual(before);
    const withKey = await stack.request("PATCH", "/v1/inbox/preferences", { email: true });
    expect(withKey.status).toBe(401);
    const forged = await asInbox(`${token.slice(0, -4)}AAAA`)("PATCH", "/v1/inbox/preferences", { email: true });
    expect(forged.status).toBe(401);
    expect(await serverSide("pref-victim")).toEqual(before);
  });

  it("lists and filters workflows by their own severity", async () => {
    const reply = await stack.request("POST", "/v2/workflows", {
      name: "Outage",
      workflowId: "outage",
      severity: "high",
      active: true,
      steps: [{ name: "Bell", type: "in_app", controlValues: { body: "Down" } }],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const novu = await openInbox(stack, "pref-severity");
    const high = data(await novu.preferences.list({ severity: SeverityLevelEnum.HIGH }));
    expect(high.map((preference) => preference.workflow?.identifier ?? "global")).toEqual(["global", "outage"]);
    expect(high[1]!.workflow).toMatchObject({ identifier: "outage", severity: "high" });
    const none = data(await novu.preferences.list({ severity: SeverityLevelEnum.NONE }));
    expect(none.map((preference) => preference.workflow?.identifier ?? "global")).toEqual(["global", "news", "alerts"]);
  });
});
