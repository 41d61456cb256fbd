import { objectId, type Queryable } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await openDatabase();
});
afterAll(() => fixture?.close());

const organizationId = objectId();

/** A topic in a fresh environment unless one is given. */
async function topic(key: string, environmentId: string, name: string | null = null) {
  return (await store.insertTopic(fixture.pool, environmentId, { id: objectId(), organizationId, key, name }))!;
}

/** Members named by external id; the internal id is made from it, so tests can name both. */
const members = (...externalIds: string[]): store.NewMember[] =>
  externalIds.map((externalSubscriberId) => ({ id: objectId(), internalSubscriberId: internalOf(externalSubscriberId), externalSubscriberId }));
const internalOf = (externalId: string) => `internal-${externalId}`;

async function join(environmentId: string, row: store.TopicRow, ...externalIds: string[]) {
  await store.insertSubscriptions(fixture.pool, environmentId, { id: row.id, organizationId }, [], members(...externalIds));
}

/** Runs `write` while `lock` holds its rows in an open transaction: the write must wait for the commit. */
async function heldOff(lock: (holder: Queryable) => Promise<unknown>, write: () => Promise<unknown>) {
  const holder = await fixture.pool.connect();
  try {
    await holder.query("BEGIN");
    await lock(holder);
    let written = false;
    const writing = write().then(() => {
      written = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(written).toBe(false);
    await holder.query("COMMIT");
    await writing;
  } finally {
    holder.release();
  }
}

const keys = (rows: store.TopicRow[]) => rows.map((row) => row.key);
const externalIds = (rows: { external_subscriber_id: string }[]) => rows.map((row) => row.external_subscriber_id);

describe("topics store", () => {
  it("inserts a key once per environment, and reads it only in its own", async () => {
    const environmentId = objectId();
    const first = await topic("news", environmentId, "News");
    expect(first).toMatchObject({ key: "news", name: "News", environment_id: environmentId, organization_id: organizationId });
    expect(await store.insertTopic(fixture.pool, environmentId, { id: objectId(), organizationId, key: "news", name: null })).toBeUndefined();

    const elsewhere = objectId();
    expect(await store.selectTopic(fixture.pool, elsewhere, "news")).toBeUndefined();
    expect(await topic("news", elsewhere)).toBeDefined();
    expect((await store.selectTopic(fixture.pool, environmentId, "news"))?.id).toBe(first.id);
  });

  it("reads topics by key in id order, leaving out unknown keys", async () => {
    const environmentId = objectId();
    await topic("b", environmentId);
    await topic("a", environmentId);
    expect(keys(await store.selectTopicsByKeys(fixture.pool, environmentId, ["a", "missing", "b"]))).toEqual(["b", "a"]);
  });

  it("renames a topic, and deleting it takes its memberships along", async () => {
    const environmentId = objectId();
    const row = await topic("renamed", environmentId, "Before");
    const renamed = await store.renameTopic(fixture.pool, environmentId, "renamed", "After");
    expect(renamed).toMatchObject({ id: row.id, name: "After" });
    expect(renamed!.updated_at.getTime()).toBeGreaterThanOrEqual(row.updated_at.getTime());
    expect(await store.renameTopic(fixture.pool, environmentId, "unknown", "After")).toBeUndefined();

    await join(environmentId, row, "ada");
    expect(await store.hasSubscriptions(fixture.pool, environmentId, row.id)).toBe(true);
    await store.deleteTopic(fixture.pool, environmentId, row.id);
    expect(await store.selectTopic(fixture.pool, environmentId, "renamed")).toBeUndefined();
    expect(await store.hasSubscriptions(fixture.pool, environmentId, row.id)).toBe(false);
  });

  it("pages in creation order with one row over, filters by exact key or name, and counts up to a cap", async () => {
    const environmentId = objectId();
    for (const key of ["t0", "t1", "t2", "t3", "t4"]) await topic(key, environmentId, key === "t3" ? "Three" : null);
    const all = { key: null, name: null };
    expect(keys(await store.selectTopicPage(fixture.pool, environmentId, all, 0, 2))).toEqual(["t0", "t1", "t2"]);
    expect(keys(await store.selectTopicPage(fixture.pool, environmentId, all, 4, 2))).toEqual(["t4"]);
    expect(keys(await store.selectTopicPage(fixture.pool, environmentId, { key: "t2", name: null }, 0, 10))).toEqual(["t2"]);
    expect(keys(await store.selectTopicPage(fixture.pool, environmentId, { key: null, name: "Three" }, 0, 10))).toEqual(["t3"]);

    expect(await store.countTopics(fixture.pool, environmentId, all, 100)).toBe(5);
    expect(await store.countTopics(fixture.pool, environmentId, all, 3)).toBe(3);
    expect(await store.countTopics(fixture.pool, environmentId, { key: "t9", name: null }, 100)).toBe(0);
  });

  it("searches by case-insensitive substrings, wildcards taken literally, and pages by keyset both ways", async () => {
    const environmentId = objectId();
    const created = [];
    for (const key of ["delta", "alpha", "charlie", "bravo", "100%-off"]) created.push(await topic(key, environmentId, key === "bravo" ? "Bravo Team" : null));
    const search = (key: string | null, name: string | null = null) => ({ key, name });
    const page = (over: Partial<Parameters<typeof store.selectTopicSearchPage>[3]>) => ({
      orderBy: "key" as const,
      cursor: undefined,
      towardsLower: false,
      inclusive: false,
      limit: 10,
      ...over,
    });

    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search("A"), page({})))).toEqual(["alpha", "bravo", "charlie", "delta"]);
    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search("%"), page({})))).toEqual(["100%-off"]);
    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search("_"), page({})))).toEqual([]);
    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search(null, "team"), page({})))).toEqual(["bravo"]);
    expect(await store.countTopicSearch(fixture.pool, environmentId, search("a"), 100)).toBe(4);
    expect(await store.countTopicSearch(fixture.pool, environmentId, search("a"), 2)).toBe(2);

    // By key after "alpha" (its id is the cursor), two at a time with one over; then back below "bravo".
    const alpha = created[1]!.id;
    const bravo = created[3]!.id;
    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search(null), page({ cursor: alpha, limit: 1 })))).toEqual(["bravo", "charlie"]);
    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search(null), page({ cursor: alpha, inclusive: true, limit: 1 })))).toEqual([
      "alpha",
      "bravo",
    ]);
    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search(null), page({ cursor: bravo, towardsLower: true })))).toEqual([
      "alpha",
      "100%-off",
    ]);
    // In creation order, and from a cursor that names no topic of this environment: nothing.
    expect(keys(await store.selectTopicSearchPage(fixture.pool, environmentId, search(null), page({ orderBy: "created_at", limit: 1 })))).toEqual([
      "delta",
      "alpha",
    ]);
    expect(await store.selectTopicSearchPage(fixture.pool, environmentId, search(null), page({ cursor: objectId() }))).toEqual([]);
  });

  it("adds only members not in the topic yet, and reads the first members of each topic in joining order", async () => {
    const environmentId = objectId();
    const one = await topic("one", environmentId);
    const two = await topic("two", environmentId);
    await join(environmentId, one, "c", "a", "b");
    await join(environmentId, one, "a", "d");
    await join(environmentId, two, "z");

    const first = await store.selectFirstMembers(fixture.pool, environmentId, [one.id, two.id, objectId()], 3);
    expect(first.filter((row) => row.topic_id === one.id).map((row) => row.external_subscriber_id)).toEqual(["c", "a", "b"]);
    expect(first.filter((row) => row.topic_id === two.id)).toEqual([
      { topic_id: two.id, internal_subscriber_id: internalOf("z"), external_subscriber_id: "z" },
    ]);
    expect(first).toHaveLength(4);
    expect(await store.countSubscriptions(fixture.pool, environmentId, one.id, { externalSubscriberId: null, contextKeys: null }, 100)).toBe(4);
    expect(await store.countSubscriptions(fixture.pool, environmentId, one.id, { externalSubscriberId: null, contextKeys: null }, 2)).toBe(2);
    expect(await store.countSubscriptions(fixture.pool, environmentId, one.id, { externalSubscriberId: "d", contextKeys: null }, 100)).toBe(1);
  });

  it("finds and removes memberships by internal and by external id", async () => {
    const environmentId = objectId();
    const row = await topic("members", environmentId);
    const other = await topic("others", environmentId);
    await join(environmentId, row, "a", "b", "c");
    await join(environmentId, other, "a");

    const found = await store.selectSubscriptionsOfSubscribers(fixture.pool, environmentId, row.id, [], [internalOf("b"), internalOf("a"), internalOf("x")]);
    expect(externalIds(found)).toEqual(["a", "b"]);
    expect(externalIds(await store.selectSubscriptionsByExternalId(fixture.pool, environmentId, row.id, [], "c"))).toEqual(["c"]);
    // Another environment sees none of them.
    expect(await store.selectSubscriptionsByExternalId(fixture.pool, objectId(), row.id, [], "c")).toEqual([]);

    expect(externalIds(await store.deleteSubscriptionsByExternalIds(fixture.pool, environmentId, row.id, ["c", "x"]))).toEqual(["c"]);
    expect(await store.deleteSubscriptionsOfSubscriber(fixture.pool, environmentId, internalOf("a"))).toBe(2);
    expect(await store.deleteSubscriptionsOfSubscriber(fixture.pool, environmentId, internalOf("a"))).toBe(0);
    expect(externalIds(await store.selectSubscriptionsOfSubscribers(fixture.pool, environmentId, row.id, [], [internalOf("a"), internalOf("b")]))).toEqual([
      "b",
    ]);
    expect(await store.hasSubscriptions(fixture.pool, environmentId, other.id)).toBe(false);
  });

  it("pages a topic's memberships by keyset both ways, optionally for one external id", async () => {
    const environmentId = objectId();
    const row = await topic("keyset", environmentId);
    await join(environmentId, row, "m0", "m1", "m2", "m3");
    const all = await store.selectSubscriptionKeysetPage(fixture.pool, environmentId, row.id, {
      cursor: undefined,
      towardsLower: false,
      inclusive: false,
      limit: 10,
      externalSubscriberId: null,
      contextKeys: null,
    });
    expect(externalIds(all)).toEqual(["m0", "m1", "m2", "m3"]);
    const cursor = all[1]!.id;
    const after = await store.selectSubscriptionKeysetPage(fixture.pool, environmentId, row.id, {
      cursor,
      towardsLower: false,
      inclusive: false,
      limit: 1,
      externalSubscriberId: null,
      contextKeys: null,
    });
    expect(externalIds(after)).toEqual(["m2", "m3"]);
    const below = await store.selectSubscriptionKeysetPage(fixture.pool, environmentId, row.id, {
      cursor,
      towardsLower: true,
      inclusive: false,
      limit: 10,
      externalSubscriberId: null,
      contextKeys: null,
    });
    expect(externalIds(below)).toEqual(["m0"]);
    const fromCursor = await store.selectSubscriptionKeysetPage(fixture.pool, environmentId, row.id, {
      cursor,
      towardsLower: false,
      inclusive: true,
      limit: 10,
      externalSubscriberId: null,
      contextKeys: null,
    });
    expect(externalIds(fromCursor)).toEqual(["m1", "m2", "m3"]);
    const one = await store.selectSubscriptionKeysetPage(fixture.pool, environmentId, row.id, {
      cursor: undefined,
      towardsLower: false,
      inclusive: false,
      limit: 10,
      externalSubscriberId: "m3",
      contextKeys: null,
    });
    expect(externalIds(one)).toEqual(["m3"]);
  });

  it("pages members for fan-out by internal id, leaving out excluded ids and members of earlier topics", async () => {
    const environmentId = objectId();
    const earlier = await topic("earlier", environmentId);
    const later = await topic("later", environmentId);
    await join(environmentId, earlier, "b", "d");
    await join(environmentId, later, "e", "a", "b", "c", "d");
    const page = (after: string | null, limit: number) =>
      store.selectMemberPage(fixture.pool, environmentId, later.id, {
        after,
        earlierTopicIds: [earlier.id],
        laterTopicIds: [],
        excludeExternalIds: ["c"],
        limit,
        contextKeys: [],
        workflowId: "",
      });

    const first = await page(null, 1);
    expect(externalIds(first)).toEqual(["a"]);
    expect(externalIds(await page(first[0]!.internal_subscriber_id, 10))).toEqual(["e"]);
    // With no earlier topics and nothing excluded: every member, in internal-id order.
    const everyone = await store.selectMemberPage(fixture.pool, environmentId, later.id, {
      after: null,
      earlierTopicIds: [],
      laterTopicIds: [],
      excludeExternalIds: [],
      limit: 10,
      contextKeys: [],
      workflowId: "",
    });
    expect(externalIds(everyone)).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("a topic read for share lets a rename pass and holds off its deletion until the transaction ends", async () => {
    const environmentId = objectId();
    const row = await topic("shared", environmentId);
    await heldOff(
      async (holder) => {
        expect((await store.selectTopicForShare(holder, environmentId, "shared"))?.id).toBe(row.id);
        expect(await store.renameTopic(fixture.pool, environmentId, "shared", "Renamed")).toMatchObject({ name: "Renamed" });
      },
      () => store.deleteTopic(fixture.pool, environmentId, row.id),
    );
    expect(await store.selectTopic(fixture.pool, environmentId, "shared")).toBeUndefined();
  });

  it("a topic read for update holds off new members until the transaction ends", async () => {
    const environmentId = objectId();
    const row = await topic("locked", environmentId);
    await heldOff(
      async (holder) => expect((await store.selectTopicForUpdate(holder, environmentId, "locked"))?.id).toBe(row.id),
      () => join(environmentId, row, "late"),
    );
    expect(await store.hasSubscriptions(fixture.pool, environmentId, row.id)).toBe(true);
  });
});
