import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { layoutsV1, triggersV1, workflowsV1 } from "@notify/proto";
import { fieldErrorsOf, StepType } from "@notify/runtime";
import { inMemoryTransport } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LAYOUTS } from "../src/layouts/rules.js";
import { callAs, Code, inMemoryClients, newScope, openDatabase, rpcError, serviceRoutes, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let clients: ReturnType<typeof inMemoryClients>;
let triggers: ReturnType<typeof createClient<typeof triggersV1.TriggerService>>;
beforeAll(async () => {
  fixture = await openDatabase();
  clients = inMemoryClients(fixture.pool);
  triggers = createClient(triggersV1.TriggerService, inMemoryTransport(serviceRoutes(fixture.pool)));
});
afterAll(() => fixture?.close());

const { EditorType } = layoutsV1;
const html = (inside: string) => ({ body: `<html><body>${inside}</body></html>`, editorType: EditorType.HTML });

/** The messages of the field errors a refused update of the layout's content names. */
async function refusedContent(layoutId: string, email: { body: string; editorType: layoutsV1.EditorType }, call: ReturnType<typeof callAs>) {
  const error = await rpcError(clients.layouts.updateLayout({ layoutId, name: "x", content: { case: "email", value: email } }, call));
  expect(error.code).toBe(Code.InvalidArgument);
  return Object.values(fieldErrorsOf(error) ?? {}).flatMap((entry) => entry.messages);
}

/** A v2 (liquid) workflow of one email step naming `layoutId`. */
const emailWorkflow = (name: string, layoutId: string | undefined, templateEngine = workflowsV1.TemplateEngine.LIQUID) => ({
  name,
  active: true,
  templateEngine,
  steps: [
    {
      stepId: "mail",
      template: { type: StepType.EMAIL, subject: "s", content: { case: "text" as const, value: "<p>b</p>" }, ...(layoutId ? { layoutId } : {}) },
    },
  ],
});

describe("LayoutService", () => {
  it("makes exactly one default per environment, even when the first layouts are created at once", async () => {
    const call = callAs(newScope());
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, index) => clients.layouts.createLayout({ identifier: `l${index}`, name: `L ${index}` }, call)),
    );
    expect(created.filter((layout) => layout.isDefault)).toHaveLength(1);
    // Another environment has a default of its own.
    expect((await clients.layouts.createLayout({ identifier: "l0", name: "L 0" }, callAs(newScope()))).isDefault).toBe(true);
  });

  it(`holds at most ${MAX_LAYOUTS} layouts per environment`, async () => {
    const call = callAs(newScope());
    for (let index = 0; index < MAX_LAYOUTS; index += 1) await clients.layouts.createLayout({ identifier: `n${index}`, name: "n" }, call);
    const full = await rpcError(clients.layouts.createLayout({ identifier: "one-more", name: "n" }, call));
    expect(full.code).toBe(Code.FailedPrecondition);
    expect((await rpcError(clients.layouts.duplicateLayout({ layoutId: "n0", name: "copy" }, call))).code).toBe(Code.FailedPrecondition);
  });

  it("takes only content that can wrap every email: a document of its editor, the content variable, valid liquid reading no payload", async () => {
    const call = callAs(newScope());
    await clients.layouts.createLayout({ identifier: "rules", name: "Rules" }, call);
    expect(await refusedContent("rules", html("{{ subscriber.firstName }}"), call)).toEqual(['The layout body should contain the "content" variable']);
    expect(await refusedContent("rules", html("{{ content }} {{ payload.order }}"), call)).toEqual(['Variable "payload.order" is not supported']);
    expect((await refusedContent("rules", html("{{ content }}{% if subscriber.email %}"), call))[0]).toMatch(/^body is not a valid template: tag \{% if/);
    expect(await refusedContent("rules", { body: "<p>{{content}}</p>", editorType: EditorType.HTML }, call)).toEqual(["Content must be a valid HTML content"]);
    const noContent = JSON.stringify({ type: "doc", content: [{ type: "paragraph", content: [{ type: "text", text: "Hi" }] }] });
    expect(await refusedContent("rules", { body: noContent, editorType: EditorType.BLOCK }, call)).toEqual([
      'The layout body should contain the "content" variable',
    ]);

    const accepted = html("<h1>{{ subscriber.firstName | upcase }}</h1>{{content}}{% for link in context.tenant.data.links %}{{ link.url }}{% endfor %}");
    const updated = await clients.layouts.updateLayout({ layoutId: "rules", name: "Rules", content: { case: "email", value: accepted } }, call);
    expect(updated.email).toMatchObject(accepted);
    const cleared = await clients.layouts.updateLayout({ layoutId: "rules", name: "Rules", content: { case: "clearContent", value: true } }, call);
    expect(cleared.email).toBeUndefined();
  });

  it("names a v2 workflow's layout by identifier, lists its users, and unhooks it from them when it is deleted", async () => {
    const call = callAs(newScope());
    await clients.layouts.createLayout({ identifier: "default-one", name: "Default" }, call);
    const brand = await clients.layouts.createLayout({ identifier: "brand", name: "Brand" }, call);
    const byId = await clients.workflows.createWorkflow(emailWorkflow("By id", brand.id), call);
    const bySlug = await clients.workflows.createWorkflow(emailWorkflow("By slug", brand.slug), call);
    expect([byId, bySlug].map((workflow) => workflow.steps[0]!.template?.layoutId)).toEqual(["brand", "brand"]);
    // A v1 workflow's steps name legacy layouts, never these.
    const v1 = clients.workflows.createWorkflow(emailWorkflow("Old", "brand", workflowsV1.TemplateEngine.HANDLEBARS), call);
    expect((await rpcError(v1)).code).toBe(Code.NotFound);
    const missing = await rpcError(clients.workflows.createWorkflow(emailWorkflow("Missing", "nope"), call));
    expect(missing.code).toBe(Code.NotFound);
    expect(missing.rawMessage).toBe(`Layout not found for id nope in the environment ${call.headers["notify-environment-id"]}`);

    expect((await clients.layouts.getLayoutUsage({ layoutId: "brand" }, call)).workflows).toEqual([
      { $typeName: "notify.layouts.v1.UsingWorkflow", name: "By id", identifier: byId.identifier },
      { $typeName: "notify.layouts.v1.UsingWorkflow", name: "By slug", identifier: bySlug.identifier },
    ]);
    expect((await rpcError(clients.layouts.deleteLayout({ layoutId: "default-one" }, call))).code).toBe(Code.FailedPrecondition);
    await clients.layouts.deleteLayout({ layoutId: "brand" }, call);
    for (const workflow of [byId, bySlug]) {
      const kept = await clients.workflows.getWorkflow({ key: { case: "any", value: workflow.id } }, call);
      expect(kept.steps[0]!.template?.layoutId).toBeUndefined();
      expect(kept.steps[0]!.template?.subject).toBe("s");
    }
    expect((await rpcError(clients.layouts.getLayout({ layoutId: "brand" }, call))).code).toBe(Code.NotFound);
  });

  it("hands a trigger's job the layouts its email steps and overrides name, and no other", async () => {
    const call = callAs(newScope());
    for (const identifier of ["step-layout", "override-layout", "unused-layout"]) await clients.layouts.createLayout({ identifier, name: identifier }, call);
    const workflow = await clients.workflows.createWorkflow(emailWorkflow("Receipt", "step-layout"), call);
    const to = [{ kind: { case: "subscriberId" as const, value: "ada" } }];
    const reply = await triggers.triggerBatch(
      {
        events: [
          { name: workflow.identifier, to, transactionId: "own" },
          { name: workflow.identifier, to, transactionId: "overridden", overrides: { steps: { mail: { layoutId: "override-layout" } } } },
          { name: workflow.identifier, to, transactionId: "none", overrides: { channels: { email: { layoutId: null } } } },
          { name: workflow.identifier, to, transactionId: "missing", overrides: { layoutIdentifier: "no-such-layout" } },
        ],
      },
      call,
    );
    expect(reply.outcomes.every((outcome) => outcome.outcome.case === "result")).toBe(true);
    const { rows } = await fixture.pool.query<{ job: Buffer }>("SELECT job FROM triggers.outbox WHERE environment_id = $1", [
      call.headers["notify-environment-id"],
    ]);
    const layoutsOf = Object.fromEntries(
      rows.map((row) => fromBinary(triggersV1.TriggerJobSchema, row.job)).map((job) => [job.transactionId, job.layouts.map((layout) => layout.identifier)]),
    );
    // A layout named but missing travels as nothing: the worker fails that step.
    expect(layoutsOf).toEqual({ own: ["step-layout"], overridden: ["override-layout"], none: [], missing: [] });
  });

  it("binds a v1 email step saved without a legacy layout to the default of that moment, and keeps it through an update that names none", async () => {
    const call = callAs(newScope());
    const v1 = workflowsV1.TemplateEngine.HANDLEBARS;
    // No default yet: nothing to bind.
    expect((await clients.workflows.createWorkflow(emailWorkflow("Before", undefined, v1), call)).steps[0]!.template?.layoutId).toBeUndefined();
    const first = await clients.legacyLayouts.createLegacyLayout(
      { identifier: "first", name: "First", content: "<div>{{{body}}}</div>", isDefault: true },
      call,
    );
    const workflow = await clients.workflows.createWorkflow(emailWorkflow("Bound", undefined, v1), call);
    expect(workflow.steps[0]!.template?.layoutId).toBe(first.id);

    const second = await clients.legacyLayouts.createLegacyLayout(
      { identifier: "second", name: "Second", content: "<p>{{{body}}}</p>", isDefault: true },
      call,
    );
    expect((await clients.legacyLayouts.getLegacyLayout({ layoutId: first.id }, call)).isDefault).toBe(false);
    const step = workflow.steps[0]!;
    const updated = await clients.workflows.updateWorkflow(
      { workflowId: workflow.id, steps: { steps: [{ ...step, template: { ...step.template!, layoutId: "", subject: "changed" } }] } },
      call,
    );
    expect(updated.steps[0]!.template).toMatchObject({ layoutId: first.id, subject: "changed" });
    // A layout a step newly names must exist; it is kept by id.
    const named = await clients.workflows.createWorkflow(emailWorkflow("Named", "second", v1), call);
    expect(named.steps[0]!.template?.layoutId).toBe(second.id);
    expect((await rpcError(clients.workflows.createWorkflow(emailWorkflow("Unknown", "no-such-layout", v1), call))).code).toBe(Code.NotFound);
    // One named before notify served layouts (one of Novu's) is not looked up again when kept.
    await fixture.pool.query(`UPDATE triggers.workflows SET steps = jsonb_set(steps, '{0,template,layoutId}', '"6500000000000000000000aa"') WHERE id = $1`, [
      named.id,
    ]);
    const old = (await clients.workflows.getWorkflow({ key: { case: "any", value: named.id } }, call)).steps[0]!;
    const resaved = await clients.workflows.updateWorkflow({ workflowId: named.id, steps: { steps: [old] }, name: "Named again" }, call);
    expect(resaved.steps[0]!.template?.layoutId).toBe("6500000000000000000000aa");
    // A v2 workflow's steps are never bound to a legacy layout.
    expect((await clients.workflows.createWorkflow(emailWorkflow("V2", undefined), call)).steps[0]!.template?.layoutId).toBeUndefined();
    expect(second.isDefault).toBe(true);
  });
});
