import { migrate, objectId, Ordinal, StepType, Weekday, type Pool } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../src/server.js";
import * as store from "../src/workflows/store.js";
import { callAs, inMemoryClients, newScope, openDatabaseBefore } from "./fixtures.js";

/** Steps as the service stored them before step types, weekdays and ordinals were enums (captured from that build). */
const STORED_BEFORE = [
  {
    id: "65a1b2c3d4e5f60718293a01",
    uuid: "u1",
    active: true,
    template: { id: "65a1b2c3d4e5f60718293a01", type: "in_app", text: "Hello {{name}}" },
    variants: [
      {
        id: "65a1b2c3d4e5f60718293a02",
        uuid: "u2",
        active: true,
        template: { id: "65a1b2c3d4e5f60718293a02", type: "in_app", text: "Hello VIP {{name}}" },
        filters: [{ type: "STATEMENT", value: "AND", children: [{ field: "vip", value: "true", operator: "EQUAL", on: "payload" }] }],
      },
    ],
  },
  {
    id: "65a1b2c3d4e5f60718293a05",
    uuid: "u5",
    active: true,
    template: { id: "65a1b2c3d4e5f60718293a05", type: "delay" },
    parentId: "65a1b2c3d4e5f60718293a01",
    metadata: { type: "regular", amount: 1, unit: "hours" },
  },
  {
    id: "65a1b2c3d4e5f60718293a03",
    uuid: "u3",
    active: true,
    template: { id: "65a1b2c3d4e5f60718293a03", type: "digest" },
    parentId: "65a1b2c3d4e5f60718293a05",
    metadata: {
      type: "timed",
      amount: 1,
      unit: "months",
      timed: { atTime: "09:30", weekDays: ["monday", "friday"], ordinal: "last", ordinalValue: "weekday", monthlyType: "on" },
    },
  },
  {
    id: "65a1b2c3d4e5f60718293a04",
    uuid: "u4",
    active: true,
    template: { id: "65a1b2c3d4e5f60718293a04", type: "email", text: "Mail {{name}}", subject: "Hi" },
    parentId: "65a1b2c3d4e5f60718293a03",
  },
];

let database: Awaited<ReturnType<typeof openDatabaseBefore>>;
let pool: Pool;
beforeAll(async () => {
  database = await openDatabaseBefore("009");
  pool = database.pool;
});
afterAll(() => database?.close());

describe("migration 009 (step vocabulary enums)", () => {
  it("converts a workflow stored before it, which the service then reads as it was written", async () => {
    const scope = newScope();
    const groupId = objectId();
    await store.insertGeneralGroup(pool, scope.environmentId, { id: groupId, organizationId: scope.organizationId });
    const id = objectId();
    // Written as that build wrote it: columns added since then are not there yet.
    await pool.query(
      `INSERT INTO triggers.workflows (environment_id, id, organization_id, creator_id, name, description, trigger_identifier, active, draft,
         critical, tags, preference_settings, steps, active_channels, variables, subscriber_variables, notification_group_id)
       VALUES ($1, $2, $3, $3, 'Legacy', '', 'legacy', true, false, false, '{}', $4, $5, '{in_app,email}', '{name}', '{email}', $6)`,
      [
        scope.environmentId,
        id,
        scope.organizationId,
        JSON.stringify({ email: true, sms: true, in_app: true, chat: true, push: true }),
        JSON.stringify(STORED_BEFORE),
        groupId,
      ],
    );

    expect(await migrate(pool, migrations)).toContain("009_step_vocabulary_enums.sql");

    const workflow = await inMemoryClients(pool).workflows.getWorkflow({ key: { case: "any", value: id } }, callAs(scope));
    const [inApp, delay, digest, email] = workflow.steps;
    expect(workflow.steps.map((step) => step.template?.type)).toEqual([StepType.IN_APP, StepType.DELAY, StepType.DIGEST, StepType.EMAIL]);
    expect(inApp!.variants[0]!.template).toMatchObject({ type: StepType.IN_APP, content: { case: "text", value: "Hello VIP {{name}}" } });
    expect(delay!.metadata).toMatchObject({ type: "regular", amount: 1, unit: "hours" });
    expect(digest!.metadata?.timed).toMatchObject({
      atTime: "09:30",
      weekDays: [Weekday.MONDAY, Weekday.FRIDAY],
      ordinal: Ordinal.LAST,
      ordinalDays: [Weekday.MONDAY, Weekday.TUESDAY, Weekday.WEDNESDAY, Weekday.THURSDAY, Weekday.FRIDAY],
      monthlyType: "on",
    });
    expect(email!.template).toMatchObject({ type: StepType.EMAIL, subject: "Hi", content: { case: "text", value: "Mail {{name}}" } });
    for (const step of [...workflow.steps, ...inApp!.variants]) expect(step.template?.legacyType).toBe("");
  });
});
