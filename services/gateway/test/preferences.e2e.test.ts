import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  news = await workflow({ name: "News", active: true, steps: [step("in_app"), step("email"), step("digest")] });
  alerts = await workflow({
    name: "Alerts",
    active: true,
    preferenceSettings: { sms: false },
    steps: [step("sms"), step("push"), { ...step("chat"), active: false }],
  });
  security = await workflow({ name: "Security", active: true, critical: true, preferenceSettings: { chat: false }, steps: [step("email"), step("chat")] });
  draft = await workflow({ name: "Draft", steps: [step("in_app")] });
});
afterAll(async () => {
  await stack?.stop();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CHANNELS = ["in_app", "email", "sms", "chat", "push"] as const;
type Channel = (typeof CHANNELS)[number];
type Choices = Partial<Record<Channel, boolean>>;

interface Workflow {
  _id: string;
  name: string;
  slug?: string;
  critical: boolean;
  preferenceSettings: Record<Channel, boolean>;
  triggers: { identifier: string }[];
}

let news: Workflow;
let alerts: Workflow;
let security: Workflow;
let draft: Workflow;

function step(type: string) {
  switch (type) {
    case "email":
      return { template: { type, subject: "Hello", content: "Hi {{name}}" } };
    case "push":
      return { template: { type, title: "Hello", content: "Hi" } };
    case "digest":
      return { template: { type }, metadata: { type: "regular", amount: 5, unit: "minutes" } };
    default:
      return { template: { type, content: "Hi" } };
  }
}

async function workflow(body: Record<string, unknown>): Promise<Workflow> {
  const reply = await stack.request<Data<Workflow>>("POST", "/v1/workflows", body);
  expect(reply.status).toBe(201);
  return reply.body.data;
}

async function subscriber(subscriberId: string) {
  expect((await stack.request("POST", "/v1/subscribers", { subscriberId })).status).toBe(201);
}

const getPreferences = (subscriberId: string, query = "") => stack.request("GET", `/v2/subscribers/${subscriberId}/preferences${query}`);
const patchPreferences = (subscriberId: string, body: unknown) => stack.request("PATCH", `/v2/subscribers/${subscriberId}/preferences`, body);

const identifiers = (body: Json) => body.workflows.map((preference) => preference.workflow.identifier);
const preferenceOf = (body: Json, target: Workflow) =>
  body.workflows.find((preference) => String(preference.workflow.identifier) === target.triggers[0]!.identifier)!;

describe("GET /v2/subscribers/{subscriberId}/preferences", () => {
  it("answers the defaults: workflow settings over enabled, channels of active steps, non-critical workflows", async () => {
    await subscriber("fresh");
    const reply = await getPreferences("fresh");
    expect(reply.status).toBe(200);
    expect(reply.body.data.global).toEqual({ enabled: true, channels: { in_app: true, email: true, sms: true, push: true } });
    expect(identifiers(reply.body.data)).toEqual(["news", "alerts"]);
    expect(preferenceOf(reply.body.data, news)).toEqual({
      enabled: true,
      channels: { in_app: true, email: true },
      overrides: [
        { channel: "in_app", source: "template" },
        { channel: "email", source: "template" },
      ],
      workflow: { slug: expect.stringMatching(/^news_wf_/), identifier: "news", name: "News", updatedAt: expect.stringMatching(ISO) },
    });
    expect(preferenceOf(reply.body.data, alerts)).toMatchObject({ channels: { sms: false, push: true } });
  });

  it("filters by criticality and refuses other values with 422", async () => {
    await subscriber("critic");
    expect(identifiers((await getPreferences("critic", "?criticality=critical")).body.data)).toEqual(["security"]);
    expect(identifiers((await getPreferences("critic", "?criticality=all")).body.data)).toEqual(["news", "alerts", "security"]);
    expect(identifiers((await getPreferences("critic", "?criticality=nonCritical")).body.data)).toEqual(["news", "alerts"]);
    const critical = preferenceOf((await getPreferences("critic", "?criticality=critical")).body.data, security);
    expect(critical.channels).toEqual({ email: true, chat: false });
    const invalid = await getPreferences("critic", "?criticality=urgent");
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors.criticality).toBeDefined();
  });

  it("answers 404 for an unknown subscriber", async () => {
    const reply = await getPreferences("nobody-here");
    expect(reply.status).toBe(404);
    expect(reply.body.message).toBe("Subscriber nobody-here not found");
  });
});

describe("PATCH /v2/subscribers/{subscriberId}/preferences", () => {
  it("updates one workflow by _id, identifier or slug, marking the subscriber as the source", async () => {
    await subscriber("chooser");
    const byId = await patchPreferences("chooser", { workflowId: news._id, channels: { email: false } });
    expect(byId.status).toBe(200);
    expect(preferenceOf(byId.body.data, news)).toMatchObject({
      channels: { in_app: true, email: false },
      overrides: [
        { channel: "in_app", source: "template" },
        { channel: "email", source: "subscriber" },
      ],
    });
    const slug = preferenceOf(byId.body.data, news).workflow.slug;
    const bySlug = await patchPreferences("chooser", { workflowId: slug, channels: { in_app: false } });
    expect(preferenceOf(bySlug.body.data, news).channels).toEqual({ in_app: false, email: false });
    const byIdentifier = await patchPreferences("chooser", { workflowId: "alerts", channels: { sms: true, chat: false } });
    // chat is not a channel of an active Alerts step, so it is not shown (but is stored).
    expect(preferenceOf(byIdentifier.body.data, alerts).channels).toEqual({ sms: true, push: true });
    // Global is untouched by workflow choices.
    expect(byIdentifier.body.data.global.channels).toEqual({ in_app: true, email: true, sms: true, push: true });
  });

  it("updates global choices and clears the same channels' workflow choices", async () => {
    await subscriber("globalist");
    await patchPreferences("globalist", { workflowId: "news", channels: { email: false, in_app: false } });
    await patchPreferences("globalist", { workflowId: "alerts", channels: { push: false } });
    const reply = await patchPreferences("globalist", { channels: { email: true, push: true, sms: false } });
    expect(reply.status).toBe(200);
    expect(reply.body.data.global).toEqual({ enabled: true, channels: { in_app: true, email: true, sms: false, push: true } });
    expect(preferenceOf(reply.body.data, news).channels).toEqual({ in_app: false, email: true });
    expect(preferenceOf(reply.body.data, alerts).channels).toEqual({ sms: false, push: true });
    expect(preferenceOf(reply.body.data, alerts).overrides).toEqual([
      { channel: "sms", source: "subscriber" },
      { channel: "push", source: "subscriber" },
    ]);
    expect((await getPreferences("globalist")).body.data).toEqual(reply.body.data);
  });

  it("refuses a critical workflow with 400 and leaves it unaffected by global choices", async () => {
    await subscriber("guarded");
    const reply = await patchPreferences("guarded", { workflowId: security._id, channels: { email: false } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe(`Critical workflow with id: ${security._id} can not be updated`);
    await patchPreferences("guarded", { channels: { email: false, chat: true } });
    const critical = preferenceOf((await getPreferences("guarded", "?criticality=critical")).body.data, security);
    expect(critical.channels).toEqual({ email: true, chat: false });
    expect(critical.overrides.map((override) => override.source)).toEqual(["template", "template"]);
  });

  it("answers 404 for an unknown workflow (before an unknown subscriber) and for an unknown subscriber", async () => {
    await subscriber("lost");
    expect((await patchPreferences("lost", { workflowId: "no-such-workflow", channels: { email: true } })).status).toBe(404);
    expect((await patchPreferences("nobody-here", { workflowId: "no-such-workflow", channels: { email: true } })).body.message).toMatch(/Workflow/);
    const unknownSubscriber = await patchPreferences("nobody-here", { channels: { email: true } });
    expect(unknownSubscriber.status).toBe(404);
    expect(unknownSubscriber.body.message).toBe("Subscriber with id: nobody-here is not found");
    expect((await patchPreferences("nobody-here", { workflowId: "news", channels: { email: true } })).status).toBe(404);
    // A workflow of another environment is unknown here.
    const production = `ApiKey ${await stack.createKey("Production")}`;
    await stack.request("POST", "/v1/subscribers", { subscriberId: "lost" }, { authorization: production });
    const elsewhere = await stack.request(
      "PATCH",
      "/v2/subscribers/lost/preferences",
      { workflowId: news._id, channels: { email: false } },
      { authorization: production },
    );
    expect(elsewhere.status).toBe(404);
  });

  it.each([
    ["a channel value that is not a boolean", { channels: { email: "yes" } }, "channels.email"],
    ["a null channel value", { channels: { in_app: null } }, "channels.in_app"],
    ["channels that are not an object", { channels: [true] }, "channels"],
    ["no channels", { workflowId: "news" }, "channels"],
    ["a workflowId that is not a string", { workflowId: 12, channels: {} }, "workflowId"],
  ])("answers 422 for %s, changing nothing", async (_, body, field) => {
    await subscriber("strict");
    const before = (await getPreferences("strict")).body.data;
    const reply = await patchPreferences("strict", body);
    expect(reply.status).toBe(422);
    expect(reply.body.errors[field].messages.length).toBeGreaterThan(0);
    expect((await getPreferences("strict")).body.data).toEqual(before);
  });

  it("reads an empty workflowId as none: the global preference changes, as in Novu", async () => {
    await subscriber("blank");
    const reply = await patchPreferences("blank", { workflowId: "", channels: { email: false } });
    expect(reply.status).toBe(200);
    expect(reply.body.data.global.channels).toMatchObject({ email: false });
  });

  it("accepts empty channels as a no-op", async () => {
    await subscriber("idle");
    const before = (await getPreferences("idle")).body.data;
    const reply = await patchPreferences("idle", { channels: {} });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual(before);
  });
});

describe("global schedule", () => {
  const schedule = {
    isEnabled: true,
    weeklySchedule: {
      monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] },
      tuesday: { isEnabled: true, hours: [{ start: "08:30", end: "18:00" }] },
      sunday: { isEnabled: false, hours: [] },
    },
  };

  it("stores a schedule sent with PATCH and returns it on GET", async () => {
    await subscriber("scheduled");
    expect((await getPreferences("scheduled")).body.data.global).not.toHaveProperty("schedule");
    const reply = await patchPreferences("scheduled", { channels: { email: true }, schedule });
    expect(reply.status).toBe(200);
    expect(reply.body.data.global).not.toHaveProperty("schedule");
    expect((await getPreferences("scheduled")).body.data.global.schedule).toEqual(schedule);
    // A later channel change keeps it; a schedule alone (as the later SDK sends) replaces it.
    await patchPreferences("scheduled", { channels: { sms: false } });
    expect((await getPreferences("scheduled")).body.data.global.schedule).toEqual(schedule);
    expect((await patchPreferences("scheduled", { schedule: { isEnabled: false } })).status).toBe(200);
    expect((await getPreferences("scheduled")).body.data.global.schedule).toEqual({ isEnabled: false });
  });

  it.each([
    ["an unknown day", { isEnabled: true, weeklySchedule: { funday: { isEnabled: true } } }, "schedule.weeklySchedule"],
    [
      "a 24-hour time out of range",
      { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "24:00", end: "10:00" }] } } },
      "schedule.weeklySchedule.monday.hours[0].start",
    ],
    [
      "a 12-hour time without AM/PM",
      { isEnabled: true, weeklySchedule: { friday: { isEnabled: true, hours: [{ start: "09:00", end: "5:00" }] } } },
      "schedule.weeklySchedule.friday.hours[0].end",
    ],
    ["a missing isEnabled", { weeklySchedule: {} }, "schedule.isEnabled"],
    ["a schedule on a workflow", { workflowId: "news", isEnabled: true }, "schedule"],
  ])("answers 422 for %s", async (_, given, field) => {
    await subscriber("misscheduled");
    const { workflowId, ...rest } = given as { workflowId?: string };
    const body = workflowId ? { workflowId, channels: {}, schedule: rest } : { schedule: given };
    const reply = await patchPreferences("misscheduled", body);
    expect(reply.status).toBe(422);
    expect(Object.keys(reply.body.errors)).toContain(field);
    expect((await getPreferences("misscheduled")).body.data.global).not.toHaveProperty("schedule");
  });
});

describe("preferences against a reference model (property)", () => {
  type Operation = { workflow: "news" | "alerts" | undefined; channels: Choices };

  /** The resolution order, written as plainly as possible. */
  function expected(operations: readonly Operation[]) {
    const global: Choices = {};
    const own: Record<string, Choices> = { news: {}, alerts: {} };
    for (const { workflow, channels } of operations) {
      if (workflow) Object.assign(own[workflow]!, channels);
      else {
        Object.assign(global, channels);
        for (const choices of Object.values(own)) for (const channel of Object.keys(channels)) delete choices[channel as Channel];
      }
    }
    const shown = (target: Workflow, key: "news" | "alerts", channels: Channel[]) =>
      Object.fromEntries(channels.map((channel) => [channel, own[key]![channel] ?? global[channel] ?? target.preferenceSettings[channel]]));
    return {
      global: Object.fromEntries((["in_app", "email", "sms", "push"] as const).map((channel) => [channel, global[channel] ?? true])),
      news: shown(news, "news", ["in_app", "email"]),
      alerts: shown(alerts, "alerts", ["sms", "push"]),
      security: { email: true, chat: false },
    };
  }

  const choices = fc.record({ in_app: fc.boolean(), email: fc.boolean(), sms: fc.boolean(), chat: fc.boolean(), push: fc.boolean() }, { requiredKeys: [] });
  const operation = fc.record({ workflow: fc.constantFrom<Operation["workflow"]>("news", "alerts", undefined), channels: choices });

  it("random sequences of global and workflow PATCHes give the GET a simple model predicts", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 8 }), async (operations) => {
        const subscriberId = `model-${run++}`;
        await subscriber(subscriberId);
        for (const { workflow, channels } of operations) {
          const reply = await patchPreferences(subscriberId, { ...(workflow ? { workflowId: workflow } : {}), channels });
          expect(reply.status).toBe(200);
        }
        const model = expected(operations);
        const actual = (await getPreferences(subscriberId, "?criticality=all")).body.data;
        expect(actual.global.channels).toEqual(model.global);
        expect(preferenceOf(actual, news).channels).toEqual(model.news);
        expect(preferenceOf(actual, alerts).channels).toEqual(model.alerts);
        expect(preferenceOf(actual, security).channels).toEqual(model.security);
      }),
      { numRuns: 40 },
    );
  });
});

it("lists only active workflows", async () => {
  await subscriber("lister");
  const all = (await getPreferences("lister", "?criticality=all")).body.data;
  expect(identifiers(all)).not.toContain(draft.triggers[0]!.identifier);
  expect((await stack.request("PUT", `/v1/workflows/${draft._id}/status`, { active: true })).status).toBe(200);
  expect(identifiers((await getPreferences("lister")).body.data)).toContain(draft.triggers[0]!.identifier);
});
