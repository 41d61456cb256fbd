import { Novu } from "@novu/api";
import type { CreateChannelConnectionRequestDto } from "@novu/api/models/components/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration } from "./delivery-helpers.js";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
  await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "connections-slack" });
  await createIntegration(stack, { providerId: "discord", channel: "chat", identifier: "connections-discord" });
  for (const subscriberId of ["connection-ada", "connection-bob"]) await novu.subscribers.create({ subscriberId }, undefined, undefined, once);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const MASK = "••••••••";
const ACCESS_TOKEN = "xoxb-connection-access-token";
const REFRESH_TOKEN = "xoxe-connection-refresh-token";

const connection = (fields: Partial<CreateChannelConnectionRequestDto>): CreateChannelConnectionRequestDto => ({
  integrationIdentifier: "connections-slack",
  workspace: { id: "T0001" },
  auth: { accessToken: ACCESS_TOKEN },
  ...fields,
});

describe("channel connections (Novu's /v1/channel-connections)", () => {
  it("are created, listed with filters and cursors, read, replaced and deleted through @novu/api, tokens never answered", async () => {
    const created = (
      await novu.channelConnections.create(
        connection({
          subscriberId: "connection-ada",
          context: { tenant: "acme", team: { id: "blue", data: { floor: 3 } } },
          workspace: { id: "T0001", name: "Acme", botUserId: "U0BOT" },
          auth: { accessToken: ACCESS_TOKEN, refreshToken: REFRESH_TOKEN, expiresAt: "2030-01-01T00:00:00.000Z" },
        }),
        undefined,
        once,
      )
    ).result;
    expect(created).toMatchObject({
      channel: "chat",
      providerId: "slack",
      integrationIdentifier: "connections-slack",
      subscriberId: "connection-ada",
      contextKeys: ["team:blue", "tenant:acme"],
      workspace: { id: "T0001", name: "Acme", botUserId: "U0BOT" },
      auth: { accessToken: MASK, refreshToken: MASK, expiresAt: "2030-01-01T00:00:00.000Z" },
    });
    expect(created.identifier).toMatch(/^chconn_[A-Za-z0-9_-]{12}$/);
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);
    // The contexts named were made, as a trigger makes them.
    expect((await stack.request("GET", "/v2/contexts/team/blue")).status).toBe(200);

    const shared = (
      await novu.channelConnections.create(
        connection({ identifier: "acme-shared", connectionMode: "shared", subscriberId: "connection-ada", context: { tenant: "acme" } }),
        undefined,
        once,
      )
    ).result;
    expect([shared.identifier, shared.subscriberId, shared.contextKeys]).toEqual(["acme-shared", null, ["tenant:acme"]]);
    await novu.channelConnections.create(
      connection({ identifier: "bob-discord", subscriberId: "connection-bob", integrationIdentifier: "connections-discord" }),
      undefined,
      once,
    );

    const first = (await novu.channelConnections.list({ limit: 2 }, once)).result;
    expect(first.data.map((item) => item.identifier)).toEqual(["bob-discord", "acme-shared"]);
    expect(first).toMatchObject({ totalCount: 3, totalCountCapped: false, previous: null });
    const rest = (await novu.channelConnections.list({ limit: 2, after: first.next! }, once)).result;
    expect([rest.data.map((item) => item.identifier), rest.next]).toEqual([[created.identifier], null]);
    expect((await novu.channelConnections.list({ limit: 2, before: rest.previous! }, once)).result.data.map((item) => item.identifier)).toEqual([
      "bob-discord",
      "acme-shared",
    ]);
    const filtered = async (filters: Parameters<typeof novu.channelConnections.list>[0]) =>
      (await novu.channelConnections.list(filters, once)).result.data.map((item) => item.identifier);
    expect(await filtered({ orderDirection: "ASC", limit: 1 })).toEqual([created.identifier]);
    expect(await filtered({ subscriberId: "connection-ada" })).toEqual([created.identifier]);
    expect(await filtered({ contextKeys: ["tenant:acme", "team:blue"] })).toEqual([created.identifier]);
    expect(await filtered({ contextKeys: ["tenant:acme"] })).toEqual(["acme-shared"]);
    expect(await filtered({ connectionMode: "shared" })).toEqual(["acme-shared"]);
    expect(await filtered({ providerId: "discord", channel: "chat" })).toEqual(["bob-discord"]);
    expect(await filtered({ integrationIdentifier: "connections-slack", orderBy: "updatedAt" })).toEqual(["acme-shared", created.identifier]);
    expect(await filtered({ after: "0123456789abcdef01234567" })).toEqual([]);

    const retrieved = (await novu.channelConnections.retrieve(created.identifier, undefined, once)).result;
    expect(retrieved.auth).toEqual({ accessToken: MASK, refreshToken: MASK, expiresAt: "2030-01-01T00:00:00.000Z" });
    const updated = (
      await novu.channelConnections.update({ workspace: { id: "T0002" }, auth: { accessToken: "xoxb-rotated" } }, created.identifier, undefined, once)
    ).result;
    expect([updated.workspace, updated.auth, updated.contextKeys]).toEqual([{ id: "T0002" }, { accessToken: MASK }, ["team:blue", "tenant:acme"]]);

    // Raw answers: one connection wrapped, the list not, and no token in any of them.
    const one = await stack.request<Data<Json>>("GET", `/v1/channel-connections/${created.identifier}`);
    const page = await stack.request<Json>("GET", "/v1/channel-connections?limit=10");
    expect(Object.keys(one.body)).toEqual(["data"]);
    expect(Object.keys(page.body).sort()).toEqual(["data", "next", "previous", "totalCount", "totalCountCapped"]);
    for (const answer of [one.body, page.body, created, shared, retrieved, updated]) {
      for (const token of [ACCESS_TOKEN, REFRESH_TOKEN, "xoxb-rotated"]) expect(JSON.stringify(answer)).not.toContain(token);
    }

    expect(await novu.channelConnections.delete("bob-discord", undefined, once)).toBeUndefined();
    expect((await failureOf(novu.channelConnections.retrieve("bob-discord", undefined, once))).statusCode).toBe(404);
    expect((await failureOf(novu.channelConnections.delete("bob-discord", undefined, once))).statusCode).toBe(404);
  }, 60_000);

  it("answer Novu's refusals, changing nothing", async () => {
    await novu.channelConnections.create(connection({ identifier: "bob-slack", subscriberId: "connection-bob" }), undefined, once);
    const refusals = await Promise.all([
      failureOf(novu.channelConnections.create(connection({ subscriberId: "connection-bob", integrationIdentifier: "nope" }), undefined, once)),
      failureOf(novu.channelConnections.create(connection({ subscriberId: "ghost" }), undefined, once)),
      failureOf(novu.channelConnections.create(connection({ identifier: "bob-slack", subscriberId: "connection-ada" }), undefined, once)),
      failureOf(novu.channelConnections.create(connection({ identifier: "bob-again", subscriberId: "connection-bob" }), undefined, once)),
      failureOf(novu.channelConnections.create(connection({ connectionMode: "shared", subscriberId: "connection-bob" }), undefined, once)),
      failureOf(novu.channelConnections.create(connection({ connectionMode: "subscriber", context: { tenant: "acme" } }), undefined, once)),
      failureOf(novu.channelConnections.create(connection({}), undefined, once)),
      failureOf(novu.channelConnections.update({ workspace: { id: "T0001" }, auth: { accessToken: MASK } }, "bob-slack", undefined, once)),
      failureOf(novu.channelConnections.update({ workspace: { id: "T0001" }, auth: { accessToken: "x" } }, "missing", undefined, once)),
      failureOf(novu.channelConnections.list({ after: "a", before: "b" }, once)),
      failureOf(novu.channelConnections.list({ limit: 101 }, once)),
    ]);
    expect(refusals.map((refusal) => refusal.statusCode)).toEqual([404, 404, 409, 409, 400, 400, 400, 400, 404, 400, 422]);
    expect(refusals.slice(0, 2).map((refusal) => JSON.parse(refusal.body).message)).toEqual(["Integration not found: nope", "Subscriber not found: ghost"]);
    expect(JSON.parse(refusals[9]!.body).message).toBe("Cannot specify both 'after' and 'before' cursors at the same time");

    // What the SDK would not send: each 422 names the field.
    const invalid = async (method: string, path: string, body?: unknown) => {
      const reply = await stack.request<{ errors: Record<string, unknown> }>(method, path, body);
      expect(reply.status, JSON.stringify(reply.body)).toBe(422);
      return Object.keys(reply.body.errors);
    };
    expect(await invalid("POST", "/v1/channel-connections", { ...connection({ subscriberId: "connection-bob" }), auth: { accessToken: 7 } })).toEqual([
      "auth.accessToken",
    ]);
    expect(await invalid("POST", "/v1/channel-connections", { subscriberId: "connection-bob", integrationIdentifier: "connections-slack" })).toEqual([
      "workspace",
      "auth",
    ]);
    expect(
      await invalid("POST", "/v1/channel-connections", {
        ...connection({ subscriberId: "connection-bob", connectionMode: "personal" as "shared" }),
        context: { a: "1", b: "2", c: "3", d: "4", e: "5", f: "6" },
        auth: { accessToken: "x", expiresAt: "next week" },
      }),
    ).toEqual(["context", "connectionMode", "auth.expiresAt"]);
    expect(await invalid("PATCH", "/v1/channel-connections/bob-slack", { workspace: { id: "T0001" } })).toEqual(["auth"]);
    expect(await invalid("GET", "/v1/channel-connections?orderBy=name&includeCursor=yes")).toEqual(["orderBy", "includeCursor"]);

    const remaining = (await novu.channelConnections.list({ subscriberId: "connection-bob" }, once)).result.data;
    expect(remaining.map((item) => [item.identifier, item.workspace.id])).toEqual([["bob-slack", "T0001"]]);
  }, 60_000);

  it("are not seen from another environment", async () => {
    await novu.channelConnections.create(connection({ identifier: "dev-only", subscriberId: "connection-ada", context: { tenant: "dev" } }), undefined, once);
    const production = new Novu({ secretKey: await stack.createKey("Production"), serverURL: stack.url });
    expect((await failureOf(production.channelConnections.retrieve("dev-only", undefined, once))).statusCode).toBe(404);
    expect((await failureOf(production.channelConnections.delete("dev-only", undefined, once))).statusCode).toBe(404);
    expect((await production.channelConnections.list({}, once)).result).toEqual({
      data: [],
      next: null,
      previous: null,
      totalCount: 0,
      totalCountCapped: false,
    });
    // Its integrations are its own too.
    const there = await failureOf(production.channelConnections.create(connection({ context: { tenant: "dev" } }), undefined, once));
    expect([there.statusCode, JSON.parse(there.body).message]).toEqual([404, "Integration not found: connections-slack"]);
    expect((await novu.channelConnections.retrieve("dev-only", undefined, once)).result.identifier).toBe("dev-only");
  }, 60_000);
});
