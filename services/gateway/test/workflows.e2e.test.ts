import { WorkflowResponse$inboundSchema } from "novu-api-v1/models/components/workflowresponse.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let feedId: string;
beforeAll(async () => {
  stack = await startStack();
  feedId = (await stack.request<Data<{ _id: string }>>("POST", "/v1/feeds", { name: "Product updates" })).body.data._id;
});
afterAll(async () => {
  await stack?.stop();
});

const OBJECT_ID = /^[0-9a-f]{24}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const filter = (operator = "EQUAL", on = "payload") => ({
  isNegated: false,
  type: "STATEMENT",
  value: "AND",
  children: [{ field: "plan", value: "pro", operator, on }],
});

/** One step of every type and every metadata shape, with every optional part the spec names. */
function everyStep() {
  return [
    {
      name: "In-app",
      active: true,
      shouldStopOnFail: true,
      uuid: "in-app-step",
      filters: [
        filter(),
        { isNegated: true, type: "GROUP", value: "OR", children: [{ field: "email", value: "x@y.z", operator: "NOT_EQUAL", on: "subscriber" }] },
      ],
      replyCallback: { active: true, url: "https://example.com/reply" },
      template: {
        type: "in_app",
        content: "Hello {{firstName}}, {{subscriber.lastName}} liked {{post.title}}",
        feedId: "FEED",
        cta: {
          type: "redirect",
          data: { url: "/posts/{{post.id}}" },
          action: {
            status: "pending",
            buttons: [
              { type: "primary", content: "Accept", resultContent: "Accepted" },
              { type: "secondary", content: "Decline" },
            ],
          },
        },
        actor: { type: "user", data: null },
      },
      variants: [{ name: "Pro variant", filters: [filter("IN")], template: { type: "in_app", content: "Pro: {{proOnly}}" } }],
    },
    {
      name: "Email",
      template: {
        type: "email",
        subject: "{{subject}}",
        senderName: "Notify",
        preheader: "Read this",
        contentType: "editor",
        content: [
          { type: "text", content: "Hi {{firstName}}", styles: { textAlign: "left" } },
          { type: "button", content: "Open", url: "{{link}}", styles: { textAlign: "center" } },
        ],
      },
    },
    { template: { type: "sms", content: "Code {{code}}" } },
    { template: { type: "chat", content: "Chat {{message}}" } },
    { template: { type: "push", title: "{{pushTitle}}", content: "Push {{pushBody}}" } },
    {
      name: "Digest regular",
      template: { type: "digest", content: "" },
      metadata: {
        type: "regular",
        amount: 5,
        unit: "minutes",
        digestKey: "postId",
        backoff: true,
        backoffAmount: 1,
        backoffUnit: "seconds",
        updateMode: false,
      },
    },
    {
      name: "Digest backoff",
      template: { type: "digest" },
      metadata: { type: "backoff", amount: 2, unit: "hours", backoffAmount: 10, backoffUnit: "minutes" },
    },
    {
      name: "Digest timed",
      template: { type: "digest" },
      metadata: {
        type: "timed",
        amount: 1,
        unit: "weeks",
        digestKey: "threadId",
        timed: { atTime: "09:30", weekDays: ["monday", "friday"], monthDays: ["1", "15"], ordinal: "last", ordinalValue: "weekday", monthlyType: "on" },
      },
    },
    { name: "Delay regular", template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "days" } },
    { name: "Delay scheduled", template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "sendAt" } },
  ];
}

function fullWorkflow(name: string) {
  const steps = everyStep();
  (steps[0]!.template as { feedId: string }).feedId = feedId;
  return {
    name,
    description: "Every step type",
    tags: ["onboarding", "product"],
    active: true,
    critical: false,
    preferenceSettings: { email: false, sms: true, in_app: true, chat: false, push: true },
    data: { owner: "growth", nested: { level: 2 } },
    steps,
  };
}

describe("POST /v1/workflows", () => {
  it("creates a workflow with one step of every type and every metadata shape, and reads it back identically", async () => {
    const sent = fullWorkflow("Every Step Type");
    const reply = await stack.request("POST", "/v1/workflows", sent);
    expect(reply.status).toBe(201);
    const workflow = reply.body.data;
    expect(workflow).toMatchObject({ ...sent, steps: sent.steps.map(({ variants: _, ...step }) => step) });
    expect(workflow._id).toMatch(OBJECT_ID);
    expect(workflow).toMatchObject({ draft: false, deleted: false, deletedAt: "", deletedBy: "", _creatorId: workflow._organizationId });
    expect(workflow.createdAt).toMatch(ISO);
    expect(workflow.triggers).toEqual([
      {
        type: "event",
        identifier: "every-step-type",
        variables: [
          "firstName",
          "post.title",
          "post.id",
          "plan",
          "proOnly",
          "subject",
          "link",
          "code",
          "message",
          "pushTitle",
          "pushBody",
          "postId",
          "threadId",
          "sendAt",
        ].map((name) => ({ name })),
        subscriberVariables: [{ name: "phone" }, { name: "email" }],
      },
    ]);
    expect(workflow.notificationGroup).toMatchObject({ _id: workflow._notificationGroupId, name: "General", _environmentId: workflow._environmentId });
    expect(workflow.slug).toMatch(/^every-step-type_wf_[0-9A-Za-z]+$/);

    // Ids: every step and variant has _id = _templateId = template._id, a uuid, and a link to the one before.
    const steps = workflow.steps;
    for (const [index, step] of steps.entries()) {
      expect(step._id).toMatch(OBJECT_ID);
      expect(step._templateId).toBe(step._id);
      expect(step.template._id).toBe(step._id);
      expect(typeof step.uuid).toBe("string");
      expect(step._parentId).toBe(index === 0 ? undefined : steps[index - 1]!._id);
    }
    expect(steps[0]!.uuid).toBe("in-app-step");
    expect(steps[0]!.template._feedId).toBe(feedId);
    expect(steps[0]!.variants).toHaveLength(1);
    expect(steps[0]!.variants[0]).toMatchObject({ ...sent.steps[0]!.variants![0], active: true, _id: expect.stringMatching(OBJECT_ID) });
    expect(steps[0]!.variants[0]).not.toHaveProperty("variants");
    expect(steps[1]!.variants).toEqual([]);
    expect(steps[2]!.active).toBe(true);

    // The official SDK's schema accepts it (as it must when a message embeds it).
    expect(WorkflowResponse$inboundSchema.safeParse(workflow).success).toBe(true);

    for (const key of [workflow._id, workflow.triggers[0].identifier, workflow.slug]) {
      const read = await stack.request("GET", `/v1/workflows/${encodeURIComponent(String(key))}`);
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual(workflow);
    }
  });

  it("defaults to inactive, the General group, all channels enabled and no steps", async () => {
    const reply = await stack.request("POST", "/v1/workflows", { name: "Bare" });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({
      active: false,
      draft: true,
      critical: false,
      description: "",
      tags: [],
      steps: [],
      preferenceSettings: { email: true, sms: true, in_app: true, chat: true, push: true },
      notificationGroup: { name: "General" },
    });
    expect(reply.body.data).not.toHaveProperty("data");
  });

  it("puts the workflow in the group it names", async () => {
    const group = (await stack.request("POST", "/v1/notification-groups", { name: "Billing" })).body.data;
    const reply = await stack.request("POST", "/v1/workflows", { name: "Invoice", notificationGroupId: group._id });
    expect(reply.body.data).toMatchObject({ _notificationGroupId: group._id, notificationGroup: { _id: group._id, name: "Billing" } });
  });

  it("makes the trigger identifier unique in the environment", async () => {
    const first = (await stack.request("POST", "/v1/workflows", { name: "Comment Added" })).body.data;
    const second = (await stack.request("POST", "/v1/workflows", { name: "comment added" })).body.data;
    expect(first.triggers[0].identifier).toBe("comment-added");
    expect(second.triggers[0].identifier).toMatch(/^comment-added-[0-9a-z]{1,6}$/);
    expect((await stack.request("GET", `/v1/workflows/${second.triggers[0].identifier}`)).body.data._id).toBe(second._id);
    expect((await stack.request("GET", "/v1/workflows/comment-added")).body.data._id).toBe(first._id);
    // Another environment has its own identifiers.
    const production = await stack.createKey("Production");
    const elsewhere = await stack.request("POST", "/v1/workflows", { name: "Comment Added" }, { authorization: `ApiKey ${production}` });
    expect(elsewhere.body.data.triggers[0].identifier).toBe("comment-added");
    expect((await stack.request("GET", `/v1/workflows/${first._id}`, undefined, { authorization: `ApiKey ${production}` })).status).toBe(404);
  });
});

/** Sets (or, given undefined, deletes) what a path such as `steps[0].filters[1].type` names in a request body. */
function setAt(body: object, path: string, value: unknown): void {
  const keys = path.match(/[^.[\]]+/g) ?? [];
  let target = body as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (value === undefined) delete target[last];
  else target[last] = value;
}

describe("invalid workflows", () => {
  const base = () => fullWorkflow("Invalid");
  type Body = ReturnType<typeof base>;
  const cases: [string, (body: Body) => void, string][] = [
    ["an unknown step type", (body) => setAt(body, "steps[2].template.type", "webhook"), "steps[2].template.type"],
    ["an unknown digest unit", (body) => setAt(body, "steps[5].metadata.unit", "fortnights"), "steps[5].metadata.unit"],
    ["an unknown backoff unit", (body) => setAt(body, "steps[6].metadata.backoffUnit", "ages"), "steps[6].metadata.backoffUnit"],
    ["a delay metadata type on a digest step", (body) => setAt(body, "steps[5].metadata.type", "scheduled"), "steps[5].metadata.type"],
    ["a digest metadata type on a delay step", (body) => setAt(body, "steps[8].metadata.type", "timed"), "steps[8].metadata.type"],
    ["metadata on a channel step", (body) => setAt(body, "steps[2].metadata", { type: "regular", amount: 1, unit: "days" }), "steps[2].metadata"],
    ["a scheduled delay without delayPath", (body) => setAt(body, "steps[9].metadata.delayPath", undefined), "steps[9].metadata.delayPath"],
    ["a negative amount", (body) => setAt(body, "steps[8].metadata.amount", -1), "steps[8].metadata.amount"],
    ["an unknown week day", (body) => setAt(body, "steps[7].metadata.timed.weekDays", ["monday", "funday"]), "steps[7].metadata.timed.weekDays[1]"],
    ["an unknown ordinal", (body) => setAt(body, "steps[7].metadata.timed.ordinal", "6"), "steps[7].metadata.timed.ordinal"],
    ["an unknown ordinal value", (body) => setAt(body, "steps[7].metadata.timed.ordinalValue", "holiday"), "steps[7].metadata.timed.ordinalValue"],
    ["an unknown monthly type", (body) => setAt(body, "steps[7].metadata.timed.monthlyType", "every"), "steps[7].metadata.timed.monthlyType"],
    ["a day that is not of the month", (body) => setAt(body, "steps[7].metadata.timed.monthDays", ["32"]), "steps[7].metadata.timed.monthDays[0]"],
    ["a time that is not a time", (body) => setAt(body, "steps[7].metadata.timed.atTime", "25:00"), "steps[7].metadata.timed.atTime"],
    ["an unknown filter type", (body) => setAt(body, "steps[0].filters[0].type", "FUZZY"), "steps[0].filters[0].type"],
    ["an unknown filter value", (body) => setAt(body, "steps[0].filters[0].value", "XOR"), "steps[0].filters[0].value"],
    ["an unknown operator", (body) => setAt(body, "steps[0].filters[1].children[0].operator", "ROUGHLY"), "steps[0].filters[1].children[0].operator"],
    ["an unknown filter target", (body) => setAt(body, "steps[0].filters[0].children[0].on", "tenant"), "steps[0].filters[0].children[0].on"],
    ["a filter value that is not a string", (body) => setAt(body, "steps[0].filters[0].children[0].value", 5), "steps[0].filters[0].children[0].value"],
    [
      "a filter value that does not parse",
      (body) => setAt(body, "steps[0].filters[0].children[0].value", "{{#if plan}}pro"),
      "steps[0].filters[0].children[0].value",
    ],
    [
      "a variant filter with an unknown operator",
      (body) => setAt(body, "steps[0].variants[0].filters[0].children[0].operator", "NEAR"),
      "steps[0].variants[0].filters[0].children[0].operator",
    ],
    ["a variant without conditions", (body) => (body.steps[0]!.variants![0]!.filters = []), "steps[0].variants[0].filters"],
    ["an in-app step without content", (body) => setAt(body, "steps[0].template.content", undefined), "steps[0].template.content"],
    ["email blocks on an sms step", (body) => setAt(body, "steps[2].template.content", [{ type: "text", content: "x" }]), "steps[2].template.content"],
    ["an unknown email block type", (body) => setAt(body, "steps[1].template.content[1].type", "image"), "steps[1].template.content[1].type"],
    [
      "an unknown text alignment",
      (body) => setAt(body, "steps[1].template.content[0].styles.textAlign", "justify"),
      "steps[1].template.content[0].styles.textAlign",
    ],
    ["an unknown CTA type", (body) => setAt(body, "steps[0].template.cta.type", "link"), "steps[0].template.cta.type"],
    [
      "an unknown button type",
      (body) => setAt(body, "steps[0].template.cta.action.buttons[1].type", "tertiary"),
      "steps[0].template.cta.action.buttons[1].type",
    ],
    ["an unknown actor type", (body) => setAt(body, "steps[0].template.actor.type", "robot"), "steps[0].template.actor.type"],
    ["an unknown content type", (body) => setAt(body, "steps[1].template.contentType", "markdown"), "steps[1].template.contentType"],
    ["a feedId that is not an id", (body) => setAt(body, "steps[0].template.feedId", "news"), "steps[0].template.feedId"],
    ["a feed the environment does not have", (body) => setAt(body, "steps[0].template.feedId", "65a1b2c3d4e5f60718293a4b"), "steps[0].template.feedId"],
    ["a group the environment does not have", (body) => setAt(body, "notificationGroupId", "65a1b2c3d4e5f60718293a4b"), "notificationGroupId"],
    ["a template that does not parse", (body) => setAt(body, "steps[3].template.content", "{{#if open}}never closed"), "steps[3].template.content"],
    [
      "more than 50 steps",
      (body) =>
        setAt(
          body,
          "steps",
          Array.from({ length: 51 }, () => ({ template: { type: "sms", content: "x" } })),
        ),
      "steps",
    ],
    ["a name over 255 characters", (body) => (body.name = "n".repeat(256)), "name"],
    ["a blank name", (body) => (body.name = "  "), "name"],
    ["a description over 1000 characters", (body) => (body.description = "d".repeat(1001)), "description"],
    ["an unknown preference channel value", (body) => setAt(body, "preferenceSettings.email", "no"), "preferenceSettings.email"],
  ];

  it.each(cases)("answers 422 for %s, naming the field, and stores nothing", async (_, mutate, field) => {
    const before = (await stack.request("GET", "/v1/workflows?query=Invalid")).body.totalCount;
    const body = base();
    mutate(body);
    const reply = await stack.request("POST", "/v1/workflows", body);
    expect(reply.status).toBe(422);
    expect(reply.body.statusCode).toBe(422);
    expect(Object.keys(reply.body.errors)).toContain(field);
    expect(reply.body.errors[field].messages.length).toBeGreaterThan(0);
    expect((await stack.request("GET", "/v1/workflows?query=Invalid")).body.totalCount).toBe(before);
  });

  it("answers 422 on an invalid update and leaves the workflow as it was", async () => {
    const created = (await stack.request("POST", "/v1/workflows", fullWorkflow("Stable"))).body.data;
    const steps = everyStep();
    setAt(steps, "[0].template.feedId", feedId);
    setAt(steps, "[5].metadata.unit", "eons");
    const reply = await stack.request("PUT", `/v1/workflows/${created._id}`, { name: "Changed", steps });
    expect(reply.status).toBe(422);
    expect(Object.keys(reply.body.errors)).toEqual(["steps[5].metadata.unit"]);
    expect((await stack.request("GET", `/v1/workflows/${created._id}`)).body.data).toEqual(created);
  });
});

describe("reading, updating and deleting workflows", () => {
  it("lists workflows in pages, newest first, searchable by name", async () => {
    const search = `Paged ${Date.now()}`;
    for (const suffix of ["a", "b", "c"]) await stack.request("POST", "/v1/workflows", { name: `${search} ${suffix}` });
    const page = await stack.request("GET", `/v1/workflows?page=0&limit=2&query=${encodeURIComponent(search)}`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ page: 0, pageSize: 2, totalCount: 3, hasMore: true });
    expect(page.body.data.map((workflow) => workflow.name)).toEqual([`${search} c`, `${search} b`]);
    const last = await stack.request("GET", `/v1/workflows?page=1&limit=2&query=${encodeURIComponent(search)}`);
    expect(last.body).toMatchObject({ page: 1, hasMore: false });
    expect(last.body.data.map((workflow) => workflow.name)).toEqual([`${search} a`]);
    expect((await stack.request("GET", "/v1/workflows?limit=101")).status).toBe(422);
  });

  it("answers 404 for an unknown workflow on every route", async () => {
    for (const [method, path, body] of [
      ["GET", "/v1/workflows/65a1b2c3d4e5f60718293a4b", undefined],
      ["GET", "/v1/workflows/no-such-workflow", undefined],
      ["PUT", "/v1/workflows/no-such-workflow", { name: "x" }],
      ["PUT", "/v1/workflows/no-such-workflow/status", { active: true }],
      ["DELETE", "/v1/workflows/no-such-workflow", undefined],
    ] as const) {
      const reply = await stack.request(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body.message).toMatch(/cannot be found/);
    }
  });

  it("updates the given fields and keeps the identity of the steps it names", async () => {
    const created = (await stack.request("POST", "/v1/workflows", fullWorkflow("Updatable"))).body.data;
    const [first, second] = created.steps;
    const reply = await stack.request("PUT", `/v1/workflows/${created.triggers[0].identifier}`, {
      name: "Updated name",
      tags: ["changed"],
      critical: true,
      steps: [
        { _id: second._id, template: { type: "sms", content: "{{newVar}}" } },
        { uuid: first.uuid, template: { type: "in_app", content: "still first" } },
      ],
    });
    expect(reply.status).toBe(200);
    const updated = reply.body.data;
    expect(updated).toMatchObject({ _id: created._id, name: "Updated name", tags: ["changed"], critical: true, description: created.description });
    // The trigger identifier stays what it was; the slug follows the name.
    expect(updated.triggers[0]).toEqual({ type: "event", identifier: "updatable", variables: [{ name: "newVar" }], subscriberVariables: [{ name: "phone" }] });
    expect(updated.slug).toMatch(/^updated-name_wf_/);
    expect(updated.steps.map((step) => step._id)).toEqual([second._id, first._id]);
    expect(updated.steps[1]._parentId).toBe(second._id);
    expect((await stack.request("GET", `/v1/workflows/${updated.slug}`)).body.data).toEqual(updated);
  });

  it("accepts its own steps back unchanged (a client can GET, edit and PUT)", async () => {
    const created = (await stack.request("POST", "/v1/workflows", fullWorkflow("Round trip"))).body.data;
    const reply = await stack.request("PUT", `/v1/workflows/${created._id}`, { steps: created.steps, tags: created.tags });
    expect(reply.status).toBe(200);
    expect(reply.body.data.steps).toEqual(created.steps);
    expect(reply.body.data.triggers).toEqual(created.triggers);
  });

  it("renames the trigger identifier on request, refusing one another workflow has", async () => {
    const mine = (await stack.request("POST", "/v1/workflows", { name: "Rename me" })).body.data;
    await stack.request("POST", "/v1/workflows", { name: "Occupied" });
    const conflict = await stack.request("PUT", `/v1/workflows/${mine._id}`, { identifier: "occupied" });
    expect(conflict.status).toBe(409);
    expect((await stack.request("PUT", `/v1/workflows/${mine._id}`, { identifier: "bad identifier!" })).status).toBe(422);
    const renamed = await stack.request("PUT", `/v1/workflows/${mine._id}`, { identifier: "renamed-identifier" });
    expect(renamed.body.data.triggers[0].identifier).toBe("renamed-identifier");
    expect((await stack.request("GET", "/v1/workflows/renamed-identifier")).body.data._id).toBe(mine._id);
  });

  it("toggles the status", async () => {
    const created = (await stack.request("POST", "/v1/workflows", { name: "Toggle" })).body.data;
    const on = await stack.request("PUT", `/v1/workflows/${created._id}/status`, { active: true });
    expect(on.status).toBe(200);
    expect(on.body.data).toMatchObject({ _id: created._id, active: true, draft: false });
    expect((await stack.request("GET", "/v1/workflows/toggle")).body.data.active).toBe(true);
    // Setting the same status again is harmless.
    expect((await stack.request("PUT", "/v1/workflows/toggle/status", { active: true })).body.data.active).toBe(true);
    const off = await stack.request("PUT", "/v1/workflows/toggle/status", { active: false });
    expect(off.body.data).toMatchObject({ active: false, draft: true });
    const invalid = await stack.request("PUT", "/v1/workflows/toggle/status", { active: "yes" });
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors).toHaveProperty("active");
  });

  it("soft-deletes: the workflow is hidden everywhere and its identifier is free again", async () => {
    const created = (await stack.request("POST", "/v1/workflows", { name: "Doomed", active: true })).body.data;
    const deleted = await stack.request("DELETE", `/v1/workflows/${created._id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: true });
    expect((await stack.request("GET", `/v1/workflows/${created._id}`)).status).toBe(404);
    expect((await stack.request("GET", "/v1/workflows/doomed")).status).toBe(404);
    expect((await stack.request("GET", "/v1/workflows?query=Doomed")).body.data).toEqual([]);
    expect((await stack.request("DELETE", `/v1/workflows/${created._id}`)).status).toBe(404);
    const again = await stack.request("POST", "/v1/workflows", { name: "Doomed" });
    expect(again.body.data.triggers[0].identifier).toBe("doomed");
    expect(again.body.data._id).not.toBe(created._id);
  });
});

describe("notification groups", () => {
  it("lists the General group of every environment, and creates named ones (409 on a taken name)", async () => {
    const production = await stack.createKey("Groups");
    const headers = { authorization: `ApiKey ${production}` };
    const listed = await stack.request("GET", "/v1/notification-groups", undefined, headers);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      { _id: expect.stringMatching(OBJECT_ID), name: "General", _environmentId: expect.any(String), _organizationId: expect.any(String) },
    ]);
    const created = await stack.request("POST", "/v1/notification-groups", { name: "Security" }, headers);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: "Security", _parentId: listed.body.data[0]._id });
    expect((await stack.request("POST", "/v1/notification-groups", { name: "Security" }, headers)).status).toBe(409);
    expect((await stack.request("POST", "/v1/notification-groups", { name: "" }, headers)).status).toBe(422);
    expect((await stack.request("GET", "/v1/notification-groups", undefined, headers)).body.data.map((group) => group.name)).toEqual(["General", "Security"]);
  });
});

describe("feeds", () => {
  it("creates, lists and deletes feeds, with 409 for a taken identifier and 404 for an unknown feed", async () => {
    const other = await stack.createKey("Feeds");
    const headers = { authorization: `ApiKey ${other}` };
    const created = await stack.request("POST", "/v1/feeds", { name: "Announcements" }, headers);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ _id: expect.stringMatching(OBJECT_ID), name: "Announcements", identifier: "Announcements" });
    expect((await stack.request("POST", "/v1/feeds", { name: "Announcements" }, headers)).status).toBe(409);
    expect((await stack.request("POST", "/v1/feeds", {}, headers)).status).toBe(422);
    await stack.request("POST", "/v1/feeds", { name: "Tips" }, headers);
    const listed = await stack.request("GET", "/v1/feeds", undefined, headers);
    expect(listed.body.data.map((feed) => feed.identifier)).toEqual(["Announcements", "Tips"]);

    const deleted = await stack.request("DELETE", `/v1/feeds/${created.body.data._id}`, undefined, headers);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.map((feed) => feed.identifier)).toEqual(["Tips"]);
    expect((await stack.request("DELETE", `/v1/feeds/${created.body.data._id}`, undefined, headers)).status).toBe(404);
    expect((await stack.request("DELETE", "/v1/feeds/not-an-id", undefined, headers)).status).toBe(404);
    // Feeds of another environment are invisible.
    expect((await stack.request("DELETE", `/v1/feeds/${feedId}`, undefined, headers)).status).toBe(404);
    expect((await stack.request("POST", "/v1/feeds", { name: "Announcements" }, headers)).status).toBe(201);
  });
});
