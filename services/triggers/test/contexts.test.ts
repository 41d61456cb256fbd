import { timestampDate } from "@bufbuild/protobuf/wkt";
import { fieldErrorsOf } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNT_CAP } from "../src/contexts/service.js";
import { Code, inMemoryClients, newScope, openDatabase, rpcError, scopeHeaders, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let client: ReturnType<typeof inMemoryClients>["contexts"];
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClients(fixture.pool).contexts;
});
afterAll(() => fixture?.close());

const newCall = () => {
  const scope = newScope();
  return { scope, headers: scopeHeaders(scope) };
};

/** The field a refused call names, and its code. */
async function refusedField(call: Promise<unknown>) {
  const error = await rpcError(call);
  expect(error.code).toBe(Code.InvalidArgument);
  return Object.keys(fieldErrorsOf(error) ?? {});
}

const keysOf = (contexts: { type: string; id: string }[]) => contexts.map(({ type, id }) => `${type}:${id}`);

describe("ContextService", () => {
  it("refuses calls without the scope headers", async () => {
    expect((await rpcError(client.getContext({ type: "tenant", id: "x" }))).code).toBe(Code.Unauthenticated);
  });

  it("creates, reads, replaces the data of and deletes a context, with Novu's 409 and 404", async () => {
    const call = newCall();
    const created = await client.createContext({ type: "tenant", id: "acme", data: { plan: "gold", seats: 3 } }, call);
    expect(created).toMatchObject({ type: "tenant", id: "acme", data: { plan: "gold", seats: 3 } });
    expect(created.createdAt).toEqual(created.updatedAt);
    expect((await client.createContext({ type: "app", id: "acme" }, call)).data).toEqual({});

    const conflict = await rpcError(client.createContext({ type: "tenant", id: "acme", data: { plan: "free" } }, call));
    expect(conflict.code).toBe(Code.AlreadyExists);
    expect(conflict.rawMessage).toBe("Context with type 'tenant' and id 'acme' already exists");
    expect(await client.getContext({ type: "tenant", id: "acme" }, call)).toEqual(created);

    const updated = await client.updateContext({ type: "tenant", id: "acme", data: { region: "eu" } }, call);
    expect(updated).toMatchObject({ type: "tenant", id: "acme", data: { region: "eu" }, createdAt: created.createdAt });
    expect(timestampDate(updated.updatedAt!).getTime()).toBeGreaterThanOrEqual(timestampDate(created.updatedAt!).getTime());

    expect(await client.deleteContext({ type: "tenant", id: "acme" }, call)).toMatchObject({});
    const missing = await rpcError(client.getContext({ type: "tenant", id: "acme" }, call));
    expect(missing.code).toBe(Code.NotFound);
    expect(missing.rawMessage).toBe(`Context with id 'acme' and type 'tenant' not found in environment ${call.scope.environmentId}`);
    expect((await rpcError(client.updateContext({ type: "tenant", id: "acme", data: {} }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.deleteContext({ type: "tenant", id: "acme" }, call))).code).toBe(Code.NotFound);
    // The other type's context of the same id is another context.
    expect((await client.getContext({ type: "app", id: "acme" }, call)).id).toBe("acme");
  });

  it("pages in creation order, or its reverse, both ways with cursors", async () => {
    const call = newCall();
    for (const id of ["a", "b", "c", "d", "e"]) await client.createContext({ type: "tenant", id }, call);
    const ids = (page: { contexts: { id: string }[] }) => page.contexts.map((context) => context.id);

    const first = await client.listContexts({ limit: 2, descending: true }, call);
    expect(ids(first)).toEqual(["e", "d"]);
    expect(first).toMatchObject({ totalCount: 5, totalCountCapped: false });
    expect(first.previous).toBeUndefined();
    const second = await client.listContexts({ limit: 2, descending: true, after: first.next! }, call);
    expect(ids(second)).toEqual(["c", "b"]);
    const third = await client.listContexts({ limit: 2, descending: true, after: second.next! }, call);
    expect(ids(third)).toEqual(["a"]);
    expect(third.next).toBeUndefined();
    const back = await client.listContexts({ limit: 2, descending: true, before: third.previous! }, call);
    expect(ids(back)).toEqual(["c", "b"]);
    expect(ids(await client.listContexts({ limit: 2, descending: true, before: back.previous! }, call))).toEqual(["e", "d"]);

    const ascending = await client.listContexts({ limit: 3 }, call);
    expect(ids(ascending)).toEqual(["a", "b", "c"]);
    expect(ids(await client.listContexts({ limit: 3, after: ascending.next! }, call))).toEqual(["d", "e"]);
    expect(ids(await client.listContexts({ limit: 2, after: ascending.next!, includeCursor: true }, call))).toEqual(["c", "d"]);
    // A deleted context's cursor still marks its place.
    await client.deleteContext({ type: "tenant", id: "c" }, call);
    expect(ids(await client.listContexts({ limit: 3, after: ascending.next! }, call))).toEqual(["d", "e"]);
    expect(ids(await client.listContexts({}, call))).toEqual(["a", "b", "d", "e"]);
  });

  it("filters by exact id and searches type or id without case, wildcards taken literally", async () => {
    const call = newCall();
    for (const [type, id] of [
      ["tenant", "acme"],
      ["app", "acme"],
      ["workspace", "acme-eu"],
      ["team", "a_b"],
      ["team", "axb"],
    ] as const) {
      await client.createContext({ type, id }, call);
    }
    const byId = await client.listContexts({ id: "acme" }, call);
    expect(keysOf(byId.contexts)).toEqual(["tenant:acme", "app:acme"]);
    expect(byId.totalCount).toBe(2);
    expect(keysOf((await client.listContexts({ search: "ACME" }, call)).contexts)).toEqual(["tenant:acme", "app:acme", "workspace:acme-eu"]);
    expect(keysOf((await client.listContexts({ search: "TEN" }, call)).contexts)).toEqual(["tenant:acme"]);
    const underscore = await client.listContexts({ search: "a_b" }, call);
    expect(keysOf(underscore.contexts)).toEqual(["team:a_b"]);
    expect(underscore.totalCount).toBe(1);
    expect((await client.listContexts({ search: "%" }, call)).contexts).toEqual([]);
    expect(keysOf((await client.listContexts({ id: "acme", search: "ten" }, call)).contexts)).toEqual(["tenant:acme"]);
  });

  it("counts up to the cap and says when it stopped there", async () => {
    const call = newCall();
    await fixture.pool.query(
      `INSERT INTO triggers.contexts (environment_id, organization_id, type, id)
       SELECT $1, $2, 'tenant', 't' || n FROM generate_series(1, $3::int) n`,
      [call.scope.environmentId, call.scope.organizationId, COUNT_CAP + 1],
    );
    const page = await client.listContexts({ limit: 1 }, call);
    expect(page).toMatchObject({ totalCount: COUNT_CAP, totalCountCapped: true });
    expect(page.contexts.map((context) => context.id)).toEqual(["t1"]);
  });

  it("refuses bad pages and cursors as field errors", async () => {
    const call = newCall();
    expect(await refusedField(client.listContexts({ limit: 101 }, call))).toEqual(["limit"]);
    expect(await refusedField(client.listContexts({ limit: -1 }, call))).toEqual(["limit"]);
    expect(await refusedField(client.listContexts({ after: "MQ", before: "MQ" }, call))).toEqual(["after"]);
    for (const cursor of ["nope", "", Buffer.from("-1").toString("base64url"), Buffer.from("9".repeat(20)).toString("base64url")]) {
      expect(await refusedField(client.listContexts({ after: cursor }, call)), cursor).toEqual(["after"]);
    }
    expect(await refusedField(client.listContexts({ before: "x" }, call))).toEqual(["before"]);
  });

  it("refuses types, ids and data the table could not hold, naming the field", async () => {
    const call = newCall();
    expect(await refusedField(client.createContext({ type: "ten.ant", id: "acme" }, call))).toEqual(["type"]);
    expect(await refusedField(client.createContext({ type: "", id: "acme" }, call))).toEqual(["type"]);
    expect(await refusedField(client.createContext({ type: "tenant", id: "x".repeat(101) }, call))).toEqual(["id"]);
    expect(await refusedField(client.createContext({ type: "tenant", id: "a b" }, call))).toEqual(["id"]);
    const large = { blob: "x".repeat(64 * 1024) };
    expect(await refusedField(client.createContext({ type: "tenant", id: "big", data: large }, call))).toEqual(["data"]);
    // Exactly 64 KiB of JSON is accepted.
    const fits = { b: "x".repeat(64 * 1024 - '{"b":""}'.length) };
    expect((await client.createContext({ type: "tenant", id: "fits", data: fits }, call)).data).toEqual(fits);
    expect(await refusedField(client.updateContext({ type: "tenant", id: "fits", data: large }, call))).toEqual(["data"]);
    expect(await refusedField(client.updateContext({ type: "tenant", id: "fits" }, call))).toEqual(["data"]);
    expect((await client.getContext({ type: "tenant", id: "fits" }, call)).data).toEqual(fits);
  });

  it("ensures contexts: creates the missing ones, leaves existing ones untouched, answers in the order asked", async () => {
    const call = newCall();
    const existing = await client.createContext({ type: "tenant", id: "acme", data: { plan: "gold" } }, call);
    const ensured = await client.ensureContexts(
      {
        contexts: [
          { type: "app", id: "web", data: { platform: "browser" } },
          { type: "tenant", id: "acme", data: { plan: "free" } },
          { type: "team", id: "core" },
        ],
      },
      call,
    );
    expect(ensured.contexts.map(({ type, id, data }) => ({ type, id, data }))).toEqual([
      { type: "app", id: "web", data: { platform: "browser" } },
      { type: "tenant", id: "acme", data: { plan: "gold" } },
      { type: "team", id: "core", data: {} },
    ]);
    expect(ensured.contexts[1]).toEqual(existing);
    expect((await client.getContext({ type: "app", id: "web" }, call)).data).toEqual({ platform: "browser" });
    const again = await client.ensureContexts({ contexts: [{ type: "app", id: "web", data: { platform: "ios" } }] }, call);
    expect(again.contexts[0]!.data).toEqual({ platform: "browser" });
    expect((await client.ensureContexts({ contexts: [] }, call)).contexts).toEqual([]);

    const six = ["a", "b", "c", "d", "e", "f"].map((type) => ({ type, id: "x" }));
    expect((await rpcError(client.ensureContexts({ contexts: six }, call))).code).toBe(Code.InvalidArgument);
    const twice = [
      { type: "tenant", id: "one" },
      { type: "tenant", id: "two" },
    ];
    expect((await rpcError(client.ensureContexts({ contexts: twice }, call))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(client.ensureContexts({ contexts: [{ type: "tenant", id: "a:b" }] }, call))).code).toBe(Code.InvalidArgument);
    expect((await client.listContexts({}, call)).totalCount).toBe(3);
  });

  it("keeps environments apart: another environment never sees or changes them", async () => {
    const mine = newCall();
    const theirs = newCall();
    const original = await client.createContext({ type: "tenant", id: "shared", data: { owner: "mine" } }, mine);

    expect((await rpcError(client.getContext({ type: "tenant", id: "shared" }, theirs))).code).toBe(Code.NotFound);
    expect(await client.listContexts({ search: "shared" }, theirs)).toMatchObject({ contexts: [], totalCount: 0 });
    expect((await rpcError(client.updateContext({ type: "tenant", id: "shared", data: { owner: "theirs" } }, theirs))).code).toBe(Code.NotFound);
    expect((await rpcError(client.deleteContext({ type: "tenant", id: "shared" }, theirs))).code).toBe(Code.NotFound);
    const ensured = await client.ensureContexts({ contexts: [{ type: "tenant", id: "shared", data: { owner: "theirs" } }] }, theirs);
    expect(ensured.contexts[0]!.data).toEqual({ owner: "theirs" });
    expect((await client.createContext({ type: "tenant", id: "other", data: {} }, theirs)).id).toBe("other");

    expect(await client.getContext({ type: "tenant", id: "shared" }, mine)).toEqual(original);
    expect(keysOf((await client.listContexts({}, mine)).contexts)).toEqual(["tenant:shared"]);
  });
});
