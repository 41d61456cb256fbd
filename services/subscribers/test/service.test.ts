import { Code } from "@connectrpc/connect";
import { fieldErrorsOf } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inMemoryClient, newScope, openDatabase, rpcError, scopeHeaders, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let client: ReturnType<typeof inMemoryClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture.pool);
});
afterAll(() => fixture?.close());

describe("SubscriberService (in memory)", () => {
  const scope = newScope();
  const call = { headers: scopeHeaders(scope) };

  it("refuses calls without the scope headers", async () => {
    const error = await rpcError(client.batchGetSubscribers({ subscriberIds: ["x"] }));
    expect(error.code).toBe(Code.Unauthenticated);
  });

  it("answers NOT_FOUND for an unknown subscriber on update and delete", async () => {
    const attempts = [
      () => client.updateSubscriber({ subscriberId: "ghost", fields: { firstName: "x" } }, call),
      () => client.deleteSubscriber({ subscriberId: "ghost" }, call),
    ];
    for (const attempt of attempts) expect((await rpcError(attempt())).code).toBe(Code.NotFound);
  });

  it("answers INVALID_ARGUMENT with field errors for bad values", async () => {
    const error = await rpcError(client.upsertSubscriber({ subscriberId: "", fields: { email: "nope", timezone: "Nowhere/City" } }, call));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(error) ?? {}).sort()).toEqual(["email", "subscriberId", "timezone"]);
  });

  it("answers INVALID_ARGUMENT when clearing a field that does not exist", async () => {
    const error = await rpcError(client.upsertSubscriber({ subscriberId: "c", cleared: { names: ["subscriberId"] } }, call));
    expect(error.code).toBe(Code.InvalidArgument);
  });

  it("answers ALREADY_EXISTS when asked to fail on an existing subscriber", async () => {
    await client.upsertSubscriber({ subscriberId: "dup" }, call);
    const error = await rpcError(client.upsertSubscriber({ subscriberId: "dup", failIfExists: true }, call));
    expect(error.code).toBe(Code.AlreadyExists);
  });

  it("creates once under concurrent upserts of one id", async () => {
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, index) => client.upsertSubscriber({ subscriberId: "same", fields: { firstName: `n${index}` } }, call)),
    );
    expect(replies.filter((reply) => reply.created)).toHaveLength(1);
    expect(new Set(replies.map((reply) => reply.subscriber?.id)).size).toBe(1);
  });

  it("sets Inbox presence: only subscribers not already in that state change, last online when they go offline, in the caller's environment", async () => {
    await client.upsertSubscriber({ subscriberId: "online-a" }, call);
    await client.upsertSubscriber({ subscriberId: "online-b" }, call);
    const other = { headers: scopeHeaders(newScope()) };
    await client.upsertSubscriber({ subscriberId: "online-a" }, other);
    expect(await client.setSubscribersOnline({ subscriberIds: ["online-a", "online-b", "ghost", "nul\u0000"], isOnline: true }, call)).toMatchObject({
      changed: 2,
    });
    expect(await client.setSubscribersOnline({ subscriberIds: ["online-a"], isOnline: true }, call)).toMatchObject({ changed: 0 });
    const before = Date.now();
    expect(await client.setSubscribersOnline({ subscriberIds: ["online-a"], isOnline: false }, call)).toMatchObject({ changed: 1 });
    const [a, b] = (await client.batchGetSubscribers({ subscriberIds: ["online-a", "online-b"] }, call)).subscribers.sort((x, y) =>
      x.subscriberId.localeCompare(y.subscriberId),
    );
    expect(a).toMatchObject({ isOnline: false });
    expect(Number(a!.lastOnlineAt?.seconds) * 1000).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(b).toMatchObject({ isOnline: true });
    expect(b!.lastOnlineAt).toBeUndefined();
    const elsewhere = (await client.batchGetSubscribers({ subscriberIds: ["online-a"] }, other)).subscribers[0];
    expect(elsewhere?.isOnline).toBeUndefined();
    const tooMany = await rpcError(
      client.setSubscribersOnline({ subscriberIds: Array.from({ length: 1001 }, (_, index) => `s${index}`), isOnline: true }, call),
    );
    expect(tooMany.code).toBe(Code.InvalidArgument);
  });

  it("looks up a batch by external and internal ids, only in the caller's environment", async () => {
    const a = (await client.upsertSubscriber({ subscriberId: "batch-a" }, call)).subscriber!;
    const b = (await client.upsertSubscriber({ subscriberId: "batch-b" }, call)).subscriber!;
    const other = { headers: scopeHeaders(newScope()) };
    await client.upsertSubscriber({ subscriberId: "batch-a" }, other);
    const reply = await client.batchGetSubscribers({ subscriberIds: ["batch-a", "missing"], ids: [b.id] }, call);
    expect(reply.subscribers.map((s) => s.id).sort()).toEqual([a.id, b.id].sort());
    const tooMany = await rpcError(client.batchGetSubscribers({ subscriberIds: Array.from({ length: 1001 }, String) }, call));
    expect(tooMany.code).toBe(Code.InvalidArgument);
  });

  it("matches subscribers by subscriberIds, emails or a search, in the caller's environment only, up to the limit", async () => {
    const scoped = { headers: scopeHeaders(newScope()) };
    const ids = new Map<string, string>();
    for (const [subscriberId, email] of [
      ["match-ada", "Ada@Example.com"],
      ["match-bob", "bob@corp.test"],
      ["match-cy", "cy@corp.test"],
      ["match-dee", undefined],
    ] as const) {
      ids.set(subscriberId, (await client.upsertSubscriber({ subscriberId, fields: email ? { email } : {} }, scoped)).subscriber!.id);
    }
    await client.upsertSubscriber({ subscriberId: "match-ada", fields: { email: "Ada@Example.com" } }, call);
    const match = async (request: { subscriberIds?: string[]; emails?: string[]; search?: string; limit?: number }) => {
      const reply = await client.matchSubscribers({ limit: 10, ...request }, scoped);
      return { ids: [...reply.ids].sort(), hasMore: reply.hasMore };
    };
    const idsOf = (...subscriberIds: string[]) => subscriberIds.map((id) => ids.get(id)!).sort();
    expect(await match({ subscriberIds: ["match-dee", "nobody"] })).toEqual({ ids: idsOf("match-dee"), hasMore: false });
    expect(await match({ emails: ["bob@corp.test"], subscriberIds: ["match-dee"] })).toEqual({ ids: idsOf("match-bob", "match-dee"), hasMore: false });
    // Emails are exact; a search finds an email containing it in any case, or an equal subscriberId.
    expect((await match({ emails: ["ada@example.com"] })).ids).toEqual([]);
    expect((await match({ search: "EXAMPLE" })).ids).toEqual(idsOf("match-ada"));
    expect((await match({ search: "match-cy" })).ids).toEqual(idsOf("match-cy"));
    expect((await match({ search: "_" })).ids).toEqual([]);
    expect(await match({ search: "corp.test", limit: 1 })).toEqual({ ids: [expect.any(String)], hasMore: true });
    expect((await rpcError(client.matchSubscribers({ limit: 0 }, scoped))).code).toBe(Code.InvalidArgument);
    const tooMany = await rpcError(client.matchSubscribers({ limit: 10, emails: Array.from({ length: 101 }, String) }, scoped));
    expect(tooMany.code).toBe(Code.InvalidArgument);
  });

  it("answers the rest of a batch when one of its ids holds a NUL character (that one is absent)", async () => {
    const a = (await client.upsertSubscriber({ subscriberId: "nul-neighbour" }, call)).subscriber!;
    const reply = await client.batchGetSubscribers({ subscriberIds: ["nul-neighbour", "a\u0000b"], ids: ["\u0000"] }, call);
    expect(reply.subscribers.map((s) => s.id)).toEqual([a.id]);
  });

  it("ensures a batch: creates unknown ids, applies given fields, keeps absent ones, skips invalid values", async () => {
    await client.upsertSubscriber({ subscriberId: "known", fields: { firstName: "Known", email: "k@example.com" } }, call);
    const reply = await client.ensureSubscribers(
      {
        subscribers: [
          { subscriberId: "bare" },
          { subscriberId: "known", fields: { lastName: "Updated", email: "not-an-email" } },
          { subscriberId: "fresh", fields: { firstName: "Fresh", data: { a: 1 } } },
        ],
      },
      call,
    );
    const byId = new Map(reply.subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
    expect([...byId.keys()].sort()).toEqual(["bare", "fresh", "known"]);
    expect(byId.get("known")).toMatchObject({ firstName: "Known", lastName: "Updated", email: "k@example.com", version: 1 });
    expect(byId.get("fresh")).toMatchObject({ firstName: "Fresh", data: { a: 1 }, version: 0 });
    const again = await client.ensureSubscribers({ subscribers: [{ subscriberId: "known", fields: { lastName: "Updated" } }] }, call);
    expect(again.subscribers[0]?.version).toBe(1);
  });

  it("ensures a batch of ids alone: creates the unknown ones and leaves known profiles and versions as they are", async () => {
    const known = (await client.upsertSubscriber({ subscriberId: "ids-known", fields: { firstName: "Kept", email: "kept@example.com" } }, call)).subscriber!;
    const reply = await client.ensureSubscribers(
      { subscribers: [{ subscriberId: "ids-known" }, { subscriberId: "ids-new" }, { subscriberId: "ids-new" }] },
      call,
    );
    const byId = new Map(reply.subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
    expect([...byId.keys()].sort()).toEqual(["ids-known", "ids-new"]);
    expect(byId.get("ids-known")).toMatchObject({ id: known.id, firstName: "Kept", email: "kept@example.com", version: known.version });
    expect(byId.get("ids-new")).toMatchObject({ version: 0 });
    expect(byId.get("ids-new")?.firstName).toBeUndefined();
  });

  it("pages every recipient of the environment for fan-out, up to 1000 at a time, in id order", async () => {
    const scope = newScope();
    const as = { headers: scopeHeaders(scope) };
    for (const offset of [0, 600]) {
      await client.ensureSubscribers({ subscribers: Array.from({ length: 600 }, (_, index) => ({ subscriberId: `fan-${offset + index}` })) }, as);
    }
    await client.ensureSubscribers({ subscribers: [{ subscriberId: "elsewhere" }] }, { headers: scopeHeaders(newScope()) });
    const first = await client.pageRecipients({ limit: 1000 }, as);
    expect(first.recipients).toHaveLength(1000);
    const second = await client.pageRecipients({ limit: 1000, after: first.next! }, as);
    expect(second.recipients).toHaveLength(200);
    expect(second.next).toBeUndefined();
    const recipients = [...first.recipients, ...second.recipients];
    expect(recipients.map((recipient) => recipient.id)).toEqual(recipients.map((recipient) => recipient.id).sort());
    expect(new Set(recipients.map((recipient) => recipient.subscriberId))).toEqual(new Set(Array.from({ length: 1200 }, (_, index) => `fan-${index}`)));
    expect((await rpcError(client.pageRecipients({ limit: 1001 }, as))).code).toBe(Code.InvalidArgument);
  });

  it("answers recipients by internal id with the profile, data and channels a message is composed from", async () => {
    const scope = newScope();
    const as = { headers: scopeHeaders(scope) };
    const { subscriber } = await client.upsertSubscriber(
      { subscriberId: "rec-a", fields: { firstName: "Ada", email: "ada@example.com", data: { plan: "pro" }, isOnline: true } },
      as,
    );
    const { subscriber: other } = await client.upsertSubscriber({ subscriberId: "rec-b" }, { headers: scopeHeaders(newScope()) });
    const reply = await client.batchGetRecipients({ ids: [subscriber!.id, other!.id, "0".repeat(24)] }, as);
    expect(reply.recipients).toHaveLength(1);
    expect(reply.recipients[0]).toMatchObject({
      id: subscriber!.id,
      subscriberId: "rec-a",
      firstName: "Ada",
      email: "ada@example.com",
      data: { plan: "pro" },
      isOnline: true,
      channels: [],
    });
    expect(reply.recipients[0]!.lastName).toBeUndefined();
    const tooMany = await rpcError(client.batchGetRecipients({ ids: Array.from({ length: 1001 }, String) }, as));
    expect(tooMany.code).toBe(Code.InvalidArgument);
  });
});
