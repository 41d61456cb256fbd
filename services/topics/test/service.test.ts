import { Code } from "@connectrpc/connect";
import { commonV1, topicsV1 } from "@notify/proto";
import { fieldErrorsOf, objectId } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/store.js";
import { FakeSubscribers, callAs, inMemoryClient, newScope, openDatabase, rpcError, type Fixture, type TestScope } from "./fixtures.js";

let fixture: Fixture;
let subscribers: FakeSubscribers;
let client: ReturnType<typeof inMemoryClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  subscribers = new FakeSubscribers();
  client = inMemoryClient(fixture.pool, subscribers);
});
afterAll(() => fixture?.close());

function people(scope: TestScope, ...ids: string[]) {
  return ids.map((id) => subscribers.add(scope, id, id.toUpperCase()));
}

describe("topics", () => {
  const scope = newScope();
  const call = callAs(scope);

  it("creates, gets, renames and lists topics", async () => {
    const created = await client.createTopic({ key: "news", name: "News" }, call);
    expect(created).toMatchObject({ key: "news", name: "News", subscribers: [], organizationId: scope.organizationId, environmentId: scope.environmentId });
    expect((await client.getTopic({ key: "news" }, call)).id).toBe(created.id);
    expect((await client.renameTopic({ key: "news", name: "Daily news" }, call)).name).toBe("Daily news");
    await client.createTopic({ key: "sports", name: "Sports" }, call);
    const page = await client.listTopics({ page: 0, pageSize: 1 }, call);
    expect(page).toMatchObject({ hasMore: true, totalCount: 2, totalCountCapped: false });
    expect(page.topics.map((topic) => topic.key)).toEqual(["news"]);
    expect((await client.listTopics({ page: 1, pageSize: 1 }, call)).topics.map((topic) => topic.key)).toEqual(["sports"]);
    expect((await client.listTopics({ page: 0, pageSize: 10, name: "Sports" }, call)).topics.map((topic) => topic.key)).toEqual(["sports"]);
    expect((await client.listTopics({ page: 0, pageSize: 10 }, callAs(newScope()))).topics).toEqual([]);
  });

  it("answers ALREADY_EXISTS for a taken key, NOT_FOUND for unknown ones, INVALID_ARGUMENT for bad keys", async () => {
    await client.createTopic({ key: "taken", name: "T" }, call);
    expect((await rpcError(client.createTopic({ key: "taken", name: "T" }, call))).code).toBe(Code.AlreadyExists);
    expect((await rpcError(client.getTopic({ key: "nope" }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.renameTopic({ key: "nope", name: "x" }, call))).code).toBe(Code.NotFound);
    for (const key of ["has space", "x".repeat(256), ""]) {
      const error = await rpcError(client.createTopic({ key, name: "Bad" }, call));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(fieldErrorsOf(error)).toHaveProperty("key");
    }
    await client.createTopic({ key: "user@example.com", name: "Email keys are valid" }, call);
  });

  it("upserts: creates, then renames, or refuses when asked to fail on an existing key", async () => {
    const first = await client.upsertTopic({ key: "upserted" }, call);
    expect(first.created).toBe(true);
    expect(first.topic?.name).toBeUndefined();
    const second = await client.upsertTopic({ key: "upserted", name: "Named" }, call);
    expect(second).toMatchObject({ created: false, topic: { id: first.topic!.id, name: "Named" } });
    expect((await client.upsertTopic({ key: "upserted" }, call)).topic?.name).toBe("Named");
    expect((await rpcError(client.upsertTopic({ key: "upserted", failIfExists: true }, call))).code).toBe(Code.AlreadyExists);
  });

  it("deletes only a topic without members, unless forced", async () => {
    people(scope, "del-1");
    await client.addSubscribers({ topicKey: "doomed", subscriberIds: ["del-1"] }, call);
    expect((await rpcError(client.deleteTopic({ key: "doomed", force: false }, call))).code).toBe(Code.FailedPrecondition);
    await client.deleteTopic({ key: "doomed", force: true }, call);
    expect((await rpcError(client.getTopic({ key: "doomed" }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.getSubscription({ topicKey: "doomed", externalSubscriberId: "del-1" }, call))).code).toBe(Code.NotFound);
    await client.createTopic({ key: "empty", name: "E" }, call);
    await client.deleteTopic({ key: "empty", force: false }, call);
    expect((await rpcError(client.deleteTopic({ key: "empty", force: false }, call))).code).toBe(Code.NotFound);
  });
});

describe("topic search (v2 list)", () => {
  const keys = (reply: topicsV1.SearchTopicsResponse) => reply.topics.map((topic) => topic.key);

  it("pages by cursor both ways, newest first by default, with a total of every match", async () => {
    const scope = newScope();
    const call = callAs(scope);
    for (const key of ["t1", "t2", "t3", "t4", "t5"]) await client.createTopic({ key, name: `${key}-name` }, call);
    await client.createTopic({ key: "elsewhere", name: "Other environment" }, callAs(newScope(scope.organizationId)));

    const first = await client.searchTopics({ limit: 2 }, call);
    expect(keys(first)).toEqual(["t5", "t4"]);
    expect(first).toMatchObject({ totalCount: 5, totalCountCapped: false });
    expect(first.previous).toBeUndefined();
    expect(first.topics[0]).toMatchObject({ subscribers: [], name: "t5-name", environmentId: scope.environmentId });
    const second = await client.searchTopics({ limit: 2, after: first.next! }, call);
    expect(keys(second)).toEqual(["t3", "t2"]);
    const third = await client.searchTopics({ limit: 2, after: second.next! }, call);
    expect(keys(third)).toEqual(["t1"]);
    expect(third.next).toBeUndefined();
    const back = await client.searchTopics({ limit: 2, before: third.previous! }, call);
    expect(keys(back)).toEqual(["t3", "t2"]);
    expect(keys(await client.searchTopics({ limit: 2, after: first.next!, includeCursor: true }, call))).toEqual(["t4", "t3"]);
    const ascending = await client.searchTopics({ limit: 10, direction: commonV1.SortDirection.ASC }, call);
    expect(keys(ascending)).toEqual(["t1", "t2", "t3", "t4", "t5"]);
    // A cursor that names no topic of the environment gives an empty page.
    const unknown = await client.searchTopics({ after: objectId() }, call);
    expect([unknown.topics, unknown.next, unknown.previous]).toEqual([[], undefined, undefined]);
  });

  it("orders by update time and filters by key and name substrings, case-insensitively and literally", async () => {
    const call = callAs(newScope());
    for (const [key, name] of [
      ["alpha", "Team A"],
      ["beta", "Team B"],
      ["alphabet", "Letters 100%"],
    ])
      await client.createTopic({ key: key!, name: name! }, call);
    await client.renameTopic({ key: "alpha", name: "Team A (renamed)" }, call);
    const byUpdate = await client.searchTopics({ orderBy: topicsV1.TopicOrder.UPDATED_AT }, call);
    expect(keys(byUpdate)).toEqual(["alpha", "alphabet", "beta"]);
    const paged = await client.searchTopics({ orderBy: topicsV1.TopicOrder.UPDATED_AT, limit: 1, after: byUpdate.topics[0]!.id }, call);
    expect(keys(paged)).toEqual(["alphabet"]);
    expect(keys(await client.searchTopics({ orderBy: topicsV1.TopicOrder.CREATED_AT, direction: commonV1.SortDirection.ASC }, call))).toEqual([
      "alpha",
      "beta",
      "alphabet",
    ]);
    const byKey = await client.searchTopics({ orderBy: topicsV1.TopicOrder.KEY, direction: commonV1.SortDirection.ASC, limit: 2 }, call);
    expect(keys(byKey)).toEqual(["alpha", "alphabet"]);
    expect(keys(await client.searchTopics({ orderBy: topicsV1.TopicOrder.KEY, direction: commonV1.SortDirection.ASC, after: byKey.next! }, call))).toEqual([
      "beta",
    ]);
    expect(keys(await client.searchTopics({ key: "ALPHA" }, call))).toEqual(["alphabet", "alpha"]);
    expect(await client.searchTopics({ name: "team" }, call)).toMatchObject({ totalCount: 2 });
    expect(keys(await client.searchTopics({ name: "0%" }, call))).toEqual(["alphabet"]);
    expect(keys(await client.searchTopics({ key: "_" }, call))).toEqual([]);
  });

  it("refuses a page over 100, both cursors at once and an unknown order", async () => {
    const call = callAs(newScope());
    for (const [request, field] of [
      [{ limit: 101 }, "limit"],
      [{ after: objectId(), before: objectId() }, "after"],
      [{ orderBy: 9 as topicsV1.TopicOrder }, "orderBy"],
    ] as const) {
      const error = await rpcError(client.searchTopics(request, call));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(fieldErrorsOf(error)).toHaveProperty(field);
    }
  });
});

describe("membership", () => {
  const scope = newScope();
  const call = callAs(scope);

  it("adds known subscribers idempotently, reports unknown ones, creates the topic when missing", async () => {
    const [ada, bob] = people(scope, "ada", "bob");
    const reply = await client.addSubscribers({ topicKey: "team", subscriberIds: ["ada", "ghost", "bob", "ada"] }, call);
    expect(reply.succeeded).toEqual(["ada", "bob"]);
    expect(reply.notFound).toEqual(["ghost"]);
    // Made unnamed when the call names no topic.
    expect(reply.topic).toMatchObject({ key: "team", subscribers: ["ada", "bob"] });
    expect(reply.topic?.name).toBeUndefined();
    expect(reply.subscriptions.map((s) => [s.internalSubscriberId, s.externalSubscriberId, s.subscriber?.firstName])).toEqual([
      [ada!.id, "ada", "ADA"],
      [bob!.id, "bob", "BOB"],
    ]);
    const again = await client.addSubscribers({ topicKey: "team", subscriberIds: ["ada"] }, call);
    expect(again.subscriptions[0]?.id).toBe(reply.subscriptions[0]?.id);
    const { rows } = await fixture.pool.query("SELECT count(*)::int AS count FROM topics.subscriptions WHERE topic_id = $1", [reply.topic!.id]);
    expect(rows[0].count).toBe(2);
  });

  it("names the topic it makes as asked, and renames an existing one only when asked to", async () => {
    people(scope, "dora");
    const named = (topicKey: string, topicNaming: topicsV1.AddSubscribersRequest["topicNaming"]) =>
      client.addSubscribers({ topicKey, subscriberIds: ["dora"], topicNaming }, call);
    expect((await named("made-v1", { case: "newTopicName", value: "Autogenerated-made-v1" })).topic?.name).toBe("Autogenerated-made-v1");
    expect((await named("made-v1", { case: "newTopicName", value: "Other" })).topic?.name).toBe("Autogenerated-made-v1");
    expect((await named("made-v2", { case: "topicName", value: "Launches" })).topic?.name).toBe("Launches");
    expect((await named("made-v2", { case: undefined })).topic?.name).toBe("Launches");
    expect((await named("made-v2", { case: "topicName", value: "Releases" })).topic?.name).toBe("Releases");
    expect((await client.getTopic({ key: "made-v2" }, call)).name).toBe("Releases");
    expect((await rpcError(named("made-v3", { case: "topicName", value: "x".repeat(256) }))).code).toBe(Code.InvalidArgument);
  });

  it("adds many members with one subscriber lookup", async () => {
    const ids = Array.from({ length: 300 }, (_, index) => `bulk-${index}`);
    people(scope, ...ids);
    const before = subscribers.calls;
    const reply = await client.addSubscribers({ topicKey: "bulk", subscriberIds: ids }, call);
    expect(reply.succeeded).toHaveLength(300);
    expect(subscribers.calls - before).toBe(1);
    expect(reply.topic?.subscribers).toHaveLength(100);
    expect((await rpcError(client.addSubscribers({ topicKey: "bulk", subscriberIds: Array.from({ length: 1001 }, String) }, call))).code).toBe(
      Code.InvalidArgument,
    );
  });

  it("checks a membership: the record, or NOT_FOUND for non-members, unknown topics and unknown subscribers", async () => {
    const [carol] = people(scope, "carol");
    people(scope, "dave");
    const topic = (await client.addSubscribers({ topicKey: "checked", subscriberIds: ["carol"] }, call)).topic!;
    const record = await client.getSubscription({ topicKey: "checked", externalSubscriberId: "carol" }, call);
    expect(record).toMatchObject({
      organizationId: scope.organizationId,
      environmentId: scope.environmentId,
      topicId: topic.id,
      topicKey: "checked",
      internalSubscriberId: carol!.id,
      externalSubscriberId: "carol",
    });
    for (const [topicKey, externalSubscriberId] of [
      ["checked", "dave"],
      ["checked", "nobody"],
      ["unknown-topic", "carol"],
    ] as const) {
      const error = await rpcError(client.getSubscription({ topicKey, externalSubscriberId }, call));
      expect(error.code).toBe(Code.NotFound);
      expect(error.rawMessage).toBe(`Subscriber ${externalSubscriberId} not found for topic ${topicKey} in the environment ${scope.environmentId}`);
    }
    expect((await rpcError(client.getSubscription({ topicKey: "checked", externalSubscriberId: "carol" }, callAs(newScope())))).code).toBe(Code.NotFound);
  });

  it("does not count a membership left behind by a deleted subscriber", async () => {
    people(scope, "erin");
    await client.addSubscribers({ topicKey: "stale", subscriberIds: ["erin"] }, call);
    subscribers.remove(scope, "erin");
    expect((await rpcError(client.getSubscription({ topicKey: "stale", externalSubscriberId: "erin" }, call))).code).toBe(Code.NotFound);
    expect((await client.listSubscriptions({ topicKey: "stale", limit: 10 }, call)).subscriptions).toEqual([]);
    people(scope, "erin");
    expect((await rpcError(client.getSubscription({ topicKey: "stale", externalSubscriberId: "erin" }, call))).code).toBe(Code.NotFound);
    await client.addSubscribers({ topicKey: "stale", subscriberIds: ["erin"] }, call);
    expect((await client.getSubscription({ topicKey: "stale", externalSubscriberId: "erin" }, call)).externalSubscriberId).toBe("erin");
  });

  it("removes members, reporting unknown subscribers and non-members", async () => {
    people(scope, "fay", "gus", "hal");
    await client.addSubscribers({ topicKey: "removal", subscriberIds: ["fay", "gus"] }, call);
    const reply = await client.removeSubscribers({ topicKey: "removal", subscriberIds: ["fay", "hal", "ghost"] }, call);
    expect(reply.removed.map((s) => s.externalSubscriberId)).toEqual(["fay"]);
    expect(reply.notSubscribed).toEqual(["hal"]);
    expect(reply.notFound).toEqual(["ghost"]);
    expect(reply.topic?.subscribers).toEqual(["gus"]);
    expect((await rpcError(client.removeSubscribers({ topicKey: "no-such-topic", subscriberIds: ["gus"] }, call))).code).toBe(Code.NotFound);
  });

  it("names subscriptions: an identifier of their own or the derived one, one per subscriber and topic", async () => {
    const [kim] = people(scope, "kim", "lou", "max");
    const reply = await client.addSubscribers(
      { topicKey: "named", subscriberIds: ["lou"], named: [{ subscriberId: "kim", identifier: "kim-phone", name: "Phone" }], name: "Plain" },
      call,
    );
    expect(reply.succeeded.sort()).toEqual(["kim", "lou"]);
    expect(reply.subscriptions.map((s) => [s.externalSubscriberId, s.identifier, s.name]).sort()).toEqual([
      ["kim", "kim-phone", "Phone"],
      ["lou", "tk_named:si_lou", "Plain"],
    ]);

    const conflicting = await client.addSubscribers(
      {
        topicKey: "named",
        named: [
          { subscriberId: "kim", identifier: "kim-tablet" },
          { subscriberId: "max", identifier: "kim-phone" },
          { subscriberId: "lou", identifier: "tk_named:si_lou" },
        ],
      },
      call,
    );
    expect(conflicting.succeeded).toEqual(["lou"]);
    expect(conflicting.conflicts.map((conflict) => [conflict.subscriberId, conflict.identifier]).sort()).toEqual([
      ["kim", "kim-tablet"],
      ["max", "kim-phone"],
    ]);
    const othersDerived = await client.addSubscribers({ topicKey: "named", named: [{ subscriberId: "max", identifier: "tk_named:si_lou" }] }, call);
    expect(othersDerived.conflicts.map((conflict) => conflict.subscriberId)).toEqual(["max"]);

    const found = await client.getSubscription({ topicKey: "named", externalSubscriberId: "", identifier: "kim-phone" }, call);
    expect(found).toMatchObject({ internalSubscriberId: kim!.id, identifier: "kim-phone", name: "Phone" });
    expect((await rpcError(client.getSubscription({ topicKey: "named", externalSubscriberId: "", identifier: "tk_named:si_kim" }, call))).code).toBe(
      Code.NotFound,
    );
    expect((await client.updateSubscription({ topicKey: "named", identifier: "kim-phone", name: "Old phone" }, call)).name).toBe("Old phone");
    expect((await rpcError(client.updateSubscription({ topicKey: "named", identifier: "nobody", name: "x" }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.updateSubscription({ topicKey: "named", identifier: "kim-phone", name: " " }, call))).code).toBe(Code.InvalidArgument);

    const removed = await client.removeSubscribers({ topicKey: "named", identifiers: ["kim-phone", "tk_named:si_lou", "nothing"] }, call);
    expect(removed.removed.map((s) => s.externalSubscriberId).sort()).toEqual(["kim", "lou"]);
    expect(removed.unknownIdentifiers).toEqual(["nothing"]);
    expect(removed.topic?.subscribers).toEqual([]);
  });

  it("removes every membership of a deleted subscriber, in its environment only", async () => {
    const [ivy] = people(scope, "ivy");
    await client.addSubscribers({ topicKey: "ivy-1", subscriberIds: ["ivy"] }, call);
    await client.addSubscribers({ topicKey: "ivy-2", subscriberIds: ["ivy"] }, call);
    const elsewhere = newScope();
    await store.insertTopic(fixture.pool, elsewhere.environmentId, { id: objectId(), organizationId: elsewhere.organizationId, key: "x", name: null });
    const other = (await store.selectTopic(fixture.pool, elsewhere.environmentId, "x"))!;
    await store.insertSubscriptions(
      fixture.pool,
      elsewhere.environmentId,
      { id: other.id, organizationId: elsewhere.organizationId },
      [],
      [{ id: objectId(), internalSubscriberId: ivy!.id, externalSubscriberId: "ivy" }],
    );
    expect((await client.deleteSubscriberSubscriptions({ internalSubscriberId: ivy!.id }, call)).deleted).toBe(2);
    expect((await rpcError(client.getSubscription({ topicKey: "ivy-1", externalSubscriberId: "ivy" }, call))).code).toBe(Code.NotFound);
    expect(await store.hasSubscriptions(fixture.pool, elsewhere.environmentId, other.id)).toBe(true);
  });

  it("never deletes a topic a member is joining at that moment", async () => {
    people(scope, "joiner");
    for (let round = 0; round < 10; round += 1) {
      const key = `contended-${round}`;
      await client.createTopic({ key, name: key }, call);
      const [, deletion] = await Promise.allSettled([
        client.addSubscribers({ topicKey: key, subscriberIds: ["joiner"] }, call),
        client.deleteTopic({ key, force: false }, call),
      ]);
      if (deletion.status === "rejected") expect((deletion.reason as { code: Code }).code).toBe(Code.FailedPrecondition);
      // Whichever came first, the member ends up in a topic of that key.
      expect((await client.getSubscription({ topicKey: key, externalSubscriberId: "joiner" }, call)).externalSubscriberId).toBe("joiner");
    }
  });

  it("pages a topic's memberships by cursor in both directions, with subscriber details", async () => {
    const ids = ["p0", "p1", "p2", "p3", "p4"];
    people(scope, ...ids);
    for (const id of ids) await client.addSubscribers({ topicKey: "paged", subscriberIds: [id] }, call);
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await client.listSubscriptions({ topicKey: "paged", limit: 2, direction: commonV1.SortDirection.ASC, ...(after ? { after } : {}) }, call);
      expect(page.totalCount).toBe(5);
      seen.push(...page.subscriptions.map((s) => s.externalSubscriberId));
      expect(page.subscriptions.every((s) => s.subscriber?.firstName === s.externalSubscriberId.toUpperCase())).toBe(true);
      after = page.next;
    } while (after);
    expect(seen).toEqual(ids);
    const newest = await client.listSubscriptions({ topicKey: "paged", limit: 2, direction: commonV1.SortDirection.DESC }, call);
    expect(newest.subscriptions.map((s) => s.externalSubscriberId)).toEqual(["p4", "p3"]);
    const back = await client.listSubscriptions({ topicKey: "paged", limit: 2, direction: commonV1.SortDirection.DESC, before: newest.next! }, call);
    expect(back.subscriptions.map((s) => s.externalSubscriberId)).toEqual(["p4"]);
    const one = await client.listSubscriptions({ topicKey: "paged", limit: 10, subscriberId: "p2" }, call);
    expect(one.subscriptions.map((s) => s.externalSubscriberId)).toEqual(["p2"]);
    expect((await rpcError(client.listSubscriptions({ topicKey: "nope", limit: 10 }, call))).code).toBe(Code.NotFound);
  });
});

describe("fan-out paging", () => {
  const scope = newScope();
  const call = callAs(scope);

  /** Members straight into the store: fan-out paging needs many, and no subscriber lookups. */
  async function seed(key: string, members: string[]) {
    await store.insertTopic(fixture.pool, scope.environmentId, { id: objectId(), organizationId: scope.organizationId, key, name: key });
    const topic = (await store.selectTopic(fixture.pool, scope.environmentId, key))!;
    await store.insertSubscriptions(
      fixture.pool,
      scope.environmentId,
      { id: topic.id, organizationId: scope.organizationId },
      [],
      members.map((internal) => ({ id: objectId(), internalSubscriberId: internal, externalSubscriberId: `ext-${internal}` })),
    );
  }

  it("streams the distinct members of several topics in pages, leaving out excluded ids", async () => {
    const internal = Array.from({ length: 3000 }, () => objectId());
    await seed("big", internal.slice(0, 2500));
    await seed("overlap", internal.slice(2000, 3000));
    const excluded = [`ext-${internal[10]}`, `ext-${internal[2900]}`];
    const collected: string[] = [];
    const pageSizes: number[] = [];
    let after: string | undefined;
    do {
      const page = await client.pageMembers(
        { topicKeys: ["big", "overlap", "missing-topic"], excludeSubscriberIds: excluded, limit: 700, ...(after ? { after } : {}) },
        call,
      );
      pageSizes.push(page.members.length);
      for (const member of page.members) {
        expect(member.externalSubscriberId).toBe(`ext-${member.internalSubscriberId}`);
        collected.push(member.internalSubscriberId);
      }
      after = page.next;
    } while (after);
    expect(collected).toHaveLength(2998);
    expect(new Set(collected).size).toBe(2998);
    expect(collected).not.toContain(internal[10]);
    expect(collected).not.toContain(internal[2900]);
    expect(pageSizes.slice(0, -1).every((size) => size === 700)).toBe(true);
  });

  it("refuses a cursor it did not make and limits out of range", async () => {
    expect((await rpcError(client.pageMembers({ topicKeys: ["big"], limit: 10, after: "nonsense" }, call))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(client.pageMembers({ topicKeys: ["big"], limit: 0 }, call))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(client.pageMembers({ topicKeys: ["big"], limit: 1001 }, call))).code).toBe(Code.InvalidArgument);
    expect((await client.pageMembers({ topicKeys: ["missing"], limit: 10 }, call)).members).toEqual([]);
  });
});

describe("context scopes and preferences of subscriptions", () => {
  const scope = newScope();
  const call = callAs(scope);
  const membersOf = async (request: { topicKeys: string[]; contextKeys?: string[]; workflowId?: string }) =>
    (await client.pageMembers({ limit: 100, ...request }, call)).members
      .map((member) => ({ id: member.externalSubscriberId, ...(member.conditions.length > 0 ? { conditions: member.conditions } : {}) }))
      .sort((a, b) => a.id.localeCompare(b.id));

  it("holds one subscription per scope, named with its keys, and fans out only to the trigger's exact scope", async () => {
    people(scope, "ann", "bob");
    await client.addSubscribers({ topicKey: "scoped", subscriberIds: ["ann", "bob"] }, call);
    const acme = await client.addSubscribers({ topicKey: "scoped", subscriberIds: ["ann"], contextKeys: ["tenant:acme", "app:web"] }, call);
    expect(acme.subscriptions).toHaveLength(1);
    expect(acme.subscriptions[0]).toMatchObject({ identifier: "tk_scoped:si_ann:ctx_app:web,tenant:acme", contextKeys: ["app:web", "tenant:acme"] });
    // Again in the same scope: the same subscription.
    const again = await client.addSubscribers({ topicKey: "scoped", subscriberIds: ["ann"], contextKeys: ["app:web", "tenant:acme"] }, call);
    expect(again.subscriptions[0]!.id).toBe(acme.subscriptions[0]!.id);

    expect(await membersOf({ topicKeys: ["scoped"] })).toEqual([{ id: "ann" }, { id: "bob" }]);
    expect(await membersOf({ topicKeys: ["scoped"], contextKeys: ["tenant:acme", "app:web"] })).toEqual([{ id: "ann" }]);
    expect(await membersOf({ topicKeys: ["scoped"], contextKeys: ["tenant:acme"] })).toEqual([]);

    const listed = async (request: { contextKeys?: string[]; anyContext?: boolean }) =>
      (await client.listSubscriptions({ topicKey: "scoped", limit: 10, ...request }, call)).subscriptions.map((subscription) => subscription.identifier).sort();
    expect(await listed({ anyContext: true })).toEqual(["tk_scoped:si_ann", "tk_scoped:si_ann:ctx_app:web,tenant:acme", "tk_scoped:si_bob"]);
    expect(await listed({})).toEqual(["tk_scoped:si_ann", "tk_scoped:si_bob"]);
    expect(await listed({ contextKeys: ["tenant:acme", "app:web"] })).toEqual(["tk_scoped:si_ann:ctx_app:web,tenant:acme"]);

    const byIdentifier = await client.getSubscription({ topicKey: "scoped", identifier: "tk_scoped:si_ann:ctx_app:web,tenant:acme" }, call);
    expect(byIdentifier.id).toBe(acme.subscriptions[0]!.id);
    const bySubscriber = await client.getSubscription({ topicKey: "scoped", externalSubscriberId: "ann", contextKeys: ["app:web", "tenant:acme"] }, call);
    expect(bySubscriber.id).toBe(acme.subscriptions[0]!.id);
    expect((await rpcError(client.addSubscribers({ topicKey: "scoped", subscriberIds: ["ann"], contextKeys: ["no key"] }, call))).code).toBe(
      Code.InvalidArgument,
    );
  });

  it("leaves out members whose preference disables the workflow, hands over conditions, and replaces or merges preferences", async () => {
    people(scope, "cy", "di", "ed");
    const condition = { "==": [{ var: "payload.tier" }, "gold"] };
    const made = await client.addSubscribers(
      {
        topicKey: "prefs",
        subscriberIds: ["cy", "di"],
        preferences: [
          { workflowId: "wf-off", enabled: false },
          { workflowId: "wf-if", enabled: false, condition },
          { workflowId: "wf-off", enabled: true },
        ],
      },
      call,
    );
    expect(made.subscriptions[0]!.preferences.map(({ workflowId, enabled, condition }) => ({ workflowId, enabled, condition }))).toEqual([
      { workflowId: "wf-if", enabled: false, condition },
      { workflowId: "wf-off", enabled: false, condition: undefined },
    ]);
    await client.addSubscribers({ topicKey: "prefs", subscriberIds: ["ed"] }, call);
    expect(await membersOf({ topicKeys: ["prefs"], workflowId: "wf-off" })).toEqual([{ id: "ed" }]);
    expect(await membersOf({ topicKeys: ["prefs"], workflowId: "wf-if" })).toEqual([
      { id: "cy", conditions: [condition] },
      { id: "di", conditions: [condition] },
      { id: "ed" },
    ]);
    expect(await membersOf({ topicKeys: ["prefs"], workflowId: "wf-other" })).toHaveLength(3);
    // Through several topics a member comes once, with every condition it could be reached by,
    // or with none when one of its subscriptions takes part without one.
    const other = { "==": [{ var: "payload.tier" }, "silver"] };
    await client.addSubscribers({ topicKey: "prefs-2", subscriberIds: ["cy"], preferences: [{ workflowId: "wf-if", enabled: true, condition: other }] }, call);
    await client.addSubscribers({ topicKey: "prefs-2", subscriberIds: ["di"] }, call);
    const both = await membersOf({ topicKeys: ["prefs", "prefs-2"], workflowId: "wf-if" });
    expect(both).toEqual([{ id: "cy", conditions: expect.arrayContaining([condition, other]) }, { id: "di" }, { id: "ed" }]);
    expect(both[0]!.conditions).toHaveLength(2);
    // Existing subscriptions keep their preferences when added again.
    await client.addSubscribers({ topicKey: "prefs", subscriberIds: ["cy"], preferences: [{ workflowId: "wf-off", enabled: true }] }, call);
    expect(await membersOf({ topicKeys: ["prefs"], workflowId: "wf-off" })).toEqual([{ id: "ed" }]);

    // Replaced: cy's only preference now enables wf-off; none at all for di.
    const cy = await client.updateSubscription(
      { topicKey: "prefs", identifier: "tk_prefs:si_cy", replacePreferences: true, preferences: [{ workflowId: "wf-off", enabled: true }] },
      call,
    );
    expect(cy.preferences.map((preference) => preference.workflowId)).toEqual(["wf-off"]);
    await client.updateSubscription({ topicKey: "prefs", identifier: "tk_prefs:si_di", replacePreferences: true }, call);
    expect(await membersOf({ topicKeys: ["prefs"], workflowId: "wf-off" })).toEqual([{ id: "cy" }, { id: "di" }, { id: "ed" }]);
    // A rename alone leaves them.
    expect((await client.updateSubscription({ topicKey: "prefs", identifier: "tk_prefs:si_cy", name: "Cy" }, call)).preferences).toHaveLength(1);

    // Merged, one workflow at a time, by the subscriber's identifier in its scope (no topic named).
    await client.setSubscriptionPreference({ subscriberId: "ed", identifier: "tk_prefs:si_ed", workflowId: "wf-off", enabled: false }, call);
    expect(await membersOf({ topicKeys: ["prefs"], workflowId: "wf-off" })).toEqual([{ id: "cy" }, { id: "di" }]);
    const merged = await client.setSubscriptionPreference({ subscriberId: "ed", identifier: "tk_prefs:si_ed", workflowId: "wf-off", condition }, call);
    expect(merged.preferences).toMatchObject([{ workflowId: "wf-off", enabled: false, condition }]);
    for (const wrong of [
      { subscriberId: "cy", identifier: "tk_prefs:si_ed" },
      { subscriberId: "ed", identifier: "tk_prefs:si_ed", contextKeys: ["tenant:acme"] },
    ]) {
      expect((await rpcError(client.setSubscriptionPreference({ ...wrong, workflowId: "wf-off", enabled: true }, call))).code).toBe(Code.NotFound);
    }
    const huge = { in: [{ var: "payload.x" }, Array.from({ length: 5000 }, (_, index) => `value-${index}`)] };
    expect(
      (await rpcError(client.setSubscriptionPreference({ subscriberId: "ed", identifier: "tk_prefs:si_ed", workflowId: "wf-off", condition: huge }, call)))
        .code,
    ).toBe(Code.InvalidArgument);
  });
});
