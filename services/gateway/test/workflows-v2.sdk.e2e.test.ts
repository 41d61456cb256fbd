import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSession } from "./inbox-helpers.js";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
});
afterAll(() => stack?.stop());

const inAppStep = {
  name: "Bell",
  type: "in_app" as const,
  controlValues: {
    subject: "Order {{payload.order}}",
    body: "Order {{payload.order}} for {{subscriber.firstName}}",
    avatar: "https://example.com/avatar.png",
    primaryAction: { label: "Open" },
    redirect: { url: "/orders/{{payload.order}}" },
    data: { order: "{{payload.order}}", kind: "order", nested: { label: "#{{payload.order}}" }, count: 2 },
  },
};

/** Triggers the workflow to a new subscriber, and answers their Inbox session and the first notification it shows. */
async function firstNotification(workflowId: string, subscriber: { subscriberId: string; firstName: string }, payload: Record<string, unknown>) {
  await stack.request("POST", "/v1/subscribers", subscriber);
  const triggered = await stack.request("POST", "/v1/events/trigger", { name: workflowId, to: subscriber.subscriberId, payload });
  expect(triggered.status, JSON.stringify(triggered.body)).toBe(201);
  const session = await openSession(stack, subscriber.subscriberId);
  const notification = await eventually(async () => {
    const page = await stack.request<{ data: Json[] }>("GET", "/v1/inbox/notifications", undefined, { authorization: `Bearer ${session.token}` });
    return page.body.data[0];
  }, 15_000);
  return { session, notification };
}

describe("/v2/workflows through @novu/api 3.19.1", () => {
  it("creates, reads (by workflowId and _id), updates, patches, lists and deletes a workflow", async () => {
    const created = await novu.workflows.create({
      name: "Orders v2",
      workflowId: "orders-v2",
      description: "order updates",
      tags: ["orders"],
      active: true,
      severity: "high",
      steps: [
        inAppStep,
        { name: "Wait", type: "delay", controlValues: { type: "regular", amount: 5, unit: "minutes" } },
        { name: "Mail", type: "email", controlValues: { subject: "Order {{payload.order}}", body: "<p>Hi</p>", editorType: "html" } },
      ],
      preferences: {
        workflow: { all: { enabled: true, readOnly: false }, channels: { email: { enabled: false } } },
        user: { all: { enabled: true, readOnly: false }, channels: { in_app: { enabled: true }, sms: { enabled: false } } },
      },
    });
    const workflow = created.result;
    expect(workflow).toMatchObject({ workflowId: "orders-v2", name: "Orders v2", active: true, status: "ACTIVE", severity: "high", tags: ["orders"] });
    expect(workflow.id).toMatch(/^[0-9a-f]{24}$/);
    expect(workflow.steps.map((step) => [step.type, step.stepId, step.name])).toEqual([
      ["in_app", "bell", "Bell"],
      ["delay", "wait", "Wait"],
      ["email", "mail", "Mail"],
    ]);
    expect(workflow.steps[0]!.controlValues).toMatchObject({ ...inAppStep.controlValues, primaryAction: { label: "Open" } });
    expect(workflow.steps[1]!.controlValues).toMatchObject({ type: "regular", amount: 5, unit: "minutes" });
    expect(workflow.steps[2]!.controlValues).toMatchObject({ subject: "Order {{payload.order}}", body: "<p>Hi</p>", editorType: "html" });
    expect(workflow.preferences.default.channels["email"]).toEqual({ enabled: false });
    expect(workflow.preferences.user?.channels["sms"]).toEqual({ enabled: false });

    const byId = await novu.workflows.get(workflow.id);
    expect(byId.result).toEqual(workflow);
    expect((await novu.workflows.get("orders-v2")).result).toEqual(workflow);

    const step = await novu.workflows.steps.retrieve("orders-v2", "bell");
    expect(step.result).toMatchObject({ stepId: "bell", type: "in_app", workflowId: "orders-v2", workflowDatabaseId: workflow.id });
    expect((await novu.workflows.steps.retrieve(workflow.id, workflow.steps[2]!.id)).result.stepId).toBe("mail");

    const updated = await novu.workflows.update(
      {
        name: "Orders v2 (renamed)",
        active: true,
        severity: "low",
        steps: [{ id: workflow.steps[0]!.id, ...inAppStep, controlValues: { ...inAppStep.controlValues, body: "Changed {{payload.order}}" } }],
        preferences: {},
      },
      "orders-v2",
    );
    expect(updated.result).toMatchObject({ name: "Orders v2 (renamed)", severity: "low", workflowId: "orders-v2" });
    // A workflowId in the body does not rename the trigger identifier, as in Novu.
    const put = await stack.request<Data<{ workflowId: string }>>("PUT", "/v2/workflows/orders-v2", {
      name: "Orders v2 (renamed)",
      workflowId: "elsewhere",
      steps: updated.result.steps.map((one) => ({ id: one.id, name: one.name, type: one.type, controlValues: one.controlValues })),
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data.workflowId).toBe("orders-v2");
    expect(updated.result.steps).toHaveLength(1);
    expect(updated.result.steps[0]!.id).toBe(workflow.steps[0]!.id);
    expect(updated.result.steps[0]!.controlValues).toMatchObject({ body: "Changed {{payload.order}}" });
    expect(updated.result.preferences).toEqual({
      user: null,
      default: {
        all: { enabled: true, readOnly: false },
        channels: Object.fromEntries(["in_app", "email", "sms", "chat", "push"].map((channel) => [channel, { enabled: true }])),
      },
    });

    const patched = await novu.workflows.patch({ active: false, description: "patched", tags: ["orders", "v2"] }, "orders-v2");
    expect(patched.result).toMatchObject({ active: false, status: "INACTIVE", description: "patched", tags: ["orders", "v2"], name: "Orders v2 (renamed)" });

    const listed = await novu.workflows.list({ query: "renamed", limit: 10, offset: 0 });
    expect(listed.result.workflows.map((one) => one.workflowId)).toEqual(["orders-v2"]);
    expect(listed.result.totalCount).toBe(1);
    expect((await novu.workflows.list({ query: "orders-v2" })).result.workflows.map((one) => one.workflowId)).toEqual(["orders-v2"]);
    expect((await novu.workflows.list({ tags: ["v2"], status: ["INACTIVE"] })).result.totalCount).toBe(1);
    // No workflow is in error.
    expect((await novu.workflows.list({ status: ["ERROR"] })).result).toMatchObject({ workflows: [], totalCount: 0 });
    expect((await novu.workflows.list({ tags: ["v2"], status: ["ACTIVE"] })).result.totalCount).toBe(0);

    await novu.workflows.delete("orders-v2");
    expect((await failureOf(novu.workflows.get("orders-v2", undefined, undefined, once))).statusCode).toBe(404);
  });

  it("pages the list by offset and limit, newest first, and bounds the limit", async () => {
    for (const index of [1, 2, 3]) await novu.workflows.create({ name: `Paged ${index}`, workflowId: `paged-${index}`, steps: [] });
    const first = await novu.workflows.list({ query: "paged-", limit: 2, offset: 0 });
    expect(first.result.workflows.map((one) => one.workflowId)).toEqual(["paged-3", "paged-2"]);
    expect(first.result.totalCount).toBe(3);
    const second = await novu.workflows.list({ query: "paged-", limit: 2, offset: 2 });
    expect(second.result.workflows.map((one) => one.workflowId)).toEqual(["paged-1"]);
    const oldest = await novu.workflows.list({ query: "paged-", limit: 1, orderDirection: "ASC" });
    expect(oldest.result.workflows.map((one) => one.workflowId)).toEqual(["paged-1"]);
    const tooMany = await stack.request("GET", "/v2/workflows?limit=101");
    expect(tooMany.status).toBe(422);

    // Ordered by name or by last update, as Novu's list orders them.
    await novu.workflows.patch({ name: "Paged 9" }, "paged-1");
    const byName = await novu.workflows.list({ query: "paged-", orderBy: "name", orderDirection: "ASC" });
    expect(byName.result.workflows.map((one) => one.name)).toEqual(["Paged 2", "Paged 3", "Paged 9"]);
    const byUpdate = await novu.workflows.list({ query: "paged-", orderBy: "updatedAt", orderDirection: "DESC" });
    expect(byUpdate.result.workflows.map((one) => one.workflowId)).toEqual(["paged-1", "paged-3", "paged-2"]);
  });

  it("shows when a workflow was last triggered and orders the list by it, never-triggered ones as the oldest", async () => {
    for (const index of [1, 2, 3])
      await novu.workflows.create({ name: `Triggered ${index}`, workflowId: `triggered-${index}`, active: true, steps: [inAppStep] });
    const before = Date.now();
    for (const index of [2, 1]) {
      const reply = await stack.request("POST", "/v1/events/trigger", { name: `triggered-${index}`, to: "last-triggered-reader" });
      expect(reply.body.data.status).toBe("processed");
    }
    const latest = await novu.workflows.get("triggered-1");
    expect(latest.result.lastTriggeredAt).toBeDefined();
    expect(Date.parse(latest.result.lastTriggeredAt!)).toBeGreaterThanOrEqual(before - 1_000);
    expect((await novu.workflows.get("triggered-3")).result.lastTriggeredAt).toBeUndefined();
    const newest = await novu.workflows.list({ query: "triggered-", orderBy: "lastTriggeredAt", orderDirection: "DESC" });
    expect(newest.result.workflows.map((one) => [one.workflowId, one.lastTriggeredAt !== undefined])).toEqual([
      ["triggered-1", true],
      ["triggered-2", true],
      ["triggered-3", false],
    ]);
    const oldest = await novu.workflows.list({ query: "triggered-", orderBy: "lastTriggeredAt", orderDirection: "ASC" });
    expect(oldest.result.workflows.map((one) => one.workflowId)).toEqual(["triggered-3", "triggered-2", "triggered-1"]);
  });

  it("makes a workflow created or replaced without `active` active, as Novu's upsert does; the SDK sends false unless told", async () => {
    const inAppBody = { name: "Bell", type: "in_app", controlValues: { body: "Hi" } };
    const raw = await stack.request<{ data: { active: boolean; status: string } }>("POST", "/v2/workflows", {
      name: "Raw",
      workflowId: "raw-active",
      steps: [inAppBody],
    });
    expect([raw.status, raw.body.data.active, raw.body.data.status]).toEqual([201, true, "ACTIVE"]);
    expect((await stack.request("POST", "/v1/events/trigger", { name: "raw-active", to: "raw-reader" })).body.data.status).toBe("processed");

    const bySdk = await novu.workflows.create({ name: "By SDK", workflowId: "sdk-inactive", steps: [inAppStep] });
    expect(bySdk.result.active).toBe(false);
    const replaced = await stack.request<{ data: { active: boolean } }>("PUT", "/v2/workflows/sdk-inactive", { name: "By SDK", steps: [inAppBody] });
    expect([replaced.status, replaced.body.data.active]).toEqual([200, true]);
  });

  it("refuses bad input with a 4xx JSON error and changes nothing", async () => {
    await novu.workflows.create({ name: "Guarded", workflowId: "guarded", steps: [inAppStep] });
    const before = await stack.request<Data<{ _id: string }>>("GET", "/v2/workflows/guarded");

    // A taken workflowId is suffixed, as Novu's create does, not refused (a 409 has the SDK retry for an hour).
    const again = await novu.workflows.create({ name: "Again", workflowId: "guarded", steps: [] });
    expect(again.result.workflowId).toMatch(/^guarded-[0-9a-z]+$/);
    expect(again.result.id).not.toBe(before.body.data._id);

    const bad: [string, string, unknown][] = [
      ["POST", "/v2/workflows", { name: "No id", steps: [] }],
      ["POST", "/v2/workflows", { name: "Bad id", workflowId: "has spaces", steps: [] }],
      ["POST", "/v2/workflows", { name: "Bad step", workflowId: "bad-step", steps: [{ name: "x", type: "http_request" }] }],
      ["POST", "/v2/workflows", { name: "Bad controls", workflowId: "bad-controls", steps: [{ name: "x", type: "in_app", controlValues: { body: 5 } }] }],
      ["POST", "/v2/workflows", { name: "Skip", workflowId: "skip", steps: [{ name: "x", type: "sms", controlValues: { skip: { "==": [1, 1], and: [] } } }] }],
      [
        "POST",
        "/v2/workflows",
        { name: "Cron", workflowId: "cron", steps: [{ name: "x", type: "delay", controlValues: { type: "timed", cron: "61 * * * *" } }] },
      ],
      ["POST", "/v2/workflows", { name: "Cron", workflowId: "cron", steps: [{ name: "x", type: "digest", controlValues: { type: "timed" } }] }],
      ["POST", "/v2/workflows", { name: "Severity", workflowId: "severity", severity: "urgent", steps: [] }],
      ["POST", "/v2/workflows", { name: "Schema", workflowId: "schema", payloadSchema: { type: "no-such-type" }, steps: [] }],
      [
        "POST",
        "/v2/workflows",
        {
          name: "Twice",
          workflowId: "twice",
          steps: [
            { ...inAppStep, stepId: "bell" },
            { ...inAppStep, name: "Other", stepId: "bell" },
          ],
        },
      ],
      ["PUT", "/v2/workflows/guarded", { name: "", steps: [] }],
      ["PUT", "/v2/workflows/guarded", { name: "No steps" }],
      ["PATCH", "/v2/workflows/guarded", { active: "yes" }],
      ["PATCH", "/v2/workflows/guarded", { payloadSchema: { properties: 3 } }],
      ["GET", "/v2/workflows?orderBy=email", undefined],
      ["GET", "/v2/workflows/guarded/steps/no-such-step", undefined],
      ["GET", "/v2/workflows/no-such-workflow", undefined],
      ["PUT", "/v2/workflows/guarded/sync", { targetEnvironmentId: 7 }],
    ];
    for (const [method, path, body] of bad) {
      const reply = await stack.request<{ statusCode: number; message: string }>(method, path, body);
      expect(reply.status, `${method} ${path} ${JSON.stringify(reply.body)}`).toBeGreaterThanOrEqual(400);
      expect(reply.status, `${method} ${path}`).toBeLessThan(500);
      expect(reply.body.statusCode).toBe(reply.status);
      expect(typeof reply.body.message).toBe("string");
    }
    expect((await stack.request("GET", "/v2/workflows/guarded")).body).toEqual(before.body);
    for (const workflowId of ["bad-step", "bad-controls", "skip", "cron", "severity", "schema", "twice"]) {
      expect((await stack.request("GET", `/v2/workflows/${workflowId}`)).status).toBe(404);
    }
  });

  it("shows v1 workflows to v2 and v2 workflows to v1", async () => {
    const v1 = await stack.request<Data<{ _id: string; triggers: { identifier: string }[] }>>("POST", "/v1/workflows", {
      name: "Made by v1",
      active: true,
      critical: true,
      preferenceSettings: { email: false },
      steps: [{ name: "Hello", template: { type: "sms", content: "Hi {{name}}" } }],
    });
    expect(v1.status).toBe(201);
    const seen = await novu.workflows.get(v1.body.data._id);
    expect(seen.result).toMatchObject({ workflowId: v1.body.data.triggers[0]!.identifier, name: "Made by v1", active: true, severity: "none" });
    expect(seen.result.steps[0]).toMatchObject({ type: "sms", stepId: "hello", name: "Hello", controlValues: { body: "Hi {{name}}" } });
    expect(seen.result.preferences.default).toMatchObject({ all: { readOnly: true }, channels: { email: { enabled: false }, sms: { enabled: true } } });
    expect(seen.result.preferences.user).toBeNull();

    await novu.workflows.create({ name: "Made by v2", workflowId: "made-by-v2", active: true, steps: [inAppStep] });
    const v2 = await stack.request<Data<{ name: string; active: boolean; triggers: { identifier: string }[]; steps: { template: { type: string } }[] }>>(
      "GET",
      "/v1/workflows/made-by-v2",
    );
    expect(v2.status).toBe(200);
    expect(v2.body.data).toMatchObject({ name: "Made by v2", active: true, triggers: [{ identifier: "made-by-v2" }] });
    expect(v2.body.data.steps.map((step) => step.template.type)).toEqual(["in_app"]);
  });

  it("delivers a trigger of a v2 workflow: an in-app message with the workflow's severity and the step's rendered data", async () => {
    await novu.workflows.create({ name: "Deliver v2", workflowId: "deliver-v2", active: true, severity: "medium", steps: [inAppStep] });
    const { session, notification } = await firstNotification("deliver-v2", { subscriberId: "v2-ada", firstName: "Ada" }, { order: 42 });
    expect(notification).toMatchObject({
      subject: "Order 42",
      body: "Order 42 for Ada",
      severity: "medium",
      data: { order: "42", kind: "order", nested: { label: "#42" }, count: 2 },
      redirect: { url: "/orders/42" },
      primaryAction: { label: "Open", isCompleted: false },
      workflow: { identifier: "deliver-v2", severity: "medium" },
    });

    // The trigger's overrides.severity still wins over the workflow's.
    await stack.request("POST", "/v1/events/trigger", { name: "deliver-v2", to: "v2-ada", payload: { order: 43 }, overrides: { severity: "low" } });
    const overridden = await eventually(async () => {
      const page = await stack.request<{ data: { severity: string; body: string }[] }>("GET", "/v1/inbox/notifications", undefined, {
        authorization: `Bearer ${session.token}`,
      });
      return page.body.data.find((one) => one.body.startsWith("Order 43"));
    }, 15_000);
    expect(overridden.severity).toBe("low");
  });

  it("waits for a timed delay's cron to occur, and shows its controls as written", async () => {
    const delay = { name: "Wait", type: "delay" as const, controlValues: { type: "timed", cron: "*/2 * * * * *" } };
    const created = await novu.workflows.create({ name: "Cron delay", workflowId: "cron-delay", active: true, steps: [delay, inAppStep] });
    expect(created.result.steps[0]!.controls.values).toMatchObject({ type: "timed", cron: "*/2 * * * * *" });
    const digest = { name: "Weekly", type: "digest" as const, controlValues: { type: "timed", cron: "0 9 * * 1", digestKey: "post" } };
    const digested = await novu.workflows.create({ name: "Cron digest", workflowId: "cron-digest", steps: [digest, inAppStep] });
    expect(digested.result.steps[0]!.controls.values).toMatchObject({ type: "timed", cron: "0 9 * * 1", digestKey: "post" });
    // Novu's timed digest controls carry no type: the cron makes it timed.
    const untyped = { name: "Weekly", type: "digest" as const, controlValues: { cron: "0 9 * * 1", digestKey: "post" } };
    const weekly = await novu.workflows.create({ name: "Untyped cron digest", workflowId: "untyped-cron-digest", steps: [untyped, inAppStep] });
    expect(weekly.result.steps[0]!.controls.values).toMatchObject({ type: "timed", cron: "0 9 * * 1", digestKey: "post" });

    const { notification } = await firstNotification("cron-delay", { subscriberId: "v2-cron", firstName: "Cy" }, { order: 7 });
    expect(notification).toMatchObject({ body: "Order 7 for Cy" });
  });

  it("refuses triggers whose payload does not match the schema when validatePayload is set", async () => {
    const payloadSchema = {
      type: "object",
      properties: { order: { type: "number" }, currency: { type: "string", default: "EUR" }, replyTo: { type: "string", format: "email" } },
      required: ["order"],
      additionalProperties: false,
    };
    await novu.workflows.create({ name: "Checked", workflowId: "checked", active: true, validatePayload: true, payloadSchema, steps: [inAppStep] });
    await stack.request("POST", "/v1/subscribers", { subscriberId: "v2-bob", firstName: "Bob" });

    const refused = await failureOf(novu.trigger({ workflowId: "checked", to: "v2-bob", payload: { order: "forty-two", extra: true } }, undefined, once));
    expect(refused).toBeInstanceOf(errors.PayloadValidationExceptionDto);
    const dto = refused as errors.PayloadValidationExceptionDto;
    expect(dto.statusCode).toBe(400);
    expect(dto.type).toBe("PAYLOAD_VALIDATION_ERROR");
    expect(dto.errors.map((error) => error.field).sort()).toEqual(["order", "root"]);
    expect(dto.message).toMatch(/^Payload validation failed: /);

    const missing = await stack.request<{ errors: { field: string }[] }>("POST", "/v1/events/trigger", { name: "checked", to: "v2-bob", payload: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((error) => error.field)).toEqual(["order"]);

    // Formats are checked, as Novu checks them (ajv-formats).
    const misformatted = await stack.request<{ errors: { field: string; message: string }[] }>("POST", "/v1/events/trigger", {
      name: "checked",
      to: "v2-bob",
      payload: { order: 7, replyTo: "not an address" },
    });
    expect(misformatted.status).toBe(400);
    expect(misformatted.body.errors).toEqual([expect.objectContaining({ field: "replyTo", message: 'must match format "email"' })]);

    const accepted = await novu.trigger({ workflowId: "checked", to: "v2-bob", payload: { order: 7, replyTo: "bob@example.com" } });
    expect(accepted.result.status).toBe("processed");

    const bulk = await novu.triggerBulk({ events: [{ workflowId: "checked", to: "v2-bob", payload: {} }] });
    expect(bulk.result[0]).toMatchObject({ acknowledged: true, status: "error" });

    // Switched off, the same payload passes.
    await novu.workflows.patch({ validatePayload: false }, "checked");
    const unchecked = await novu.trigger({ workflowId: "checked", to: "v2-bob", payload: { order: "forty-two" } });
    expect(unchecked.result.status).toBe("processed");
  });

  it("gives a workflow made without a payload schema Novu's open one, checked, so that a schema set later applies at once", async () => {
    const open = await novu.workflows.create({ name: "Open", workflowId: "open-schema", active: true, steps: [inAppStep] });
    expect(open.result).toMatchObject({ payloadSchema: { type: "object", additionalProperties: true, properties: {} }, validatePayload: true });
    expect((await novu.trigger({ workflowId: "open-schema", to: "v2-bob", payload: { anything: [1, { at: "all" }] } })).result.status).toBe("processed");

    await novu.workflows.patch({ payloadSchema: { type: "object", properties: { order: { type: "number" } }, required: ["order"] } }, "open-schema");
    const refused = await stack.request<{ errors: { field: string }[] }>("POST", "/v1/events/trigger", { name: "open-schema", to: "v2-bob", payload: {} });
    expect([refused.status, refused.body.errors.map((error) => error.field)]).toEqual([400, ["order"]]);

    // A schema given without validatePayload is kept unchecked, as Novu keeps it.
    const given = await novu.workflows.create({
      name: "Given",
      workflowId: "given-schema",
      active: true,
      payloadSchema: { type: "object" },
      steps: [inAppStep],
    });
    expect(given.result).toMatchObject({ payloadSchema: { type: "object" }, validatePayload: false });
  });

  it("syncs a workflow to another environment of the organization, creating it and then updating it", async () => {
    const productionKey = await stack.createKey("Production");
    const production = await stack.request<Data<{ _id: string }>>("GET", "/v1/environments/me", undefined, { authorization: `ApiKey ${productionKey}` });
    const targetEnvironmentId = production.body.data._id;
    const productionNovu = new Novu({ secretKey: productionKey, serverURL: stack.url });

    await novu.workflows.create({ name: "Promoted", workflowId: "promoted", active: true, severity: "high", steps: [inAppStep] });
    const synced = await novu.workflows.sync({ targetEnvironmentId }, "promoted");
    expect(synced.result).toMatchObject({ workflowId: "promoted", severity: "high", active: true });
    const inProduction = (await productionNovu.workflows.get("promoted")).result;
    expect(inProduction.id).toBe(synced.result.id);
    expect(inProduction.steps[0]!.controlValues).toMatchObject(inAppStep.controlValues);
    expect((await novu.workflows.get("promoted", targetEnvironmentId)).result.id).toBe(inProduction.id);

    await novu.workflows.patch({ name: "Promoted again" }, "promoted");
    const again = await novu.workflows.sync({ targetEnvironmentId }, "promoted");
    expect(again.result).toMatchObject({ id: inProduction.id, name: "Promoted again" });
    expect(again.result.steps[0]!.id).toBe(inProduction.steps[0]!.id);

    expect((await failureOf(novu.workflows.sync({ targetEnvironmentId: synced.result.id }, "promoted", undefined, once))).statusCode).toBe(404);
    const same = await failureOf(novu.workflows.sync({ targetEnvironmentId: (await novu.workflows.get("promoted")).result.id }, "no-such", undefined, once));
    expect(same.statusCode).toBe(404);

    const otherOrganization = await stack.createKey("Development", "Another organization");
    const foreign = await stack.request<Data<{ _id: string }>>("GET", "/v1/environments/me", undefined, { authorization: `ApiKey ${otherOrganization}` });
    const refused = await failureOf(novu.workflows.sync({ targetEnvironmentId: foreign.body.data._id }, "promoted", undefined, once));
    expect(refused.statusCode).toBe(404);
    const foreignNovu = new Novu({ secretKey: otherOrganization, serverURL: stack.url });
    expect((await failureOf(foreignNovu.workflows.get("promoted", undefined, undefined, once))).statusCode).toBe(404);
  });

  it("refuses a sync to the caller's own environment", async () => {
    await novu.workflows.create({ name: "Stay", workflowId: "stay", steps: [] });
    const me = await stack.request<Data<{ _id: string }>>("GET", "/v1/environments/me");
    const refused = await failureOf(novu.workflows.sync({ targetEnvironmentId: me.body.data._id }, "stay", undefined, once));
    expect(refused.statusCode).toBe(400);
    expect(refused.message).toContain("Cannot sync workflow to the same environment");
  });
});
