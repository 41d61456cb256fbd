import { objectId } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/workflows/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await openDatabase();
});
afterAll(() => fixture?.close());

const columns = (identifier: string, groupId: string): store.WorkflowColumns => ({
  name: identifier,
  description: "",
  trigger_identifier: identifier,
  active: true,
  draft: false,
  critical: false,
  tags: ["a", "b"],
  preference_settings: { email: true, sms: true, in_app: true, chat: true, push: true },
  environment_variables: [],
  steps: [{ id: "x", template: { type: "in_app", text: "hi" } }],
  active_channels: ["in_app"],
  variables: [],
  subscriber_variables: [],
  notification_group_id: groupId,
  data: { nested: [1, 2] },
  severity: "high",
  validate_payload: true,
  payload_schema: { type: "object", required: ["a"] },
  preference_levels: { user: { enabled: true, channels: { email: false } } },
  template_engine: "liquid",
});

async function environment() {
  const environmentId = objectId();
  const organizationId = objectId();
  await store.insertGeneralGroup(fixture.pool, environmentId, { id: objectId(), organizationId });
  const group = await store.selectGroupByName(fixture.pool, environmentId, store.GENERAL_GROUP);
  const insert = (identifier: string) =>
    store.insertWorkflow(fixture.pool, environmentId, { id: objectId(), organizationId, creatorId: organizationId, columns: columns(identifier, group!.id) });
  return { environmentId, organizationId, groupId: group!.id, insert };
}

describe("workflow store", () => {
  it("round-trips arrays, jsonb arrays and objects, and joins the group", async () => {
    const env = await environment();
    const row = await env.insert("round-trip");
    expect(row).toMatchObject({
      tags: ["a", "b"],
      steps: [{ id: "x", template: { type: "in_app", text: "hi" } }],
      data: { nested: [1, 2] },
      active_channels: ["in_app"],
      group_name: "General",
      severity: "high",
      validate_payload: true,
      payload_schema: { type: "object", required: ["a"] },
      preference_levels: { user: { enabled: true, channels: { email: false } } },
      template_engine: "liquid",
    });
  });

  it("lists by name or identifier, tags and status, newest or oldest first, and counts the same rows", async () => {
    const env = await environment();
    const [first, second, third] = [await env.insert("first-one"), await env.insert("second-one"), await env.insert("third")];
    await fixture.pool.query("UPDATE triggers.workflows SET tags = '{x}', active = false WHERE id = $1", [second!.id]);
    const list = async (filter: Partial<store.WorkflowFilter>, oldestFirst = false) => {
      const full = { query: undefined, tags: [], active: undefined, ...filter };
      const rows = await store.selectWorkflowPage(fixture.pool, env.environmentId, { offset: 0, limit: 10, filter: full, oldestFirst, orderBy: "created" });
      expect(await store.countWorkflows(fixture.pool, env.environmentId, 100, full)).toBe(rows.length);
      return rows.map((row) => row.id);
    };
    expect(await list({})).toEqual([third!.id, second!.id, first!.id]);
    expect(await list({}, true)).toEqual([first!.id, second!.id, third!.id]);
    expect(await list({ query: "-ONE" })).toEqual([second!.id, first!.id]);
    expect(await list({ tags: ["x", "nothing"] })).toEqual([second!.id]);
    expect(await list({ active: true })).toEqual([third!.id, first!.id]);
    expect(await list({ active: false, query: "first" })).toEqual([]);
  });

  it("inserts nothing for a trigger identifier a live workflow has, and frees it on soft delete", async () => {
    const env = await environment();
    const first = await env.insert("taken");
    expect(await env.insert("taken")).toBeUndefined();
    expect(await store.softDeleteWorkflow(fixture.pool, env.environmentId, first!.id)).toBe(first!.id);
    expect(await store.softDeleteWorkflow(fixture.pool, env.environmentId, first!.id)).toBeUndefined();
    expect(await env.insert("taken")).toBeDefined();
  });

  it("resolves a key by id before identifier before slug id, within the environment only", async () => {
    const env = await environment();
    const a = (await env.insert("alpha"))!;
    // A workflow whose identifier is another workflow's id: the id wins.
    const b = (await env.insert(a.id))!;
    expect((await store.selectWorkflowByKey(fixture.pool, env.environmentId, { id: a.id, identifier: a.id }))!.id).toBe(a.id);
    expect((await store.selectWorkflowByKey(fixture.pool, env.environmentId, { identifier: a.id }))!.id).toBe(b.id);
    expect((await store.selectWorkflowByKey(fixture.pool, env.environmentId, { identifier: "alpha", slugId: b.id }))!.id).toBe(a.id);
    expect((await store.selectWorkflowByKey(fixture.pool, env.environmentId, { identifier: "nothing", slugId: b.id }))!.id).toBe(b.id);
    expect(await store.selectWorkflowByKey(fixture.pool, objectId(), { id: a.id })).toBeUndefined();
  });

  it("creates the General group once and refuses a second group of a name", async () => {
    const env = await environment();
    await store.insertGeneralGroup(fixture.pool, env.environmentId, { id: objectId(), organizationId: env.organizationId });
    expect((await store.selectGroups(fixture.pool, env.environmentId, 10)).map((group) => group.id)).toEqual([env.groupId]);
    const row = { id: objectId(), organizationId: env.organizationId, name: "General", parentId: env.groupId };
    expect(await store.insertGroup(fixture.pool, env.environmentId, row)).toBeUndefined();
  });

  it("caps the live feeds of an environment and tells a taken identifier from a full one", async () => {
    const env = await environment();
    const feed = (name: string) => ({ id: objectId(), organizationId: env.organizationId, name });
    const first = await store.insertFeed(fixture.pool, env.environmentId, feed("one"), 2);
    expect(first).toMatchObject({ identifier: "one" });
    expect(await store.insertFeed(fixture.pool, env.environmentId, feed("one"), 2)).toBe("taken");
    await store.insertFeed(fixture.pool, env.environmentId, feed("two"), 2);
    expect(await store.insertFeed(fixture.pool, env.environmentId, feed("three"), 2)).toBe("full");
    await store.softDeleteFeed(fixture.pool, env.environmentId, (first as store.FeedRow).id);
    expect(await store.insertFeed(fixture.pool, env.environmentId, feed("three"), 2)).toMatchObject({ identifier: "three" });
    expect(await store.selectLiveFeedIds(fixture.pool, env.environmentId, [(first as store.FeedRow).id])).toEqual(new Set());
  });
});
