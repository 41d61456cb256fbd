import { Code } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { commonV1, connectionsV1 } from "@notify/proto";
import { fieldErrorsOf } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../src/secrets.js";
import { callAs, inMemoryClient, inMemoryConnectionsClient, newScope, openDatabase, rpcError, type Fixture, type TestScope } from "./fixtures.js";

let fixture: Fixture;
let integrations: ReturnType<typeof inMemoryClient>;
let client: ReturnType<typeof inMemoryConnectionsClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  integrations = inMemoryClient(fixture.pool);
  client = inMemoryConnectionsClient(fixture.pool);
});
afterAll(() => fixture?.close());

const MASK = "••••••••";
const { ConnectionMode } = connectionsV1;

/** A chat integration of the scope's environment, by identifier. */
const slack = (scope: TestScope, identifier = "slack-main", providerId = "slack") =>
  integrations.createIntegration({ providerId, channel: "chat", active: true, identifier }, callAs(scope));

const grant = (accessToken: string, extra: Partial<connectionsV1.ConnectionAuth> = {}) => ({
  workspace: { id: "T0001", name: "Acme" },
  auth: { accessToken, ...extra },
});

describe("channel connections", () => {
  it("are made through an integration of the environment, the tokens sealed, masked in answers and opened only to resolve", async () => {
    const scope = newScope();
    await slack(scope);
    const created = await client.createChannelConnection(
      {
        subscriberId: "ada",
        integrationIdentifier: "slack-main",
        workspace: { id: "T0001", name: "Acme", botUserId: "U0BOT" },
        auth: { accessToken: "xoxb-secret-access", refreshToken: "xoxe-secret-refresh", expiresAt: "2030-01-01T00:00:00.000Z" },
      },
      callAs(scope),
    );
    expect(created.identifier).toMatch(/^chconn_[\w-]{12}$/);
    expect(created).toMatchObject({
      integrationIdentifier: "slack-main",
      providerId: "slack",
      channel: "chat",
      subscriberId: "ada",
      contextKeys: [],
      workspace: { id: "T0001", name: "Acme", botUserId: "U0BOT" },
      auth: { accessToken: MASK, refreshToken: MASK, expiresAt: "2030-01-01T00:00:00.000Z" },
    });
    const fetched = await client.getChannelConnection({ identifier: created.identifier }, callAs(scope));
    expect(fetched.auth).toMatchObject({ accessToken: MASK, refreshToken: MASK });
    expect(fetched.auth?.refreshTokenExpiresAt).toBeUndefined();

    // No column of the row holds either token in clear.
    const { rows } = await fixture.pool.query<{ row: string; secrets: Buffer }>(
      "SELECT c::text AS row, auth_secrets AS secrets FROM integrations.channel_connections c WHERE identifier = $1",
      [created.identifier],
    );
    for (const token of ["xoxb-secret-access", "xoxe-secret-refresh"]) {
      expect(rows[0]!.row).not.toContain(token);
      expect(rows[0]!.secrets.includes(Buffer.from(token))).toBe(false);
    }

    const resolved = await client.resolveChannelConnection({ identifier: created.identifier, contextKeys: [] }, callAs(scope));
    expect(resolved).toMatchObject({
      identifier: created.identifier,
      integrationIdentifier: "slack-main",
      providerId: "slack",
      workspaceId: "T0001",
      accessToken: "xoxb-secret-access",
    });
    // Sealed with the process's key: another key cannot open it.
    const otherKey = inMemoryConnectionsClient(fixture.pool, createSecretBox(Buffer.alloc(32, 9)));
    expect((await rpcError(otherKey.resolveChannelConnection({ identifier: created.identifier }, callAs(scope)))).code).toBe(Code.Internal);
  });

  it("resolve only for exactly the contexts they were made for, in any order", async () => {
    const scope = newScope();
    await slack(scope);
    const call = callAs(scope);
    await client.createChannelConnection(
      { identifier: "scoped", subscriberId: "ada", contextKeys: ["tenant:acme", "team:blue"], integrationIdentifier: "slack-main", ...grant("tok-scoped") },
      call,
    );
    await client.createChannelConnection({ identifier: "plain", subscriberId: "ada", integrationIdentifier: "slack-main", ...grant("tok-plain") }, call);
    expect((await client.getChannelConnection({ identifier: "scoped" }, call)).contextKeys).toEqual(["team:blue", "tenant:acme"]);

    const resolve = (identifier: string, contextKeys: string[]) => client.resolveChannelConnection({ identifier, contextKeys }, call);
    expect((await resolve("scoped", ["tenant:acme", "team:blue"])).accessToken).toBe("tok-scoped");
    expect((await resolve("scoped", ["team:blue", "tenant:acme", "team:blue"])).accessToken).toBe("tok-scoped");
    expect((await resolve("plain", [])).accessToken).toBe("tok-plain");
    for (const [identifier, keys] of [
      ["scoped", ["tenant:acme"]],
      ["scoped", []],
      ["scoped", ["tenant:acme", "team:blue", "region:eu"]],
      ["plain", ["tenant:acme"]],
      ["missing", []],
    ] as const) {
      const refused = await rpcError(resolve(identifier, [...keys]));
      expect(refused.code, `${identifier} ${keys.join(",")}`).toBe(Code.NotFound);
    }
    expect((await rpcError(resolve("scoped", ["not a key"]))).code).toBe(Code.InvalidArgument);
  });

  it("follow Novu's connection modes", async () => {
    const scope = newScope();
    await slack(scope);
    const call = callAs(scope);
    const base = { integrationIdentifier: "slack-main", ...grant("tok") };
    const refusals = [
      { ...base, connectionMode: ConnectionMode.SHARED, subscriberId: "ada" },
      { ...base, connectionMode: ConnectionMode.SUBSCRIBER, contextKeys: ["tenant:acme"] },
      base,
    ];
    const messages = [];
    for (const request of refusals) {
      const refused = await rpcError(client.createChannelConnection(request, call));
      expect(refused.code).toBe(Code.FailedPrecondition);
      messages.push(refused.rawMessage);
    }
    expect(messages).toEqual([
      "A context is required when connectionMode is 'shared'",
      "subscriberId is required when connectionMode is 'subscriber'",
      "Either subscriberId or context must be provided",
    ]);

    // Shared: the subscriber given is not kept. Contexts alone make a shared connection.
    const shared = await client.createChannelConnection(
      { ...base, connectionMode: ConnectionMode.SHARED, subscriberId: "ada", contextKeys: ["tenant:acme"] },
      call,
    );
    expect(shared.subscriberId).toBeUndefined();
    const implied = await client.createChannelConnection({ ...base, contextKeys: ["tenant:zeta"] }, call);
    expect(implied.subscriberId).toBeUndefined();
    const both = await client.createChannelConnection({ ...base, subscriberId: "ada", contextKeys: ["tenant:acme"] }, call);
    expect([both.subscriberId, both.contextKeys]).toEqual(["ada", ["tenant:acme"]]);
  });

  it("refuse a taken identifier, a second connection of the same scope, an unknown integration and a bad grant", async () => {
    const scope = newScope();
    await slack(scope);
    await slack(scope, "slack-other");
    const call = callAs(scope);
    const base = { integrationIdentifier: "slack-main", ...grant("tok") };
    await client.createChannelConnection({ ...base, identifier: "first", subscriberId: "ada", contextKeys: ["tenant:acme"] }, call);
    await client.createChannelConnection({ ...base, identifier: "shared", contextKeys: ["tenant:acme"] }, call);

    const taken = await rpcError(client.createChannelConnection({ ...base, identifier: "first", subscriberId: "bob" }, call));
    expect([taken.code, taken.rawMessage]).toEqual([Code.AlreadyExists, "Channel connection with identifier 'first' already exists"]);
    for (const sameScope of [
      { ...base, identifier: "second", subscriberId: "ada", contextKeys: ["tenant:acme"] },
      { ...base, identifier: "shared-again", connectionMode: ConnectionMode.SHARED, contextKeys: ["tenant:acme"] },
    ]) {
      expect((await rpcError(client.createChannelConnection(sameScope, call))).code).toBe(Code.AlreadyExists);
    }
    // Another integration, subscriber or set of contexts is another scope.
    await client.createChannelConnection({ ...base, integrationIdentifier: "slack-other", subscriberId: "ada", contextKeys: ["tenant:acme"] }, call);
    await client.createChannelConnection({ ...base, subscriberId: "bob", contextKeys: ["tenant:acme"] }, call);
    await client.createChannelConnection({ ...base, subscriberId: "ada" }, call);

    const unknown = await rpcError(client.createChannelConnection({ ...base, integrationIdentifier: "nope", subscriberId: "ada" }, call));
    expect([unknown.code, unknown.rawMessage]).toEqual([Code.NotFound, "Integration not found: nope"]);

    const invalid = await rpcError(
      client.createChannelConnection({ integrationIdentifier: "slack-main", subscriberId: "ada", workspace: { id: "" }, auth: { accessToken: "" } }, call),
    );
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(invalid) ?? {}).sort()).toEqual(["auth.accessToken", "workspace.id"]);
    const masked = await rpcError(client.createChannelConnection({ ...base, subscriberId: "cy", ...grant(MASK) }, call));
    expect(masked.code).toBe(Code.FailedPrecondition);
    expect((await client.listChannelConnections({}, call)).totalCount).toBe(5);
  });

  it("are listed a page at a time, newest first, with Novu's filters", async () => {
    const scope = newScope();
    await slack(scope);
    await integrations.createIntegration({ providerId: "discord", channel: "chat", active: true, identifier: "discord-main" }, callAs(scope));
    const call = callAs(scope);
    const made = [
      { identifier: "c1", subscriberId: "ada", integrationIdentifier: "slack-main" },
      { identifier: "c2", subscriberId: "bob", integrationIdentifier: "slack-main" },
      { identifier: "c3", subscriberId: "ada", integrationIdentifier: "discord-main" },
      { identifier: "c4", contextKeys: ["tenant:acme", "team:blue"], integrationIdentifier: "slack-main" },
      { identifier: "c5", subscriberId: "ada", contextKeys: ["tenant:acme"], integrationIdentifier: "slack-main" },
    ];
    for (const request of made) await client.createChannelConnection({ ...request, ...grant(`tok-${request.identifier}`) }, call);
    const ids = async (request: MessageInitShape<typeof connectionsV1.ListChannelConnectionsRequestSchema>) =>
      (await client.listChannelConnections(request, call)).connections.map((connection) => connection.identifier);

    const first = await client.listChannelConnections({ limit: 2 }, call);
    expect([first.connections.map((connection) => connection.identifier), first.totalCount, first.totalCountCapped, first.previous]).toEqual([
      ["c5", "c4"],
      5,
      false,
      undefined,
    ]);
    expect(first.connections.every((connection) => connection.auth?.accessToken === MASK)).toBe(true);
    const second = await client.listChannelConnections({ limit: 2, after: first.next! }, call);
    expect(second.connections.map((connection) => connection.identifier)).toEqual(["c3", "c2"]);
    const third = await client.listChannelConnections({ limit: 2, after: second.next! }, call);
    expect([third.connections.map((connection) => connection.identifier), third.next]).toEqual([["c1"], undefined]);
    expect(await ids({ limit: 2, before: second.previous! })).toEqual(["c5", "c4"]);
    expect(await ids({ limit: 2, after: first.next!, includeCursor: true })).toEqual(["c4", "c3"]);
    expect(await ids({ limit: 3, direction: commonV1.SortDirection.ASC })).toEqual(["c1", "c2", "c3"]);
    expect(await ids({ after: "0123456789abcdef01234567" })).toEqual([]);

    // Updated last comes first by update.
    await client.updateChannelConnection({ identifier: "c1", ...grant("tok-c1-new") }, call);
    expect(await ids({ limit: 2, byUpdatedAt: true })).toEqual(["c1", "c5"]);

    expect(await ids({ subscriberId: "ada" })).toEqual(["c5", "c3", "c1"]);
    expect(await ids({ providerId: "discord" })).toEqual(["c3"]);
    expect(await ids({ integrationIdentifier: "slack-main", channel: "chat" })).toEqual(["c5", "c4", "c2", "c1"]);
    expect(await ids({ channel: "email" })).toEqual([]);
    expect(await ids({ contextKeys: ["team:blue", "tenant:acme"], filterContextKeys: true })).toEqual(["c4"]);
    expect(await ids({ contextKeys: [], filterContextKeys: true })).toEqual(["c3", "c2", "c1"]);
    expect(await ids({ connectionMode: ConnectionMode.SHARED })).toEqual(["c4"]);
    expect(await ids({ connectionMode: ConnectionMode.SUBSCRIBER, subscriberId: "bob" })).toEqual(["c2"]);
    expect((await client.listChannelConnections({ subscriberId: "ada", limit: 1 }, call)).totalCount).toBe(3);
    // An Inbox's view: its subscriber's connections and the shared ones, in its contexts.
    expect(await ids({ subscriberId: "ada", includeShared: true })).toEqual(["c5", "c4", "c3", "c1"]);
    expect(await ids({ subscriberId: "ada", includeShared: true, contextKeys: ["tenant:acme"], filterContextKeys: true })).toEqual(["c5"]);
    expect(await ids({ subscriberId: "bob", includeShared: true, connectionMode: ConnectionMode.SHARED })).toEqual(["c4"]);
    expect((await client.listChannelConnections({ subscriberId: "bob", includeShared: true }, call)).totalCount).toBe(2);

    const both = await rpcError(client.listChannelConnections({ after: "a", before: "b" }, call));
    expect([both.code, both.rawMessage]).toEqual([Code.FailedPrecondition, "Cannot specify both 'after' and 'before' cursors at the same time"]);
    expect((await rpcError(client.listChannelConnections({ limit: 101 }, call))).code).toBe(Code.InvalidArgument);
  });

  it("are replaced and deleted by identifier", async () => {
    const scope = newScope();
    await slack(scope);
    const call = callAs(scope);
    const created = await client.createChannelConnection(
      { identifier: "conn", subscriberId: "ada", integrationIdentifier: "slack-main", ...grant("old", { refreshToken: "old-refresh" }) },
      call,
    );
    const updated = await client.updateChannelConnection({ identifier: "conn", workspace: { id: "T0002" }, auth: { accessToken: "new" } }, call);
    expect(updated.workspace).toMatchObject({ id: "T0002" });
    expect(updated.workspace?.name).toBeUndefined();
    expect(updated.auth?.refreshToken).toBeUndefined();
    expect(updated.auth?.accessToken).toBe(MASK);
    expect(updated.updatedAt!.seconds * 1000n + BigInt(updated.updatedAt!.nanos / 1e6)).toBeGreaterThanOrEqual(
      created.updatedAt!.seconds * 1000n + BigInt(created.updatedAt!.nanos / 1e6),
    );
    expect((await client.resolveChannelConnection({ identifier: "conn" }, call)).accessToken).toBe("new");

    // The mask sent back would overwrite the token with it: refused, nothing changed.
    expect((await rpcError(client.updateChannelConnection({ identifier: "conn", ...grant(MASK) }, call))).code).toBe(Code.FailedPrecondition);
    expect((await rpcError(client.updateChannelConnection({ identifier: "conn", workspace: { id: "T" } }, call))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(client.updateChannelConnection({ identifier: "missing", ...grant("x") }, call))).code).toBe(Code.NotFound);
    expect((await client.resolveChannelConnection({ identifier: "conn" }, call)).accessToken).toBe("new");

    await client.deleteChannelConnection({ identifier: "conn" }, call);
    expect((await rpcError(client.getChannelConnection({ identifier: "conn" }, call))).code).toBe(Code.NotFound);
    const again = await rpcError(client.deleteChannelConnection({ identifier: "conn" }, call));
    expect([again.code, again.rawMessage]).toEqual([Code.NotFound, "Channel connection with identifier 'conn' not found"]);
  });

  it("are the environment's own", async () => {
    const scope = newScope();
    const other = newScope(scope.organizationId);
    await slack(scope);
    await slack(other);
    await client.createChannelConnection({ identifier: "mine", subscriberId: "ada", integrationIdentifier: "slack-main", ...grant("tok-mine") }, callAs(scope));
    const there = callAs(other);
    const attempts = await Promise.all([
      rpcError(client.getChannelConnection({ identifier: "mine" }, there)),
      rpcError(client.updateChannelConnection({ identifier: "mine", ...grant("stolen") }, there)),
      rpcError(client.deleteChannelConnection({ identifier: "mine" }, there)),
      rpcError(client.resolveChannelConnection({ identifier: "mine" }, there)),
    ]);
    expect(attempts.map((attempt) => attempt.code)).toEqual(Array(4).fill(Code.NotFound));
    expect((await client.listChannelConnections({}, there)).totalCount).toBe(0);
    // The identifier is free there, and names another connection.
    await client.createChannelConnection({ identifier: "mine", subscriberId: "ada", integrationIdentifier: "slack-main", ...grant("tok-theirs") }, there);
    expect((await client.resolveChannelConnection({ identifier: "mine" }, callAs(scope))).accessToken).toBe("tok-mine");
    expect((await client.resolveChannelConnection({ identifier: "mine" }, there)).accessToken).toBe("tok-theirs");
    // An integration of another environment is unknown here.
    const third = newScope(scope.organizationId);
    const refused = await rpcError(client.createChannelConnection({ subscriberId: "ada", integrationIdentifier: "slack-main", ...grant("x") }, callAs(third)));
    expect(refused.code).toBe(Code.NotFound);
  });

  it("follow their integration's renames, and go with it when it is deleted", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const integration = await slack(scope);
    await client.createChannelConnection({ identifier: "conn", subscriberId: "ada", integrationIdentifier: "slack-main", ...grant("tok") }, call);
    await integrations.updateIntegration({ id: integration.id, identifier: "slack-renamed" }, call);
    expect((await client.getChannelConnection({ identifier: "conn" }, call)).integrationIdentifier).toBe("slack-renamed");
    expect((await client.resolveChannelConnection({ identifier: "conn" }, call)).integrationIdentifier).toBe("slack-renamed");

    await integrations.deleteIntegration({ id: integration.id }, call);
    expect((await rpcError(client.getChannelConnection({ identifier: "conn" }, call))).code).toBe(Code.NotFound);
    // A new integration of the same identifier starts without connections.
    await slack(scope, "slack-renamed");
    expect((await rpcError(client.resolveChannelConnection({ identifier: "conn" }, call))).code).toBe(Code.NotFound);
    const { rows } = await fixture.pool.query("SELECT 1 FROM integrations.channel_connections WHERE environment_id = $1", [scope.environmentId]);
    expect(rows).toEqual([]);
  });
});
