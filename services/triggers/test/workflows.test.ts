import type { MessageInitShape } from "@bufbuild/protobuf";
import type { workflowsV1 } from "@notify/proto";
import { fieldErrorsOf, StepType } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, inMemoryClients, newScope, openDatabase, rpcError, scopeHeaders, type Fixture } from "./fixtures.js";

type CreateInit = MessageInitShape<typeof workflowsV1.CreateWorkflowRequestSchema>;

let fixture: Fixture;
let client: ReturnType<typeof inMemoryClients>["workflows"];
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClients(fixture.pool).workflows;
});
afterAll(() => fixture?.close());

const newCall = () => ({ headers: scopeHeaders(newScope()) });

const inApp = (content: string) => ({ template: { type: StepType.IN_APP, content: { case: "text" as const, value: content } } });

describe("notification groups", () => {
  it("creates the General group once per environment, however many first calls race", async () => {
    const call = newCall();
    const replies = await Promise.all(Array.from({ length: 8 }, () => client.listNotificationGroups({}, call)));
    for (const reply of replies) expect(reply.groups.map((group) => group.name)).toEqual(["General"]);
    expect(new Set(replies.map((reply) => reply.groups[0]!.id)).size).toBe(1);
  });

  it("creates named groups under General and refuses a taken name", async () => {
    const call = newCall();
    const group = await client.createNotificationGroup({ name: "Marketing" }, call);
    const { groups } = await client.listNotificationGroups({}, call);
    expect(groups.map((one) => one.name)).toEqual(["General", "Marketing"]);
    expect(group.parentId).toBe(groups[0]!.id);
    expect((await rpcError(client.createNotificationGroup({ name: "Marketing" }, call))).code).toBe(Code.AlreadyExists);
    expect((await rpcError(client.createNotificationGroup({ name: "General" }, call))).code).toBe(Code.AlreadyExists);
  });
});

describe("workflows", () => {
  it("assigns step ids, links each step to the one before and puts the workflow in General", async () => {
    const call = newCall();
    const workflow = await client.createWorkflow(
      {
        name: "Order shipped",
        steps: [inApp("{{orderId}} shipped"), { ...inApp("again"), uuid: "client-uuid", variants: [{ ...inApp("v1"), filters: [] }, inApp("v2")] }],
      },
      call,
    );
    const [first, second] = workflow.steps;
    expect(first!.id).toMatch(/^[0-9a-f]{24}$/);
    expect(first!.template!.id).toBe(first!.id);
    expect(first!.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(first!.active).toBe(true);
    expect(first!.parentId).toBeUndefined();
    expect(second!.parentId).toBe(first!.id);
    expect(second!.uuid).toBe("client-uuid");
    expect(second!.variants[1]!.parentId).toBe(second!.variants[0]!.id);
    expect(workflow.notificationGroup?.name).toBe("General");
    expect(workflow).toMatchObject({ identifier: "order-shipped", active: false, draft: true, critical: false, variables: ["orderId"] });
    expect(workflow.preferenceSettings).toMatchObject({ email: true, sms: true, inApp: true, chat: true, push: true });
  });

  it("makes trigger identifiers unique in the environment, also under concurrent creates", async () => {
    const call = newCall();
    const created = await Promise.all(Array.from({ length: 6 }, () => client.createWorkflow({ name: "Digest Weekly" }, call)));
    const identifiers = created.map((workflow) => workflow.identifier);
    expect(new Set(identifiers).size).toBe(6);
    expect(identifiers).toContain("digest-weekly");
    for (const identifier of identifiers) expect(identifier).toMatch(/^digest-weekly(-[0-9a-z]{1,6})?$/);
    // Another environment has its own namespace.
    expect((await client.createWorkflow({ name: "Digest Weekly" }, newCall())).identifier).toBe("digest-weekly");
  });

  it("resolves a workflow by id, identifier or slug, and by identifier only when asked to", async () => {
    const call = newCall();
    const workflow = await client.createWorkflow({ name: "Password reset", steps: [inApp("x")] }, call);
    for (const value of [workflow.id, workflow.identifier, workflow.slug]) {
      expect((await client.getWorkflow({ key: { case: "any", value } }, call)).id).toBe(workflow.id);
    }
    expect((await client.getWorkflow({ key: { case: "identifier", value: "password-reset" } }, call)).id).toBe(workflow.id);
    expect((await rpcError(client.getWorkflow({ key: { case: "identifier", value: workflow.id } }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.getWorkflow({ key: { case: "any", value: workflow.id } }, newCall()))).code).toBe(Code.NotFound);
    expect((await rpcError(client.getWorkflow({ key: { case: "any", value: "password-reset_wf_0" } }, call))).code).toBe(Code.NotFound);
  });

  it("answers INVALID_ARGUMENT naming the field for unknown groups, feeds and bad templates, storing nothing", async () => {
    const call = newCall();
    const feed = await client.createFeed({ name: "news" }, call);
    const attempts: [CreateInit, string][] = [
      [{ name: "a", notificationGroupId: "65a1b2c3d4e5f60718293a4b" }, "notificationGroupId"],
      [
        { name: "b", steps: [inApp("x"), { template: { type: StepType.IN_APP, content: { case: "text", value: "y" }, feedId: "65a1b2c3d4e5f60718293a4b" } }] },
        "steps[1].template.feedId",
      ],
      [
        { name: "c", steps: [{ ...inApp("ok"), variants: [{ template: { type: StepType.IN_APP, content: { case: "text", value: "v" }, feedId: "nope" } }] }] },
        "steps[0].variants[0].template.feedId",
      ],
      [{ name: "d", steps: [inApp("{{#if open}}")] }, "steps[0].template.content"],
    ];
    for (const [request, field] of attempts) {
      const error = await rpcError(client.createWorkflow(request, call));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(Object.keys(fieldErrorsOf(error) ?? {})).toEqual([field]);
    }
    expect((await client.listWorkflows({ page: 0, limit: 10 }, call)).totalCount).toBe(0);
    // A live feed is accepted; a deleted one is not.
    const withFeed = { name: "feed", steps: [{ template: { type: StepType.IN_APP, content: { case: "text" as const, value: "x" }, feedId: feed.id } }] };
    expect((await client.createWorkflow(withFeed, call)).steps[0]!.template!.feedId).toBe(feed.id);
    await client.deleteFeed({ id: feed.id }, call);
    expect((await rpcError(client.createWorkflow(withFeed, call))).code).toBe(Code.InvalidArgument);
  });

  it("keeps the ids of the steps an update names by _id or uuid and gives new ones to the rest", async () => {
    const call = newCall();
    const workflow = await client.createWorkflow({ name: "Steps", steps: [inApp("one"), inApp("two"), inApp("three")] }, call);
    const [one, two] = workflow.steps;
    const updated = await client.updateWorkflow(
      {
        workflowId: workflow.identifier,
        steps: { steps: [{ ...inApp("two, first now"), uuid: two!.uuid }, { ...inApp("one"), id: one!.id }, inApp("new")] },
      },
      call,
    );
    expect(updated.steps.map((step) => step.id)).toEqual([two!.id, one!.id, expect.not.stringMatching(workflow.steps[2]!.id)]);
    expect(updated.steps[1]!.parentId).toBe(two!.id);
    expect(updated.steps[0]!.parentId).toBeUndefined();
    // Untouched fields stay; the identifier only changes when asked.
    expect(updated).toMatchObject({ name: "Steps", identifier: "steps" });
  });

  it("changes the identifier on update unless another workflow has it", async () => {
    const call = newCall();
    await client.createWorkflow({ name: "Taken" }, call);
    const workflow = await client.createWorkflow({ name: "Mine" }, call);
    expect((await rpcError(client.updateWorkflow({ workflowId: workflow.id, identifier: "taken" }, call))).code).toBe(Code.AlreadyExists);
    expect((await client.updateWorkflow({ workflowId: workflow.id, identifier: "renamed" }, call)).identifier).toBe("renamed");
    expect((await client.getWorkflow({ key: { case: "identifier", value: "renamed" } }, call)).id).toBe(workflow.id);
  });

  it("soft-deletes: the workflow disappears everywhere and its identifier becomes free", async () => {
    const call = newCall();
    const workflow = await client.createWorkflow({ name: "Gone", active: true, steps: [inApp("x")] }, call);
    expect((await client.deleteWorkflow({ workflowId: workflow.slug }, call)).id).toBe(workflow.id);
    expect((await rpcError(client.getWorkflow({ key: { case: "any", value: workflow.id } }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.deleteWorkflow({ workflowId: workflow.id }, call))).code).toBe(Code.NotFound);
    expect((await client.listActiveWorkflows({}, call)).workflows).toEqual([]);
    expect((await client.listWorkflows({ page: 0, limit: 10 }, call)).workflows).toEqual([]);
    expect((await client.createWorkflow({ name: "Gone" }, call)).identifier).toBe("gone");
  });

  it("lists active workflows with their active step channels, criticality, channel settings and tags, in pages", async () => {
    const call = newCall();
    const mixed = await client.createWorkflow(
      {
        name: "Mixed",
        active: true,
        critical: true,
        preferenceSettings: { email: false },
        tags: ["billing", "ops"],
        steps: [
          { template: { type: StepType.EMAIL, content: { case: "text", value: "e" }, subject: "s" } },
          { template: { type: StepType.DELAY }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
          { ...inApp("i"), active: false },
          { template: { type: StepType.SMS, content: { case: "text", value: "s" } } },
          { template: { type: StepType.EMAIL, content: { case: "text", value: "again" } } },
        ],
      },
      call,
    );
    await client.createWorkflow({ name: "Inactive", steps: [inApp("x")] }, call);
    const second = await client.createWorkflow({ name: "Second", active: true, steps: [inApp("x")] }, call);
    const toggled = await client.createWorkflow({ name: "Toggled", steps: [inApp("x")] }, call);
    expect(await client.setWorkflowStatus({ workflowId: toggled.identifier, active: true }, call)).toMatchObject({ active: true, draft: false });

    const page = await client.listActiveWorkflows({ limit: 2 }, call);
    expect(page.workflows.map((workflow) => workflow.name)).toEqual(["Mixed", "Second"]);
    expect(page.workflows[0]).toMatchObject({
      id: mixed.id,
      identifier: "mixed",
      slug: mixed.slug,
      critical: true,
      channels: ["email", "sms"],
      preferenceSettings: { email: false, sms: true, inApp: true, chat: true, push: true },
      tags: ["billing", "ops"],
    });
    expect(page.workflows[1]).toMatchObject({ id: second.id, channels: ["in_app"], critical: false, tags: [] });
    expect(page.next).toBe(second.id);
    const rest = await client.listActiveWorkflows({ limit: 2, after: page.next! }, call);
    expect(rest.workflows.map((workflow) => workflow.id)).toEqual([toggled.id]);
    expect(rest.next).toBeUndefined();
    expect((await rpcError(client.listActiveWorkflows({ limit: 1001 }, call))).code).toBe(Code.InvalidArgument);
  });

  it("batch-gets live workflows of the environment by id, leaving out deleted, foreign and malformed ids", async () => {
    const call = newCall();
    const kept = await client.createWorkflow({ name: "Kept", steps: [inApp("x")] }, call);
    const deleted = await client.createWorkflow({ name: "Deleted" }, call);
    await client.deleteWorkflow({ workflowId: deleted.id }, call);
    const foreign = await client.createWorkflow({ name: "Foreign" }, newCall());
    const reply = await client.batchGetWorkflows({ ids: [kept.id, deleted.id, foreign.id, kept.id, "kept", ""] }, call);
    expect(reply.workflows).toEqual([kept]);
    expect((await client.batchGetWorkflows({ ids: [] }, call)).workflows).toEqual([]);
    const tooMany = await rpcError(client.batchGetWorkflows({ ids: Array.from({ length: 1001 }, () => kept.id) }, call));
    expect(tooMany.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(tooMany)).toHaveProperty("ids");
  });

  it("pages the workflow list newest first and searches by name", async () => {
    const call = newCall();
    for (const name of ["Alpha", "Beta", "Alphabet"]) await client.createWorkflow({ name }, call);
    const first = await client.listWorkflows({ page: 0, limit: 2 }, call);
    expect(first.workflows.map((workflow) => workflow.name)).toEqual(["Alphabet", "Beta"]);
    expect(first).toMatchObject({ hasMore: true, totalCount: 3 });
    const found = await client.listWorkflows({ page: 0, limit: 10, query: "alpha" }, call);
    expect(found.workflows.map((workflow) => workflow.name)).toEqual(["Alphabet", "Alpha"]);
    expect((await client.listWorkflows({ page: 0, limit: 10, query: "%" }, call)).workflows).toEqual([]);
  });
});

describe("feeds", () => {
  it("creates feeds named by their identifier, refuses duplicates and deletes them", async () => {
    const call = newCall();
    const news = await client.createFeed({ name: "news" }, call);
    await client.createFeed({ name: "alerts" }, call);
    expect(news).toMatchObject({ name: "news", identifier: "news" });
    expect((await rpcError(client.createFeed({ name: "news" }, call))).code).toBe(Code.AlreadyExists);
    expect((await client.listFeeds({ identifiers: ["alerts", "unknown"] }, call)).feeds.map((feed) => feed.identifier)).toEqual(["alerts"]);
    const remaining = await client.deleteFeed({ id: news.id }, call);
    expect(remaining.feeds.map((feed) => feed.identifier)).toEqual(["alerts"]);
    expect((await rpcError(client.deleteFeed({ id: news.id }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.deleteFeed({ id: "not-an-id" }, call))).code).toBe(Code.NotFound);
    expect((await client.createFeed({ name: "news" }, call)).id).not.toBe(news.id);
    expect((await client.listFeeds({}, newCall())).feeds).toEqual([]);
  });
});

describe("Novu v2's fields", () => {
  it("merges the user level of preferences over the workflow level, and a v1 write replaces both", async () => {
    const call = newCall();
    const workflow = await client.createWorkflow(
      {
        name: "Levels",
        identifier: "levels",
        preferences: {
          workflow: { enabled: false, readOnly: false, channels: { email: true } },
          user: { enabled: true, readOnly: true, channels: { sms: false } },
        },
      },
      call,
    );
    expect(workflow.identifier).toBe("levels");
    expect(workflow.critical).toBe(true);
    // The user level names no email: its own `enabled` decides before the workflow level is asked.
    expect(workflow.preferenceSettings).toMatchObject({ email: true, sms: false, inApp: true, chat: true, push: true });
    expect(workflow.workflowPreferences?.enabled).toBe(false);
    expect(workflow.userPreferences?.channels?.sms).toBe(false);

    const workflowOnly = await client.updateWorkflow({ workflowId: "levels", preferences: { workflow: { enabled: false, readOnly: false } } }, call);
    expect(workflowOnly.critical).toBe(false);
    expect(workflowOnly.preferenceSettings).toMatchObject({ email: false, sms: false, inApp: false, chat: false, push: false });
    expect(workflowOnly.userPreferences).toBeUndefined();

    const v1 = await client.updateWorkflow({ workflowId: "levels", preferenceSettings: { email: false } }, call);
    expect(v1.workflowPreferences).toBeUndefined();
    expect(v1.preferenceSettings).toMatchObject({ email: false, sms: true, inApp: true });
  });

  it("suffixes a taken identifier as Novu's create does, and refuses a payload schema ajv cannot compile and a stepId given twice", async () => {
    const call = newCall();
    await client.createWorkflow({ name: "One", identifier: "taken" }, call);
    const suffixed = (await client.createWorkflow({ name: "Two", identifier: "taken" }, call)).identifier;
    expect(suffixed).toMatch(/^taken-[0-9a-z]+$/);
    // A copy into another environment must keep its identifier: it is refused instead.
    expect((await rpcError(client.createWorkflow({ name: "Copy", identifier: "taken", exactIdentifier: true }, call))).code).toBe(Code.AlreadyExists);
    const badSchema = await rpcError(client.createWorkflow({ name: "Three", payloadSchema: { type: "not-a-type" } }, call));
    expect(Object.keys(fieldErrorsOf(badSchema) ?? {})).toEqual(["payloadSchema"]);
    const twice = await rpcError(
      client.createWorkflow(
        {
          name: "Four",
          steps: [
            { ...inApp("a"), stepId: "s" },
            { ...inApp("b"), stepId: "s" },
          ],
        },
        call,
      ),
    );
    expect(Object.keys(fieldErrorsOf(twice) ?? {})).toEqual(["steps[1].stepId"]);
    const { workflows } = await client.listWorkflows({ limit: 10 }, call);
    expect(workflows.map((one) => one.identifier).sort()).toEqual(["taken", suffixed]);
  });

  it("derives stepIds from step names, numbering the ones taken", async () => {
    const workflow = await client.createWorkflow(
      { name: "Named", steps: [{ ...inApp("a"), name: "Hello World" }, { ...inApp("b"), name: "Hello world" }, inApp("c")] },
      newCall(),
    );
    expect(workflow.steps.map((one) => one.stepId)).toEqual(["hello-world", "hello-world-2", "in-app"]);
    // A numbered id that another step already has is numbered again.
    const crowded = await client.createWorkflow(
      {
        name: "Crowded",
        steps: [
          { ...inApp("a"), name: "x" },
          { ...inApp("b"), name: "x-3" },
          { ...inApp("c"), name: "x" },
        ],
      },
      newCall(),
    );
    expect(crowded.steps.map((one) => one.stepId)).toEqual(["x", "x-3", "x-3-2"]);
  });

  it("keeps a kept step's stepId through a rename and a stepId given in the update, as Novu does", async () => {
    const call = newCall();
    const workflow = await client.createWorkflow(
      {
        name: "Kept ids",
        steps: [
          { ...inApp("a"), name: "Welcome" },
          { ...inApp("b"), name: "Reminder" },
        ],
      },
      call,
    );
    const [welcome, reminder] = workflow.steps;
    const updated = await client.updateWorkflow(
      {
        workflowId: workflow.identifier,
        steps: {
          steps: [
            { ...inApp("b"), name: "Welcome", id: reminder!.id },
            { ...inApp("a"), name: "Greeting", id: welcome!.id, stepId: "greeting" },
            { ...inApp("c"), name: "Welcome" },
          ],
        },
      },
      call,
    );
    expect(updated.steps.map((one) => one.stepId)).toEqual(["reminder", "welcome", "welcome-3"]);
  });
});
