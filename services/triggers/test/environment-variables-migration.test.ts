import { migrate, objectId, type Pool } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../src/server.js";
import * as store from "../src/workflows/store.js";
import { callAs, inMemoryClients, newScope, openDatabaseBefore } from "./fixtures.js";

let database: Awaited<ReturnType<typeof openDatabaseBefore>>;
let pool: Pool;
beforeAll(async () => {
  database = await openDatabaseBefore("017");
  pool = database.pool;
});
afterAll(() => database?.close());

describe("migration 017 (environment variable readers)", () => {
  it("moves the env.KEY a liquid workflow listed as payload variables to its environment variables, and leaves handlebars ones be", async () => {
    const scope = newScope();
    const groupId = objectId();
    await store.insertGeneralGroup(pool, scope.environmentId, { id: groupId, organizationId: scope.organizationId });
    const insert = async (identifier: string, engine: string, variables: string[]) => {
      const id = objectId();
      await pool.query(
        `INSERT INTO triggers.workflows (environment_id, id, organization_id, creator_id, name, description, trigger_identifier, active, draft,
           critical, tags, preference_settings, steps, active_channels, variables, subscriber_variables, notification_group_id, template_engine)
         VALUES ($1, $2, $3, $3, $4, '', $4, true, false, false, '{}', $5, '[]', '{}', $6, '{}', $7, $8)`,
        [scope.environmentId, id, scope.organizationId, identifier, JSON.stringify({ email: true }), variables, groupId, engine],
      );
      return id;
    };
    const liquid = await insert("liquid", "liquid", ["payload.id", "env.BASE_URL", "env", "env.TOKEN.part", "env.BASE_URL"]);
    const handlebars = await insert("handlebars", "handlebars", ["name", "env.BASE_URL"]);

    expect(await migrate(pool, migrations)).toContain("017_environment_variable_readers.sql");

    const { workflows } = inMemoryClients(pool);
    const read = async (id: string) => {
      const workflow = await workflows.getWorkflow({ key: { case: "any", value: id } }, callAs(scope));
      return [workflow.variables, [...workflow.environmentVariables].sort()];
    };
    expect(await read(liquid)).toEqual([["payload.id"], ["BASE_URL", "TOKEN"]]);
    expect(await read(handlebars)).toEqual([["name", "env.BASE_URL"], []]);
    const readers = await workflows.listEnvironmentVariableReaders({ key: "BASE_URL" }, callAs(scope));
    expect(readers.workflows.map((reader) => reader.identifier)).toEqual(["liquid"]);
  });
});
