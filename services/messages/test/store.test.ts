import { objectId, type Queryable } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";
import { hasSort, nodeOf, planner, rowsRead } from "./plans.js";

let fixture: Fixture;
const environmentId = objectId();
const heavy = objectId();
const light = objectId();

/** Loads `count` in-app messages for a subscriber straight into the table, as many as a real inbox holds. */
async function load(db: Queryable, subscriberId: string, count: number, seen: boolean) {
  const notification = objectId();
  await db.query(
    `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id)
     VALUES ($1, 'org', $2, $1, $3, $3, 't') ON CONFLICT DO NOTHING`,
    [notification, environmentId, subscriberId],
  );
  await db.query(
    `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                    template_id, message_template_id, step_id, transaction_id, channel, seen, created_at)
     SELECT left(md5($3 || i), 24), 'org', $1, $2, $3, $3, 't', 'mt', 's', 'txn-' || i, 'in_app', $5,
            now() - i * interval '1 second'
       FROM generate_series(1, $4) AS i`,
    [environmentId, notification, subscriberId, count, seen],
  );
}

let planOf: ReturnType<typeof planner>;

beforeAll(async () => {
  fixture = await openDatabase();
  planOf = planner(fixture);
  await load(fixture.pool, heavy, 20_000, false);
  await load(fixture.pool, light, 200, true);
  for (let index = 0; index < 50; index++) await load(fixture.pool, objectId(), 200, index % 2 === 0);
  await fixture.pool.query("VACUUM ANALYZE messages.messages");
});
afterAll(() => fixture?.close());

describe("store plans: the work of each statement is bounded by what it returns", () => {
  it("counts up to the limit and reads no more than that, even with none in that state", async () => {
    const heavyUnseen = { subscriberId: heavy, seen: false, limit: 100 };
    const lightUnseen = { subscriberId: light, seen: false, limit: 1000 };
    const lightSeen = { subscriberId: light, seen: true, limit: 1000 };
    expect(await store.countMessages(fixture.preparedReads, environmentId, [heavyUnseen, lightSeen, lightUnseen])).toEqual([100, 200, 0]);
    expect(rowsRead((await planOf((db) => store.countMessages(db, environmentId, [heavyUnseen]))).plan)).toBe(100);
    expect(rowsRead((await planOf((db) => store.countMessages(db, environmentId, [lightUnseen]))).plan)).toBe(0);
    expect(rowsRead((await planOf((db) => store.countMessages(db, environmentId, [heavyUnseen, lightUnseen]))).plan)).toBe(100);
  });

  it("serves first feed pages without sorting messages and without reading past them", async () => {
    const firstPage = (subscriberId: string) => ({ subscriberId, feedIdentifiers: null, read: null, seen: null, offset: 0, limit: 10 });
    for (const subscriberId of [heavy, light]) {
      const { plan } = await planOf((db) => store.selectFeedPages(db, environmentId, [firstPage(subscriberId)]));
      // Only the rows already read are put in query order; each page comes off the feed index in order.
      expect(hasSort(nodeOf(plan, "Nested Loop")!)).toBe(false);
      expect(rowsRead(plan)).toBeLessThanOrEqual(11);
    }
    const { plan } = await planOf((db) => store.selectFeedPages(db, environmentId, [firstPage(heavy), firstPage(light)]));
    expect(rowsRead(plan)).toBeLessThanOrEqual(22);
  });

  it("answers feed pages of many queries in query order, each with its own filters", async () => {
    const query = { feedIdentifiers: null, read: null, seen: null, offset: 0, limit: 5 };
    const queries = [
      { ...query, subscriberId: light, seen: true },
      { ...query, subscriberId: heavy, offset: 19_998 },
      { ...query, subscriberId: light, seen: false },
      { ...query, subscriberId: light, feedIdentifiers: ["nowhere"] },
      { ...query, subscriberId: heavy },
    ];
    const rows = await store.selectFeedPages(fixture.preparedReads, environmentId, queries);
    const pages = queries.map((_, index) => rows.filter((row) => row.position === index + 1));
    expect(pages.map((page) => page.length)).toEqual([6, 2, 0, 0, 6]);
    expect(pages[0]!.every((row) => row.subscriber_id === light && row.seen)).toBe(true);
    const newest = pages[4]!.map((row) => row.created_at.getTime());
    expect(newest).toEqual([...newest].sort((a, b) => b - a));
  });

  it("updates one mark-all chunk reading only that chunk's rows", async () => {
    const scope = { subscriberId: heavy, markAs: "read" as const, feedIdentifiers: null };
    const end = await store.selectMarkAllChunkEnd(fixture.pool, environmentId, scope, "", 1000);
    const { plan } = await planOf((db) => store.markAllInRange(db, environmentId, scope, "", end!));
    expect(rowsRead(plan)).toBeLessThanOrEqual(1000);
    expect(rowsRead((await planOf((db) => store.selectMarkAllChunkEnd(db, environmentId, scope, "", 1000))).plan)).toBeLessThanOrEqual(1000);
  });
});

describe("mark-all in chunks", () => {
  it("changes every message in the opposite state exactly once, chunk after chunk", async () => {
    const subscriberId = objectId();
    await load(fixture.pool, subscriberId, 2_345, false);
    const scope = { subscriberId, markAs: "seen" as const, feedIdentifiers: null };
    let after = "";
    let changed = 0;
    let chunks = 0;
    for (;;) {
      const end = await store.selectMarkAllChunkEnd(fixture.pool, environmentId, scope, after, 500);
      changed += await store.markAllInRange(fixture.pool, environmentId, scope, after, end ?? null);
      chunks++;
      if (!end) break;
      after = end;
    }
    expect(changed).toBe(2_345);
    expect(chunks).toBe(5);
    expect(await store.countMessages(fixture.preparedReads, environmentId, [{ subscriberId, seen: false, limit: 1000 }])).toEqual([0]);
  });
});
