import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, inMemoryClients, newScope, openDatabase, rpcError, scopeHeaders, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let client: ReturnType<typeof inMemoryClients>["tenants"];
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClients(fixture.pool).tenants;
});
afterAll(() => fixture?.close());

const newCall = () => ({ headers: scopeHeaders(newScope()) });

describe("TenantService", () => {
  it("refuses calls without the scope headers", async () => {
    expect((await rpcError(client.getTenant({ identifier: "x" }))).code).toBe(Code.Unauthenticated);
  });

  it("creates, reads, renames and deletes a tenant, with 409 and 404 where Novu has them", async () => {
    const call = newCall();
    const created = await client.createTenant({ identifier: "acme", name: "Acme", data: { tier: "gold" } }, call);
    expect(created).toMatchObject({ identifier: "acme", name: "Acme", data: { tier: "gold" } });
    const conflict = await rpcError(client.createTenant({ identifier: "acme", name: "Other" }, call));
    expect(conflict.code).toBe(Code.AlreadyExists);
    expect(conflict.rawMessage).toMatch(/^Tenant with identifier: acme already exists under environment [0-9a-f]{24}$/);

    await client.createTenant({ identifier: "globex", name: "Globex" }, call);
    expect((await rpcError(client.updateTenant({ identifier: "acme", newIdentifier: "globex" }, call))).code).toBe(Code.AlreadyExists);
    const renamed = await client.updateTenant({ identifier: "acme", newIdentifier: "acme-inc", data: { tier: "silver" } }, call);
    expect(renamed).toMatchObject({ id: created.id, identifier: "acme-inc", name: "Acme", data: { tier: "silver" } });
    expect((await rpcError(client.getTenant({ identifier: "acme" }, call))).code).toBe(Code.NotFound);

    expect((await client.deleteTenant({ identifier: "acme-inc" }, call)).id).toBe(created.id);
    expect((await rpcError(client.deleteTenant({ identifier: "acme-inc" }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.updateTenant({ identifier: "acme-inc", name: "x" }, call))).code).toBe(Code.NotFound);
  });

  it("keeps environments apart", async () => {
    const call = newCall();
    await client.createTenant({ identifier: "shared", name: "Mine" }, call);
    const other = newCall();
    expect((await rpcError(client.getTenant({ identifier: "shared" }, other))).code).toBe(Code.NotFound);
    expect((await client.createTenant({ identifier: "shared", name: "Theirs" }, other)).name).toBe("Theirs");
  });

  it("upserts a trigger's tenant: creates it, then writes only what differs", async () => {
    const call = newCall();
    const first = await client.upsertTenant({ identifier: "t1" }, call);
    expect(first.created).toBe(true);
    expect(first.tenant).toMatchObject({ identifier: "t1" });
    expect(first.tenant!.name).toBeUndefined();

    const same = await client.upsertTenant({ identifier: "t1" }, call);
    expect(same).toMatchObject({ created: false });
    expect(same.tenant!.updatedAt).toEqual(first.tenant!.updatedAt);

    const named = await client.upsertTenant({ identifier: "t1", name: "Tenant one", data: { a: 1 } }, call);
    expect(named.created).toBe(false);
    expect(named.tenant).toMatchObject({ id: first.tenant!.id, name: "Tenant one", data: { a: 1 } });

    // Same data in another key order is no change.
    const reordered = await client.upsertTenant({ identifier: "t1", data: { a: 1, z: { a: 1, b: 2 } } }, call);
    const again = await client.upsertTenant({ identifier: "t1", data: { z: { b: 2, a: 1 }, a: 1 } }, call);
    expect(again.tenant!.updatedAt).toEqual(reordered.tenant!.updatedAt);

    const racing = await Promise.all(Array.from({ length: 6 }, () => client.upsertTenant({ identifier: "t2", name: "Race" }, call)));
    expect(racing.filter((reply) => reply.created)).toHaveLength(1);
    expect(new Set(racing.map((reply) => reply.tenant!.id)).size).toBe(1);
  });

  it("batch-gets tenants by identifier (bounded) and pages the list", async () => {
    const call = newCall();
    for (const identifier of ["a", "b", "c"]) await client.createTenant({ identifier, name: identifier.toUpperCase() }, call);
    const batch = await client.batchGetTenants({ identifiers: ["c", "a", "missing"] }, call);
    expect(batch.tenants.map((tenant) => tenant.identifier).sort()).toEqual(["a", "c"]);
    expect((await client.batchGetTenants({ identifiers: [] }, call)).tenants).toEqual([]);
    const tooMany = Array.from({ length: 1001 }, (_, index) => `t${index}`);
    expect((await rpcError(client.batchGetTenants({ identifiers: tooMany }, call))).code).toBe(Code.InvalidArgument);

    const page = await client.listTenants({ page: 1, limit: 2 }, call);
    expect(page.tenants.map((tenant) => tenant.identifier)).toEqual(["a"]);
    expect(page).toMatchObject({ hasMore: false, totalCount: 3 });
    expect((await client.listTenants({ page: 0, limit: 2 }, call)).hasMore).toBe(true);
    expect((await rpcError(client.listTenants({ page: 0, limit: 101 }, call))).code).toBe(Code.InvalidArgument);
  });

  it("refuses identifiers and names the table could not hold, as field errors", async () => {
    const call = newCall();
    expect((await rpcError(client.createTenant({ identifier: "", name: "x" }, call))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(client.upsertTenant({ identifier: "x".repeat(256) }, call))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(client.createTenant({ identifier: "ok", name: "n".repeat(256) }, call))).code).toBe(Code.InvalidArgument);
  });
});
