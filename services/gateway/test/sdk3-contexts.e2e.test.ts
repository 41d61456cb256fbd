import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
});
afterAll(async () => {
  await stack?.stop();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const keysOf = (contexts: { type: string; id: string }[]) => contexts.map(({ type, id }) => `${type}:${id}`);

/** A 422's field errors, by field. */
async function refusedFields(method: string, path: string, body?: unknown): Promise<string[]> {
  const reply = await stack.request(method, path, body);
  expect(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBe(422);
  expect(reply.body).toMatchObject({ statusCode: 422, path });
  return Object.keys(reply.body.errors).sort();
}

describe("@novu/api 3.19.1 against the gateway: contexts", () => {
  it("creates, lists, retrieves, updates and deletes contexts with no validation error", async () => {
    const acme = await novu.contexts.create({ type: "tenant", id: "acme", data: { plan: "gold", seats: 3 } });
    expect(acme.result).toEqual({
      type: "tenant",
      id: "acme",
      data: { plan: "gold", seats: 3 },
      createdAt: expect.stringMatching(ISO),
      updatedAt: acme.result.createdAt,
    });
    expect((await novu.contexts.create({ type: "app", id: "web" })).result.data).toEqual({});
    // Novu's agent bridge is not served: its URL is ignored, as any unknown field.
    const bridged = await novu.contexts.create({ type: "workspace", id: "acme-eu", bridgeUrl: "https://bridge.example.com" });
    expect(bridged.result).not.toHaveProperty("bridgeUrl");

    const first = await novu.contexts.list({ limit: 2 });
    expect(keysOf(first.result.data)).toEqual(["workspace:acme-eu", "app:web"]);
    expect(first.result).toMatchObject({ previous: null, totalCount: 3, totalCountCapped: false });
    const second = await novu.contexts.list({ limit: 2, after: first.result.next! });
    expect(keysOf(second.result.data)).toEqual(["tenant:acme"]);
    expect(second.result.next).toBeNull();
    expect(keysOf((await novu.contexts.list({ limit: 2, before: second.result.previous! })).result.data)).toEqual(["workspace:acme-eu", "app:web"]);
    const ascending = await novu.contexts.list({ orderDirection: "ASC", orderBy: "createdAt", limit: 1, includeCursor: true });
    expect(keysOf(ascending.result.data)).toEqual(["tenant:acme"]);
    expect(keysOf((await novu.contexts.list({ orderDirection: "ASC", after: ascending.result.next!, includeCursor: true })).result.data)).toEqual([
      "tenant:acme",
      "app:web",
      "workspace:acme-eu",
    ]);
    const searched = await novu.contexts.list({ search: "ACME" });
    expect(keysOf(searched.result.data)).toEqual(["workspace:acme-eu", "tenant:acme"]);
    expect(searched.result.totalCount).toBe(2);
    expect(keysOf((await novu.contexts.list({ id: "web" })).result.data)).toEqual(["app:web"]);

    expect((await novu.contexts.retrieve("acme", "tenant")).result).toEqual(acme.result);
    const updated = await novu.contexts.update({ type: "tenant", id: "acme", updateContextRequestDto: { data: { region: "eu" } } });
    expect(updated.result).toMatchObject({ type: "tenant", id: "acme", data: { region: "eu" }, createdAt: acme.result.createdAt });

    expect(await novu.contexts.delete("acme", "tenant")).toBeUndefined();
    const gone = await failureOf(novu.contexts.retrieve("acme", "tenant", undefined, once));
    expect(gone).toBeInstanceOf(errors.ErrorDto);
    expect((gone as errors.ErrorDto).statusCode).toBe(404);
    const taken = await failureOf(novu.contexts.create({ type: "app", id: "web" }, undefined, once));
    expect((taken as errors.ErrorDto).statusCode).toBe(409);
    const invalid = await failureOf(novu.contexts.create({ type: "app", id: "not valid" }, undefined, once));
    expect(invalid).toBeInstanceOf(errors.ValidationErrorDto);
  });

  it("answers Novu's 409 and 404 over plain HTTP", async () => {
    const created = await stack.request("POST", "/v2/contexts", { type: "tenant", id: "dup", data: { n: 1 } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ type: "tenant", id: "dup", data: { n: 1 } });
    const conflict = await stack.request("POST", "/v2/contexts", { type: "tenant", id: "dup", data: { n: 2 } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.message).toBe("Context with type 'tenant' and id 'dup' already exists");
    expect((await stack.request("GET", "/v2/contexts/tenant/dup")).body.data.data).toEqual({ n: 1 });

    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { data: {} }],
      ["DELETE", undefined],
    ] as const) {
      const reply = await stack.request(method, "/v2/contexts/tenant/ghost", body);
      expect(reply.status, method).toBe(404);
      expect(reply.body.message, method).toMatch(/^Context with id 'ghost' and type 'tenant' not found in environment [0-9a-f]{24}$/);
    }
    const deleted = await stack.request("DELETE", "/v2/contexts/tenant/dup");
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
  });

  it("refuses bad input with 422 naming each field, never a 5xx", async () => {
    await stack.request("POST", "/v2/contexts", { type: "tenant", id: "valid" });
    expect(await refusedFields("POST", "/v2/contexts", { type: "ten.ant", id: "" })).toEqual(["id", "type"]);
    expect(await refusedFields("POST", "/v2/contexts", {})).toEqual(["id", "type"]);
    expect(await refusedFields("POST", "/v2/contexts", { type: "tenant", id: "x".repeat(101) })).toEqual(["id"]);
    expect(await refusedFields("POST", "/v2/contexts", { type: 7, id: ["a"] })).toEqual(["id", "type"]);
    for (const data of [[], "text", 1, null]) {
      expect(await refusedFields("POST", "/v2/contexts", { type: "tenant", id: "data", data }), JSON.stringify(data)).toEqual(["data"]);
    }
    expect(await refusedFields("POST", "/v2/contexts", { type: "tenant", id: "big", data: { blob: "x".repeat(64 * 1024) } })).toEqual(["data"]);
    expect(await refusedFields("PATCH", "/v2/contexts/tenant/valid", {})).toEqual(["data"]);
    expect(await refusedFields("PATCH", "/v2/contexts/tenant/valid", { data: null })).toEqual(["data"]);
    expect(await refusedFields("GET", "/v2/contexts/ten.ant/valid")).toEqual(["type"]);
    expect(await refusedFields("DELETE", `/v2/contexts/tenant/${"x".repeat(101)}`)).toEqual(["id"]);
    expect(await refusedFields("GET", "/v2/contexts?limit=0")).toEqual(["limit"]);
    expect(await refusedFields("GET", "/v2/contexts?limit=101&orderDirection=UP")).toEqual(["limit", "orderDirection"]);
    expect(await refusedFields("GET", "/v2/contexts?orderBy=updatedAt")).toEqual(["orderBy"]);
    expect(await refusedFields("GET", "/v2/contexts?includeCursor=yes")).toEqual(["includeCursor"]);
    expect(await refusedFields("GET", "/v2/contexts?after=garbage")).toEqual(["after"]);
    expect(await refusedFields("GET", "/v2/contexts?before=MQ&after=MQ")).toEqual(["after"]);
    expect((await stack.request("GET", "/v2/contexts?search=%00")).status).toBe(422);
    expect((await stack.request("GET", "/v2/contexts?search=%25_%5C&id=%27")).body).toMatchObject({ data: [], totalCount: 0 });
  });

  it("keeps each environment's contexts to itself", async () => {
    await stack.request("POST", "/v2/contexts", { type: "tenant", id: "mine", data: { owner: "dev" } });
    const production = { authorization: `ApiKey ${await stack.createKey("Production")}` };
    expect((await stack.request("GET", "/v2/contexts/tenant/mine", undefined, production)).status).toBe(404);
    expect((await stack.request("GET", "/v2/contexts?id=mine", undefined, production)).body).toMatchObject({ data: [], totalCount: 0 });
    expect((await stack.request("PATCH", "/v2/contexts/tenant/mine", { data: { owner: "prod" } }, production)).status).toBe(404);
    expect((await stack.request("DELETE", "/v2/contexts/tenant/mine", undefined, production)).status).toBe(404);
    expect((await stack.request("POST", "/v2/contexts", { type: "tenant", id: "mine", data: { owner: "prod" } }, production)).status).toBe(201);
    expect((await stack.request("GET", "/v2/contexts/tenant/mine")).body.data.data).toEqual({ owner: "dev" });
  });
});
