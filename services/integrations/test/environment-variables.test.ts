import { Code } from "@connectrpc/connect";
import { fieldErrorsOf } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_VARIABLES } from "../src/environment-variables/service.js";
import { createSecretBox } from "../src/secrets.js";
import { callAs, inMemoryVariablesClient, newScope, openDatabase, rpcError, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let client: ReturnType<typeof inMemoryVariablesClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryVariablesClient(fixture.pool);
});
afterAll(() => fixture?.close());

const MASK = "••••••••";

describe("environment variables", () => {
  it("are the organization's, each environment seeing and setting its own value", async () => {
    const development = newScope();
    const production = newScope(development.organizationId);
    const created = await client.createEnvironmentVariable(
      { key: "BASE_URL", values: [{ environmentId: development.environmentId, value: "https://dev.example.com" }] },
      callAs(development),
    );
    expect(created).toMatchObject({ key: "BASE_URL", type: "string", isSecret: false, organizationId: development.organizationId });
    expect(created.values).toEqual([expect.objectContaining({ environmentId: development.environmentId, value: "https://dev.example.com" })]);

    // Production sees the key without development's value, and sets its own.
    expect((await client.getEnvironmentVariable({ key: "BASE_URL" }, callAs(production))).values).toEqual([]);
    const updated = await client.updateEnvironmentVariable(
      { key: "BASE_URL", values: [{ environmentId: production.environmentId, value: "https://example.com" }] },
      callAs(production),
    );
    expect(updated.values.map(({ environmentId, value }) => ({ environmentId, value }))).toEqual([
      { environmentId: production.environmentId, value: "https://example.com" },
    ]);
    expect((await client.resolveEnvironmentVariables({}, callAs(development))).values).toEqual({ BASE_URL: "https://dev.example.com" });
    expect((await client.resolveEnvironmentVariables({}, callAs(production))).values).toEqual({ BASE_URL: "https://example.com" });

    // Found by a part of the key, in any case.
    const search = async (text: string) =>
      (await client.listEnvironmentVariables({ search: text }, callAs(production))).variables.map((variable) => variable.key);
    expect([await search("se_u"), await search("url"), await search("%")]).toEqual([["BASE_URL"], ["BASE_URL"], []]);

    // Another organization knows nothing of it.
    const stranger = newScope();
    expect((await rpcError(client.getEnvironmentVariable({ key: "BASE_URL" }, callAs(stranger)))).code).toBe(Code.NotFound);
    expect((await client.listEnvironmentVariables({}, callAs(stranger))).variables).toEqual([]);
    expect((await client.resolveEnvironmentVariables({}, callAs(stranger))).values).toEqual({});

    // A key may not be created twice in the organization, from any environment.
    const duplicate = await rpcError(client.createEnvironmentVariable({ key: "BASE_URL", values: [] }, callAs(production)));
    expect([duplicate.code, duplicate.rawMessage]).toEqual([Code.AlreadyExists, 'Environment variable with key "BASE_URL" already exists']);
  });

  it("keep secrets sealed and masked, opened only for rendering", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const created = await client.createEnvironmentVariable(
      { key: "API_TOKEN", isSecret: true, values: [{ environmentId: scope.environmentId, value: "s3cret" }] },
      call,
    );
    expect(created.values[0]?.value).toBe(MASK);
    expect((await client.listEnvironmentVariables({}, call)).variables[0]?.values[0]?.value).toBe(MASK);
    expect((await client.resolveEnvironmentVariables({}, call)).values).toEqual({ API_TOKEN: "s3cret" });
    const { rows } = await fixture.pool.query<{ value: Buffer }>("SELECT value FROM integrations.environment_variable_values WHERE variable_id = $1", [
      created.id,
    ]);
    expect(rows[0]!.value.includes(Buffer.from("s3cret"))).toBe(false);
    // Sealed with the row: another key cannot open it.
    const otherKey = inMemoryVariablesClient(fixture.pool, createSecretBox(Buffer.alloc(32, 9)));
    expect((await rpcError(otherKey.resolveEnvironmentVariables({}, call))).code).toBe(Code.Internal);

    // The mask sent back would overwrite the secret with it: refused.
    const masked = await rpcError(client.updateEnvironmentVariable({ key: "API_TOKEN", values: [{ environmentId: scope.environmentId, value: MASK }] }, call));
    expect(masked.code).toBe(Code.FailedPrecondition);
    expect((await client.resolveEnvironmentVariables({}, call)).values).toEqual({ API_TOKEN: "s3cret" });
  });

  it("refuse what an environment's caller may not do, changing nothing", async () => {
    const scope = newScope();
    const other = newScope(scope.organizationId);
    const call = callAs(scope);
    await client.createEnvironmentVariable({ key: "REGION", values: [{ environmentId: scope.environmentId, value: "eu" }] }, call);
    const refused = [
      client.createEnvironmentVariable({ key: "ZONE", values: [{ environmentId: other.environmentId, value: "x" }] }, call),
      client.updateEnvironmentVariable({ key: "REGION", values: [{ environmentId: other.environmentId, value: "us" }] }, call),
      client.updateEnvironmentVariable({ key: "REGION", newKey: "AREA" }, call),
      client.updateEnvironmentVariable({ key: "REGION", isSecret: true }, call),
    ];
    for (const attempt of refused) expect((await rpcError(attempt)).code).toBe(Code.PermissionDenied);
    // Naming what it already is changes nothing, and is no refusal.
    expect((await client.updateEnvironmentVariable({ key: "REGION", newKey: "REGION", isSecret: false, type: "string" }, call)).key).toBe("REGION");

    const invalid = await rpcError(
      client.createEnvironmentVariable(
        {
          key: "1st",
          type: "number",
          values: [
            { environmentId: scope.environmentId, value: "x".repeat(257) },
            { environmentId: scope.environmentId, value: "y" },
          ],
        },
        call,
      ),
    );
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(invalid) ?? {}).sort()).toEqual(["key", "type", "values", "values[0].value"]);
    expect((await rpcError(client.updateEnvironmentVariable({ key: "MISSING", values: [] }, call))).code).toBe(Code.NotFound);

    const listed = (await client.listEnvironmentVariables({}, call)).variables.map((variable) => [variable.key, variable.values[0]?.value]);
    expect(listed).toEqual([["REGION", "eu"]]);
  });

  it("are at most ten to an organization, even created at once", async () => {
    const scope = newScope();
    const creates = Array.from({ length: MAX_VARIABLES + 3 }, (_, index) =>
      client.createEnvironmentVariable({ key: `KEY_${index}`, values: [] }, callAs(scope)),
    );
    const outcomes = await Promise.allSettled(creates);
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(MAX_VARIABLES);
    const refusal = await rpcError(client.createEnvironmentVariable({ key: "ONE_MORE", values: [] }, callAs(scope)));
    expect([refusal.code, refusal.rawMessage]).toEqual([
      Code.FailedPrecondition,
      `Environment variables limit exceeded. Maximum allowed variables is ${MAX_VARIABLES}.`,
    ]);
    expect((await client.listEnvironmentVariables({}, callAs(scope))).variables).toHaveLength(MAX_VARIABLES);
  });

  it("lose an environment's value on delete, and go once no environment has one", async () => {
    const development = newScope();
    const production = newScope(development.organizationId);
    await client.createEnvironmentVariable({ key: "SHARED", values: [{ environmentId: development.environmentId, value: "d" }] }, callAs(development));
    await client.updateEnvironmentVariable({ key: "SHARED", values: [{ environmentId: production.environmentId, value: "p" }] }, callAs(production));

    await client.deleteEnvironmentVariable({ key: "SHARED" }, callAs(development));
    expect((await client.getEnvironmentVariable({ key: "SHARED" }, callAs(development))).values).toEqual([]);
    const again = await rpcError(client.deleteEnvironmentVariable({ key: "SHARED" }, callAs(development)));
    expect([again.code, again.rawMessage]).toEqual([Code.NotFound, 'Environment variable with key "SHARED" has no value for the authenticated environment']);
    expect((await client.resolveEnvironmentVariables({}, callAs(production))).values).toEqual({ SHARED: "p" });

    await client.deleteEnvironmentVariable({ key: "SHARED" }, callAs(production));
    expect((await rpcError(client.getEnvironmentVariable({ key: "SHARED" }, callAs(development)))).code).toBe(Code.NotFound);

    // One created without any value can be deleted by any of the organization's environments.
    await client.createEnvironmentVariable({ key: "EMPTY", values: [] }, callAs(development));
    await client.deleteEnvironmentVariable({ key: "EMPTY" }, callAs(production));
    expect((await client.listEnvironmentVariables({}, callAs(development))).variables).toEqual([]);
  });
});
