import { createPool } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

interface Message {
  _id: string;
  content: string;
  channel: string;
  status: string;
  transactionId: string;
  _subscriberId: string;
  subscriber?: { subscriberId: string };
  errorId?: string;
  errorText?: string;
  email?: string;
  payload?: unknown;
}

async function createWorkflow(body: Record<string, unknown>): Promise<string> {
  const reply = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", { active: true, ...body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.data.triggers[0].identifier;
}

const inApp = (content: string, extra: Record<string, unknown> = {}) => ({ template: { type: "in_app", content }, ...extra });

async function messagesOf(transactionId: string): Promise<Message[]> {
  const reply = await stack.request<Data<Message[]>>("GET", `/v1/messages?transactionId=${encodeURIComponent(transactionId)}&limit=1000`);
  expect(reply.status).toBe(200);
  return reply.body.data;
}

/** Waits (bounded) until the trigger has produced `count` messages, then a moment longer to catch extras. */
async function awaitMessages(transactionId: string, count: number): Promise<Message[]> {
  await eventually(async () => ((await messagesOf(transactionId)).length >= count ? true : undefined), 15_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return messagesOf(transactionId);
}

async function trigger(body: Record<string, unknown>) {
  return stack.request("POST", "/v1/events/trigger", body);
}

describe("POST /v1/events/trigger", () => {
  let welcome: string;
  beforeAll(async () => {
    welcome = await createWorkflow({
      name: "Welcome",
      steps: [inApp("Hi {{firstName}} / {{payload.firstName}} from {{subscriber.firstName}}")],
    });
  });

  it("answers processed with a generated transactionId and leaves an in-app message with rendered content", async () => {
    await stack.request("POST", "/v1/subscribers", { subscriberId: "ada", firstName: "Ada" });
    const reply = await trigger({ name: welcome, to: "ada", payload: { firstName: "Payload" } });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({ acknowledged: true, status: "processed" });
    expect(reply.body.data.transactionId).toMatch(/^txn_[0-9a-f]{8}[0-9a-z]{12}$/);
    const [message] = await awaitMessages(String(reply.body.data.transactionId), 1);
    expect(message).toMatchObject({ channel: "in_app", status: "sent", content: "Hi Payload / Payload from Ada" });
  });

  it("keeps the payload's key order, nested and unicode values as sent, in the message and the feed", async () => {
    await stack.request("POST", "/v1/subscribers", { subscriberId: "ordered" });
    const payload = { zeta: 1, alpha: { second: [3, { b: null, a: "\u2028é😀" }], first: true }, middle: "x" };
    const reply = await trigger({ name: welcome, to: "ordered", payload });
    const [message] = await awaitMessages(String(reply.body.data.transactionId), 1);
    expect(JSON.stringify(message!.payload)).toBe(JSON.stringify(payload));
    const feed = await stack.request("GET", "/v1/subscribers/ordered/notifications/feed");
    expect(JSON.stringify(feed.body.data[0].payload)).toBe(JSON.stringify(payload));
  });

  it("upserts a recipient object with its fields and creates a bare subscriber for an unknown id", async () => {
    const reply = await trigger({
      name: welcome,
      to: [{ subscriberId: "obj", firstName: "Obj", email: "obj@example.com" }, "bare-one"],
      transactionId: "t-upsert",
    });
    expect(reply.body.data.status).toBe("processed");
    const messages = await awaitMessages("t-upsert", 2);
    expect(messages.map((m) => m.content).sort()).toEqual(["Hi  /  from ", "Hi  /  from Obj"]);
    expect((await stack.request("GET", "/v1/subscribers/obj")).body.data).toMatchObject({ firstName: "Obj", email: "obj@example.com" });
    expect((await stack.request("GET", "/v1/subscribers/bare-one")).status).toBe(200);
  });

  it("fans out to topics once per subscriber, excluding the actor and those named individually", async () => {
    for (const id of ["m1", "m2", "m3", "actor-1"]) await stack.request("POST", "/v1/subscribers", { subscriberId: id });
    await stack.request("POST", "/v1/topics/team/subscribers", { subscribers: ["m1", "m2", "actor-1"] });
    await stack.request("POST", "/v1/topics/ops/subscribers", { subscribers: ["m2", "m3"] });
    const reply = await trigger({
      name: welcome,
      to: ["m1", { type: "Topic", topicKey: "team" }, { type: "Topic", topicKey: "ops" }],
      actor: "actor-1",
      transactionId: "t-topics",
    });
    expect(reply.body.data.status).toBe("processed");
    const messages = await awaitMessages("t-topics", 3);
    const recipients = await Promise.all(messages.map((m) => m._subscriberId));
    expect(new Set(recipients).size).toBe(3);
    expect(messages).toHaveLength(3);
    const actor = (await stack.request("GET", "/v1/subscribers/actor-1")).body.data;
    expect(recipients).not.toContain(actor._id);
  });

  it("renders actor fields and upserts an actor object", async () => {
    const withActor = await createWorkflow({ name: "Liked", steps: [inApp("{{actor.firstName}} liked your post")] });
    const reply = await trigger({ name: withActor, to: "ada", actor: { subscriberId: "fan", firstName: "Fan" }, transactionId: "t-actor" });
    expect(reply.body.data.status).toBe("processed");
    const [message] = await awaitMessages("t-actor", 1);
    expect(message?.content).toBe("Fan liked your post");
    expect((await stack.request("GET", "/v1/subscribers/fan")).body.data.firstName).toBe("Fan");
  });

  it("answers no_tenant_found for an unknown tenant identifier, and upserts a tenant object", async () => {
    expect((await trigger({ name: welcome, to: "ada", tenant: "nobody" })).body.data).toEqual({ acknowledged: true, status: "no_tenant_found" });
    const tenanted = await createWorkflow({ name: "Tenant note", steps: [inApp("From {{tenant.name}}")] });
    const reply = await trigger({ name: tenanted, to: "ada", tenant: { identifier: "acme", name: "Acme" }, transactionId: "t-tenant" });
    expect(reply.body.data.status).toBe("processed");
    expect((await stack.request("GET", "/v1/tenants/acme")).body.data).toMatchObject({ identifier: "acme", name: "Acme" });
    const [message] = await awaitMessages("t-tenant", 1);
    expect(message?.content).toBe("From Acme");
    const byIdentifier = await trigger({ name: tenanted, to: "ada", tenant: "acme", transactionId: "t-tenant-2" });
    expect(byIdentifier.body.data.status).toBe("processed");
    expect((await awaitMessages("t-tenant-2", 1))[0]?.content).toBe("From Acme");
    // An object naming only the identifier runs with the stored tenant, as Novu's run reads it.
    await trigger({ name: tenanted, to: "ada", tenant: { identifier: "acme" }, transactionId: "t-tenant-3" });
    expect((await awaitMessages("t-tenant-3", 1))[0]?.content).toBe("From Acme");

    // The same tenant object on several events of one batch (a bulk, or concurrent triggers the
    // gateway sends on together): each is processed, and the tenant takes the last event's name.
    const events = ["Globex", "Globex Corp"].map((name, n) => ({
      name: tenanted,
      to: "ada",
      payload: {},
      tenant: { identifier: "globex", name },
      transactionId: `t-globex-${n}`,
    }));
    const bulk = await stack.request<Data<{ status: string }[]>>("POST", "/v1/events/trigger/bulk", { events });
    expect(bulk.status).toBe(201);
    expect(bulk.body.data.map((result) => result.status)).toEqual(["processed", "processed"]);
    expect((await stack.request("GET", "/v1/tenants/globex")).body.data).toMatchObject({ identifier: "globex", name: "Globex Corp" });
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        trigger({ name: tenanted, to: "ada", tenant: { identifier: "initech", name: "Initech" }, transactionId: `t-initech-${n}` }),
      ),
    );
    expect(concurrent.map((reply) => reply.status)).toEqual(Array(10).fill(201));
    expect(concurrent.map((reply) => reply.body.data.status)).toEqual(Array(10).fill("processed"));
  });

  it("answers the workflow's state: inactive, without steps, without active steps", async () => {
    const inactive = await createWorkflow({ name: "Dormant", active: false, steps: [inApp("x")] });
    expect((await trigger({ name: inactive, to: "ada" })).body.data).toEqual({ acknowledged: true, status: "trigger_not_active" });
    const empty = await createWorkflow({ name: "Empty", steps: [] });
    expect((await trigger({ name: empty, to: "ada" })).body.data.status).toBe("no_workflow_steps_defined");
    const idle = await createWorkflow({ name: "Idle", steps: [inApp("x", { active: false })] });
    expect((await trigger({ name: idle, to: "ada" })).body.data.status).toBe("no_workflow_active_steps_defined");
  });

  it("answers 422 workflow_not_found for an unknown workflow", async () => {
    const reply = await trigger({ name: "no-such-workflow", to: "ada" });
    expect(reply.status).toBe(422);
    expect(reply.body).toMatchObject({ statusCode: 422, message: "workflow_not_found" });
    expect(reply.body.errors).toBeDefined();
  });

  it("refuses a trigger whose job would be larger than a stream message carries, and runs the next one", async () => {
    // Each template is within the bound on one template; five of them with the payload are not.
    const long = `<p>{{name}}</p>${"x".repeat(220_000)}`;
    const heavy = await createWorkflow({ name: "Heavy", steps: Array.from({ length: 5 }, () => inApp(long)) });
    const refused = await trigger({ name: heavy, to: "ada", payload: { name: "Ada" } });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/^The trigger takes \d+ bytes with its workflow's steps, more than the \d+ a trigger may take/);
    const bulk = await stack.request<Data<{ status: string }[]>>("POST", "/v1/events/trigger/bulk", {
      events: [
        { name: heavy, to: "ada" },
        { name: welcome, to: "ada", transactionId: "after-heavy" },
      ],
    });
    expect(bulk.body.data.map((result) => result.status)).toEqual(["error", "processed"]);
    expect(await awaitMessages("after-heavy", 1)).toHaveLength(1);

    // One that got into the outbox anyway (accepted under a larger bound) is dropped, not retried ahead of the rest.
    const pool = createPool(stack.database.url, 1);
    try {
      await pool.query("INSERT INTO triggers.outbox (environment_id, trigger_id, subject, job) VALUES ('elsewhere', 'oversized', 'notify.jobs.trigger', $1)", [
        Buffer.alloc(1_100_000),
      ]);
      await trigger({ name: welcome, to: "ada", transactionId: "after-oversized" });
      expect(await awaitMessages("after-oversized", 1)).toHaveLength(1);
      expect((await pool.query("SELECT 1 FROM triggers.outbox WHERE trigger_id = 'oversized'")).rowCount).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it("notifies ids outside Novu's rule, as its default dry run of the rule does; trims ids, and answers invalid_recipients when none is left", async () => {
    const outside = await trigger({ name: welcome, to: ["auth0|5f7c8e", " ok-one "], transactionId: "t-outside-rule" });
    expect(outside.body.data).toEqual({ acknowledged: true, status: "processed", transactionId: "t-outside-rule" });
    const messages = await awaitMessages("t-outside-rule", 2);
    expect(messages.map((message) => message.subscriber?.subscriberId).sort()).toEqual(["auth0|5f7c8e", "ok-one"]);
    const none = await trigger({ name: welcome, to: ["  ", ""] });
    expect(none.body.data.status).toBe("invalid_recipients");
    expect(none.body.data.error).toHaveLength(2);
  });

  it("creates nothing for a repeated transactionId and answers the original result", async () => {
    const first = await trigger({ name: welcome, to: "ada", transactionId: "t-once" });
    const again = await trigger({ name: welcome, to: ["ada", "grace"], transactionId: "t-once" });
    expect(again.status).toBe(201);
    expect(again.body.data).toEqual(first.body.data);
    expect(await awaitMessages("t-once", 1)).toHaveLength(1);
  });

  it("validates the request shape with 422 and the field path", async () => {
    for (const [body, field] of [
      [{ to: "ada" }, "name"],
      [{ name: welcome }, "to"],
      [{ name: welcome, to: [] }, "to"],
      [{ name: welcome, to: Array.from({ length: 101 }, (_, i) => `r${i}`) }, "to"],
      [{ name: welcome, to: "ada", payload: [1] }, "payload"],
      [{ name: welcome, to: "ada", transactionId: "x".repeat(256) }, "transactionId"],
      [{ name: welcome, to: [{ firstName: "no id" }] }, "to"],
    ] as const) {
      const reply = await trigger(body as Record<string, unknown>);
      expect(reply.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(Object.keys(reply.body.errors).some((key) => key.startsWith(field))).toBe(true);
    }
    const emptyProvider = await trigger({ name: welcome, to: { subscriberId: "ada", channels: [{ providerId: "" }] } });
    expect(emptyProvider.body.errors).toEqual({ "to.channels[0].providerId": { messages: ["providerId should not be empty"], value: "" } });
    const emptyTopic = await trigger({ name: welcome, to: { type: "Topic", topicKey: "" } });
    expect(emptyTopic.body.errors).toEqual({ "to.topicKey": { messages: ["topicKey should not be empty"], value: "" } });
    const longName = "n".repeat(256);
    expect((await trigger({ name: longName, to: "ada" })).body.errors).toEqual({
      name: { messages: ["name must be shorter than or equal to 255 characters"], value: longName },
    });
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let level = 0; level < 40; level += 1) deep = { deep };
    // Refused where the body is read, deeper than any body may nest.
    expect((await trigger({ name: welcome, to: "ada", payload: deep })).status).toBe(400);
  });

  it("refuses a NUL character anywhere in the body, naming where, and accepts nothing", async () => {
    // Postgres cannot store one: accepted, the trigger's job would fail on every delivery.
    const transactionId = `nul-${Date.now()}`;
    for (const [payload, field] of [
      [{ name: "Ada\u0000" }, "payload.name"],
      [{ list: ["ok", "a\u0000b"] }, "payload.list[1]"],
      [{ "key\u0000": 1 }, "payload.key\u0000"],
    ] as const) {
      const reply = await trigger({ name: welcome, to: "ada", transactionId, payload });
      expect(reply.status).toBe(422);
      expect(reply.body.errors).toEqual({ [field]: { messages: ["must not contain a NUL character (\\u0000)"] } });
    }
    // An escaped backslash before "u0000" is text, not a NUL character.
    const text = await trigger({ name: welcome, to: "ada", transactionId, payload: { firstName: "\\u0000" } });
    expect(text.status).toBe(201);
    const [message] = await awaitMessages(transactionId, 1);
    expect(message?.content).toContain("/ \\u0000 from");
  });
});

describe("steps", () => {
  it("runs each filter operator as the spec defines it", async () => {
    const cases: [string, string, string, boolean][] = [
      ["EQUAL", "plan", "pro", true],
      ["NOT_EQUAL", "plan", "pro", false],
      ["LARGER", "amount", "100", true],
      ["SMALLER", "amount", "100", false],
      ["LARGER_EQUAL", "amount", "150", true],
      ["SMALLER_EQUAL", "amount", "149", false],
      ["IN", "tags", "vip", true],
      ["NOT_IN", "tags", "vip", false],
      ["ANY_IN", "tags", "x,beta", true],
      ["ALL_IN", "tags", "vip,x", false],
      ["BETWEEN", "amount", "100,200", true],
      ["NOT_BETWEEN", "amount", "100,200", false],
      ["LIKE", "note", "%ship%", true],
      ["NOT_LIKE", "note", "%ship%", false],
    ];
    const name = await createWorkflow({
      name: "Filters",
      steps: cases.map(([operator, field, value]) =>
        inApp(operator, { filters: [{ isNegated: false, type: "GROUP", value: "AND", children: [{ operator, field, value, on: "payload" }] }] }),
      ),
    });
    const reply = await trigger({ name, to: "ada", transactionId: "t-filters", payload: { plan: "pro", amount: 150, tags: ["vip", "beta"], note: "shipped" } });
    expect(reply.body.data.status).toBe("processed");
    const expected = cases.filter(([, , , passes]) => passes).map(([operator]) => operator);
    const messages = await awaitMessages("t-filters", expected.length);
    expect(messages.map((m) => m.content).sort()).toEqual(expected.sort());
  });

  it("reads subscriber fields in filters and honours isNegated", async () => {
    const name = await createWorkflow({
      name: "Subscriber filter",
      steps: [
        inApp("for-ada", {
          filters: [{ isNegated: false, type: "GROUP", value: "AND", children: [{ operator: "EQUAL", field: "firstName", value: "Ada", on: "subscriber" }] }],
        }),
        inApp("not-ada", {
          filters: [{ isNegated: true, type: "GROUP", value: "AND", children: [{ operator: "EQUAL", field: "firstName", value: "Ada", on: "subscriber" }] }],
        }),
      ],
    });
    await trigger({ name, to: "ada", transactionId: "t-subscriber-filter" });
    expect((await awaitMessages("t-subscriber-filter", 1)).map((m) => m.content)).toEqual(["for-ada"]);
  });

  it("records email without an address as a warning, and a send the provider cannot make as an error naming why", async () => {
    await stack.request("POST", "/v1/integrations", { providerId: "sendgrid", channel: "email", active: true, credentials: { apiKey: "k" } });
    const name = await createWorkflow({ name: "Mail", steps: [{ template: { type: "email", subject: "Hi {{firstName}}", content: "Body" } }] });
    await stack.request("POST", "/v1/subscribers", { subscriberId: "mailer", email: "m@example.com" });
    await stack.request("POST", "/v1/subscribers", { subscriberId: "no-mail" });
    await trigger({ name, to: ["mailer", "no-mail"], payload: { firstName: "F" }, transactionId: "t-mail" });
    // The integration has no sender address: the send fails for good once it is tried.
    const messages = await eventually(async () => {
      const found = await messagesOf("t-mail");
      return found.length === 2 && found.every((m) => m.status !== "sent") ? found : undefined;
    }, 15_000);
    const byStatus = Object.fromEntries(messages.map((m) => [m.status, m]));
    expect(byStatus.warning).toMatchObject({ channel: "email", errorId: "mail_unexpected_error", errorText: "Subscriber does not have an email address" });
    expect(byStatus.error).toMatchObject({ channel: "email", email: "m@example.com", errorId: "mail_unexpected_error" });
    expect(byStatus.error?.errorText).toContain("sendgrid");
    expect(byStatus.error?.errorText).toContain("from");
  });

  it("stops a subscriber's remaining steps after a failed step with shouldStopOnFail", async () => {
    const name = await createWorkflow({
      name: "Stops",
      steps: [{ template: { type: "sms", content: "code" }, shouldStopOnFail: true }, inApp("after the sms")],
    });
    await stack.request("POST", "/v1/integrations", { providerId: "twilio", channel: "sms", active: true, credentials: { from: "+1555" } });
    await stack.request("POST", "/v1/subscribers", { subscriberId: "texter", phone: "+15550001" });
    await trigger({ name, to: "texter", transactionId: "t-stop" });
    // The integration has no account: the send fails for good, and the in-app step never runs.
    const messages = await eventually(async () => {
      const found = await messagesOf("t-stop");
      return found.some((m) => m.status === "error") ? found : undefined;
    }, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await messagesOf("t-stop")).map((m) => [m.channel, m.status])).toEqual([["sms", "error"]]);
    expect(messages[0]?.errorId).toBe("unexpected_sms_error");
  });
});

describe("template variables", () => {
  it("refuses a trigger without a v1 step's required variables and fills in their defaults, as Novu does", async () => {
    const variables = [
      { name: "order.id", type: "String", required: true },
      { name: "items", type: "Array", required: true },
      { name: "order.currency", type: "String", defaultValue: "EUR" },
      { name: "note", defaultValue: "" },
    ];
    const created = await stack.request<Data<{ _id: string; triggers: { identifier: string }[]; steps: { template: { variables: unknown } }[] }>>(
      "POST",
      "/v1/workflows",
      {
        active: true,
        name: "Declared variables",
        steps: [{ template: { type: "in_app", content: "{{order.id}} {{order.currency}} {{items.length}}", variables } }],
      },
    );
    expect(created.status).toBe(201);
    // Untyped variables are Strings and an empty default is none, as Novu keeps them.
    const kept = [
      { name: "order.id", type: "String", required: true },
      { name: "items", type: "Array", required: true },
      { name: "order.currency", type: "String", required: false, defaultValue: "EUR" },
      { name: "note", type: "String", required: false },
    ];
    expect(created.body.data.steps[0]!.template.variables).toEqual(kept);
    const read = await stack.request<Data<{ steps: { template: { variables: unknown } }[] }>>("GET", `/v1/workflows/${created.body.data._id}`);
    expect(read.body.data.steps[0]!.template.variables).toEqual(kept);
    const name = created.body.data.triggers[0]!.identifier;

    const refused = await trigger({ name, to: "ada", transactionId: "t-variables-missing", payload: { order: { id: 7 }, items: "one" } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe("payload is missing required key(s) and type(s): items (Array)");
    const none = await trigger({ name, to: "ada", transactionId: "t-variables-none" });
    expect(none.body.message).toBe("payload is missing required key(s) and type(s): order.id (Value), items (Array)");

    const sent = await trigger({ name, to: "ada", transactionId: "t-variables", payload: { order: { id: "A-7" }, items: [1, 2] } });
    expect(sent.body.data.status).toBe("processed");
    const [message] = await awaitMessages("t-variables", 1);
    expect(message!.content).toBe("A-7 EUR 2");
    // The payload the run had, defaults filled in, is the notification's.
    expect(message!.payload).toEqual({ order: { id: "A-7", currency: "EUR" }, items: [1, 2] });
    const given = await trigger({ name, to: "ada", transactionId: "t-variables-given", payload: { order: { id: "A-8", currency: "USD" }, items: [] } });
    expect(given.body.data.status).toBe("processed");
    expect((await awaitMessages("t-variables-given", 1))[0]!.content).toBe("A-8 USD 0");
    expect(await messagesOf("t-variables-missing")).toEqual([]);
  });
});

describe("preferences and channels", () => {
  it("skips a channel the subscriber disabled, unless the workflow is critical", async () => {
    const normal = await createWorkflow({ name: "Prefs normal", steps: [inApp("normal")] });
    const critical = await createWorkflow({ name: "Prefs critical", critical: true, steps: [inApp("critical")] });
    await stack.request("POST", "/v1/subscribers", { subscriberId: "quiet" });
    expect((await stack.request("PATCH", "/v2/subscribers/quiet/preferences", { channels: { in_app: false } })).status).toBe(200);
    await trigger({ name: critical, to: "quiet", transactionId: "t-pref-critical" });
    await trigger({ name: normal, to: ["quiet", "ada"], transactionId: "t-pref-normal" });
    expect((await awaitMessages("t-pref-critical", 1)).map((m) => m.content)).toEqual(["critical"]);
    const normalMessages = await awaitMessages("t-pref-normal", 1);
    const ada = (await stack.request("GET", "/v1/subscribers/ada")).body.data;
    expect(normalMessages.map((m) => m._subscriberId)).toEqual([ada._id]);
  });

  it("applies a workflow-level preference to that workflow only", async () => {
    const muted = await createWorkflow({ name: "Muted digest", steps: [inApp("muted")] });
    const other = await createWorkflow({ name: "Other news", steps: [inApp("other")] });
    await stack.request("POST", "/v1/subscribers", { subscriberId: "picky" });
    expect((await stack.request("PATCH", "/v2/subscribers/picky/preferences", { workflowId: muted, channels: { in_app: false } })).status).toBe(200);
    await trigger({ name: muted, to: "picky", transactionId: "t-pref-muted" });
    await trigger({ name: other, to: "picky", transactionId: "t-pref-other" });
    expect(await awaitMessages("t-pref-other", 1)).toHaveLength(1);
    expect(await messagesOf("t-pref-muted")).toHaveLength(0);
  });

  it("binds a recipient object's chat channel and addresses the message to it", async () => {
    await stack.request("POST", "/v1/integrations", { providerId: "slack", channel: "chat", active: true });
    const name = await createWorkflow({ name: "Chatter", steps: [{ template: { type: "chat", content: "Hi {{subscriber.firstName}}" } }] });
    const reply = await trigger({
      name,
      to: { subscriberId: "chatty", firstName: "Chatty", channels: [{ providerId: "slack", credentials: { webhookUrl: "https://hooks.example.com/chatty" } }] },
      transactionId: "t-chat",
    });
    expect(reply.body.data.status).toBe("processed");
    // The webhook's host does not resolve here: the first attempt fails and the message says so.
    const message = await eventually(async () => (await messagesOf("t-chat")).find((m) => m.status === "error"), 15_000);
    expect(message).toMatchObject({ channel: "chat", content: "Hi Chatty", errorId: "unexpected_chat_error" });
    const subscriber = (await stack.request("GET", "/v1/subscribers/chatty")).body.data;
    expect(subscriber.channels).toEqual([
      expect.objectContaining({ providerId: "slack", credentials: expect.objectContaining({ webhookUrl: "https://hooks.example.com/chatty" }) }),
    ]);
  });
});

describe("bulk and broadcast", () => {
  let name: string;
  beforeAll(async () => {
    name = await createWorkflow({ name: "Bulk note", steps: [inApp("Bulk {{n}}")] });
  });

  it("accepts 100 events with one result each, in order", async () => {
    const events = Array.from({ length: 100 }, (_, n) => ({ name, to: `bulk-${n % 10}`, payload: { n }, transactionId: `t-bulk-${n}` }));
    const reply = await stack.request("POST", "/v1/events/trigger/bulk", { events });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toHaveLength(100);
    expect(reply.body.data.map((r) => r.transactionId)).toEqual(events.map((e) => e.transactionId));
    expect((await awaitMessages("t-bulk-99", 1))[0]?.content).toBe("Bulk 99");
  });

  it("generates a distinct transactionId for each event that has none, across many bulks", async () => {
    const generated: string[] = [];
    for (let bulk = 0; bulk < 5; bulk += 1) {
      const reply = await stack.request<Data<{ status: string; transactionId: string }[]>>("POST", "/v1/events/trigger/bulk", {
        events: Array.from({ length: 100 }, () => ({ name, to: "bulk-generated" })),
      });
      expect(reply.status).toBe(201);
      for (const result of reply.body.data) {
        expect(result.status).toBe("processed");
        generated.push(result.transactionId);
      }
    }
    expect(generated).toHaveLength(500);
    for (const id of generated) expect(id).toMatch(/^txn_[0-9a-f]{8}[0-9a-z]{12}$/);
    expect(new Set(generated).size).toBe(500);
  });

  it("refuses 101 events with 422 naming events", async () => {
    const reply = await stack.request("POST", "/v1/events/trigger/bulk", { events: Array.from({ length: 101 }, () => ({ name, to: "x" })) });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.events.messages[0]).toBe("events must contain no more than 100 elements");
  });

  it("fails one bad event alone", async () => {
    const reply = await stack.request("POST", "/v1/events/trigger/bulk", {
      events: [{ name, to: "ada", transactionId: "t-bulk-good" }, { name: "missing-workflow", to: "ada" }, { to: "ada" }],
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data[0]).toMatchObject({ acknowledged: true, status: "processed" });
    expect(reply.body.data[1]).toEqual({ acknowledged: true, status: "error", error: ["workflow_not_found"] });
    expect(reply.body.data[2]).toMatchObject({ acknowledged: true, status: "error" });
  });

  it("broadcasts to every subscriber of the environment (200, a UUID transactionId)", async () => {
    const other = await stack.createKey("Broadcast");
    const as = { authorization: `ApiKey ${other}` };
    const created = await stack.request("POST", "/v1/workflows", { name: "All hands", active: true, steps: [inApp("All hands")] }, as);
    const identifier = created.body.data.triggers[0].identifier;
    for (let start = 0; start < 250; start += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, offset) => stack.request("POST", "/v1/subscribers", { subscriberId: `everyone-${start + offset}` }, as)),
      );
    }
    const reply = await stack.request("POST", "/v1/events/trigger/broadcast", { name: identifier, payload: {} }, as);
    expect(reply.status).toBe(200);
    expect(reply.body.data.status).toBe("processed");
    expect(reply.body.data.transactionId).toMatch(/^[0-9a-f-]{36}$/);
    const transactionId = String(reply.body.data.transactionId);
    const count = async () => (await stack.request("GET", `/v1/messages?transactionId=${transactionId}&limit=1000`, undefined, as)).body.data.length as number;
    await eventually(async () => ((await count()) >= 250 ? true : undefined), 20_000);
    expect(await count()).toBe(250);
    const inactive = await stack.request("POST", "/v1/workflows", { name: "Off", steps: [inApp("x")] }, as);
    const off = await stack.request("POST", "/v1/events/trigger/broadcast", { name: inactive.body.data.triggers[0].identifier, payload: {} }, as);
    // As Novu answers a broadcast: processed, whatever the workflow's state; nothing is sent.
    expect(off.body.data).toEqual({ acknowledged: true, status: "processed", transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await stack.request("GET", `/v1/messages?transactionId=${off.body.data.transactionId}`, undefined, as)).body.data).toEqual([]);
  });

  it("requires a payload on broadcast", async () => {
    expect((await stack.request("POST", "/v1/events/trigger/broadcast", { name })).status).toBe(422);
  });
});

describe("delays", () => {
  it("runs the steps after a delay once it has passed; canceling during the delay drops them", async () => {
    const name = await createWorkflow({
      name: "Delayed",
      steps: [inApp("before"), { template: { type: "delay" }, metadata: { type: "regular", amount: 3, unit: "seconds" } }, inApp("after")],
    });
    const started = Date.now();
    await trigger({ name, to: "ada", transactionId: "t-delay" });
    await trigger({ name, to: "ada", transactionId: "t-delay-canceled" });
    await eventually(async () => ((await messagesOf("t-delay")).length >= 1 && (await messagesOf("t-delay-canceled")).length >= 1 ? true : undefined), 15_000);
    const early = await messagesOf("t-delay");
    if (Date.now() - started < 2_500) expect(early.map((m) => m.content)).toEqual(["before"]);
    expect((await stack.request("DELETE", "/v1/events/trigger/t-delay-canceled")).status).toBe(200);

    const done = await awaitMessages("t-delay", 2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(done.map((m) => m.content).sort()).toEqual(["after", "before"]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await messagesOf("t-delay-canceled")).map((m) => m.content)).toEqual(["before"]);
  });

  it("goes on after a broadcast's delay for the subscribers the broadcast reached, not for those made since", async () => {
    const as = { authorization: `ApiKey ${await stack.createKey("Delayed broadcast")}` };
    const created = await stack.request(
      "POST",
      "/v1/workflows",
      {
        name: "Delayed all hands",
        active: true,
        steps: [inApp("now"), { template: { type: "delay" }, metadata: { type: "regular", amount: 2, unit: "seconds" } }, inApp("later")],
      },
      as,
    );
    for (const subscriberId of ["early-1", "early-2"]) await stack.request("POST", "/v1/subscribers", { subscriberId }, as);
    const reply = await stack.request("POST", "/v1/events/trigger/broadcast", { name: created.body.data.triggers[0].identifier, payload: {} }, as);
    const transactionId = String(reply.body.data.transactionId);
    const messages = async () =>
      (
        await stack.request<Data<{ content: string; subscriber: { subscriberId: string } }[]>>(
          "GET",
          `/v1/messages?transactionId=${transactionId}&limit=1000`,
          undefined,
          as,
        )
      ).body.data
        .map((message) => `${message.subscriber.subscriberId}:${message.content}`)
        .sort();
    await eventually(async () => ((await messages()).length >= 2 ? true : undefined), 15_000);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "late" }, as);
    await eventually(async () => ((await messages()).length >= 4 ? true : undefined), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await messages()).toEqual(["early-1:later", "early-1:now", "early-2:later", "early-2:now"]);
  });

  it("uses overrides.delay and a scheduled delay's payload date", async () => {
    const regular = await createWorkflow({
      name: "Delayed long",
      steps: [{ template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "days" } }, inApp("soon")],
    });
    await trigger({ name: regular, to: "ada", transactionId: "t-delay-override", overrides: { delay: { amount: 1, unit: "seconds" } } });
    expect((await awaitMessages("t-delay-override", 1)).map((m) => m.content)).toEqual(["soon"]);
    const scheduled = await createWorkflow({
      name: "Scheduled",
      steps: [{ template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "sendAt" } }, inApp("on time")],
    });
    await trigger({ name: scheduled, to: "ada", transactionId: "t-scheduled", payload: { sendAt: new Date(Date.now() + 1_500).toISOString() } });
    expect((await awaitMessages("t-scheduled", 1)).map((m) => m.content)).toEqual(["on time"]);

    // Without a date at the path, the trigger is refused as Novu refuses it, and nothing runs.
    for (const payload of [{}, { sendAt: "next tuesday" }]) {
      const refused = await trigger({ name: scheduled, to: "ada", transactionId: "t-scheduled-undated", payload });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe("payload is missing required key(s) and type(s): sendAt (ISO Date)");
    }
    const bulk = await stack.request<Data<{ status: string; error: string[] }[]>>("POST", "/v1/events/trigger/bulk", {
      events: [{ name: scheduled, to: "ada", payload: {}, transactionId: "t-scheduled-bulk" }],
    });
    expect(bulk.body.data).toEqual([{ acknowledged: true, status: "error", error: ["payload is missing required key(s) and type(s): sendAt (ISO Date)"] }]);
    expect(await messagesOf("t-scheduled-undated")).toEqual([]);
  });
});

describe("cancel", () => {
  it("answers, as Novu does, true only when it stopped work still waiting: false for an unknown transaction, one sent already, or a second cancel", async () => {
    const cancel = (transactionId: string) => stack.request("DELETE", `/v1/events/trigger/${transactionId}`);
    // Unknown: false, not an error, so the SDKs' cancel does not throw.
    expect(await cancel("never-sent")).toMatchObject({ status: 200, body: { data: false } });
    const sent = await createWorkflow({ name: "Sent at once", steps: [inApp("c")] });
    await trigger({ name: sent, to: "ada", transactionId: "t-cancel-sent" });
    await awaitMessages("t-cancel-sent", 1);
    expect((await cancel("t-cancel-sent")).body).toEqual({ data: false });

    const delayed = await createWorkflow({
      name: "Cancelable",
      steps: [inApp("before"), { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "hours" } }, inApp("after")],
    });
    await trigger({ name: delayed, to: "ada", transactionId: "t-cancel" });
    const pool = createPool(stack.database.url, 1);
    try {
      // Cancelled while its delay waits.
      await eventually(async () => {
        const { rowCount } = await pool.query(
          "SELECT 1 FROM triggers.schedules s JOIN triggers.trigger_records r ON r.id = s.trigger_id WHERE r.transaction_id = 't-cancel'",
        );
        return rowCount ? true : undefined;
      }, 15_000);
    } finally {
      await pool.end();
    }
    expect(await cancel("t-cancel")).toMatchObject({ status: 200, body: { data: true } });
    expect((await cancel("t-cancel")).body).toEqual({ data: false });
  });
});
