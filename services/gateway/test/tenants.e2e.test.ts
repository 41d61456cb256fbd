import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const OBJECT_ID = /^[0-9a-f]{24}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("tenants", () => {
  it("creates a tenant and reads it back", async () => {
    const created = await stack.request("POST", "/v1/tenants", { identifier: "acme", name: "Acme", data: { tier: "gold", seats: 12 }, ignored: true });
    expect(created.status).toBe(201);
    const tenant = created.body.data;
    expect(tenant).toMatchObject({ identifier: "acme", name: "Acme", data: { tier: "gold", seats: 12 } });
    expect(tenant._id).toMatch(OBJECT_ID);
    expect(tenant._environmentId).toMatch(OBJECT_ID);
    expect(tenant.createdAt).toMatch(ISO);
    expect(tenant).not.toHaveProperty("ignored");
    const read = await stack.request("GET", "/v1/tenants/acme");
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(tenant);
  });

  it("answers 409 for a taken identifier", async () => {
    await stack.request("POST", "/v1/tenants", { identifier: "dup", name: "First" });
    const reply = await stack.request("POST", "/v1/tenants", { identifier: "dup", name: "Second" });
    expect(reply.status).toBe(409);
    expect(reply.body.message).toMatch(/^Tenant with identifier: dup already exists under environment /);
    expect((await stack.request("GET", "/v1/tenants/dup")).body.data.name).toBe("First");
  });

  it("answers 404 for an unknown tenant on get, update and delete", async () => {
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { name: "x" }],
      ["DELETE", undefined],
    ] as const) {
      const reply = await stack.request(method, "/v1/tenants/ghost", body);
      expect(reply.status, method).toBe(404);
      expect(reply.body.message).toMatch(/^Tenant with identifier: ghost does not exist under environment /);
    }
  });

  it("updates name, data and identifier; null leaves a field as it is; a taken identifier is 409", async () => {
    await stack.request("POST", "/v1/tenants", { identifier: "initech", name: "Initech", data: { a: 1 } });
    await stack.request("POST", "/v1/tenants", { identifier: "hooli", name: "Hooli" });
    expect((await stack.request("PATCH", "/v1/tenants/initech", { identifier: "hooli" })).status).toBe(409);
    const unchanged = await stack.request("PATCH", "/v1/tenants/initech", { identifier: null, name: null });
    expect(unchanged.body.data).toMatchObject({ identifier: "initech", name: "Initech", data: { a: 1 } });
    const updated = await stack.request("PATCH", "/v1/tenants/initech", { identifier: "initech-2", name: "Initech Two", data: { b: 2 } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ identifier: "initech-2", name: "Initech Two", data: { b: 2 } });
    expect((await stack.request("GET", "/v1/tenants/initech")).status).toBe(404);
    expect((await stack.request("GET", "/v1/tenants/initech-2")).body.data._id).toBe(updated.body.data._id);
  });

  it("deletes a tenant with 204", async () => {
    await stack.request("POST", "/v1/tenants", { identifier: "temporary", name: "Temp" });
    const reply = await stack.request("DELETE", "/v1/tenants/temporary");
    expect(reply.status).toBe(204);
    expect(reply.body).toBeUndefined();
    expect((await stack.request("GET", "/v1/tenants/temporary")).status).toBe(404);
    expect((await stack.request("POST", "/v1/tenants", { identifier: "temporary", name: "Again" })).status).toBe(201);
  });

  it("lists tenants in pages", async () => {
    const key = await stack.createKey("Tenants paging");
    const headers = { authorization: `ApiKey ${key}` };
    for (const identifier of ["t1", "t2", "t3"]) await stack.request("POST", "/v1/tenants", { identifier, name: identifier }, headers);
    const first = await stack.request("GET", "/v1/tenants?page=0&limit=2", undefined, headers);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page: 0, pageSize: 2, totalCount: 3, hasMore: true });
    // Newest first, as Novu lists them.
    expect(first.body.data.map((tenant) => tenant.identifier)).toEqual(["t3", "t2"]);
    const second = await stack.request("GET", "/v1/tenants?page=1&limit=2", undefined, headers);
    expect(second.body).toMatchObject({ page: 1, hasMore: false });
    expect(second.body.data.map((tenant) => tenant.identifier)).toEqual(["t1"]);
    expect((await stack.request("GET", "/v1/tenants?limit=0", undefined, headers)).status).toBe(422);
    // Tenants of other environments are invisible.
    expect((await stack.request("GET", "/v1/tenants/acme", undefined, headers)).status).toBe(404);
  });

  it.each([
    ["no identifier", { name: "x" }, "identifier"],
    ["a blank identifier", { identifier: "  ", name: "x" }, "identifier"],
    ["an identifier over 255 characters", { identifier: "i".repeat(256), name: "x" }, "identifier"],
    ["no name", { identifier: "nameless" }, "name"],
    ["data that is not an object", { identifier: "x", name: "x", data: [1] }, "data"],
  ])("answers 422 for %s and stores nothing", async (_, body, field) => {
    const reply = await stack.request("POST", "/v1/tenants", body);
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toHaveProperty(field);
    const identifier = (body as { identifier?: unknown }).identifier;
    if (typeof identifier === "string" && identifier.trim() && identifier.length <= 255)
      expect((await stack.request("GET", `/v1/tenants/${identifier}`)).status).toBe(404);
  });
});
