import { objectId, type Queryable } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";
import { hasSort, planner, rowsRead } from "./plans.js";

const NOTIFICATIONS = 100_000;
const SUBSCRIBERS = 1_000;
const WORKFLOWS = 10;
/** Every this many notifications also has an email message. */
const EMAIL_EVERY = 50;

let fixture: Fixture;
let planOf: ReturnType<typeof planner>;
const environmentId = objectId();
const otherEnvironmentId = objectId();

/**
 * Loads `count` notifications straight into the tables, newest first by their number, each with
 * an in-app message (and some an email too), spread over subscribers and workflows.
 */
async function load(db: Queryable, environment: string, count: number) {
  await db.query(
    `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id, created_at)
     SELECT left(md5('n' || $1 || i), 24), 'org', $1, 'txn-' || i, 'sub-' || i % $3, 'ext-' || i % $3, 'wf-' || i % $4,
            now() - i * interval '1 second'
       FROM generate_series(1, $2) AS i`,
    [environment, count, SUBSCRIBERS, WORKFLOWS],
  );
  await db.query(
    `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                    template_id, message_template_id, step_id, transaction_id, channel, created_at)
     SELECT left(md5(c || $1 || i), 24), 'org', $1, left(md5('n' || $1 || i), 24), 'sub-' || i % $3, 'ext-' || i % $3, 'wf-' || i % $4,
            'mt', c, 'txn-' || i, c, now() - i * interval '1 second'
       FROM generate_series(1, $2) AS i CROSS JOIN unnest(ARRAY['in_app', 'email']) AS c
      WHERE c = 'in_app' OR i % $5 = 0`,
    [environment, count, SUBSCRIBERS, WORKFLOWS, EMAIL_EVERY],
  );
}

const noFilters: store.NotificationFilters = {
  subscriberIds: null,
  templateIds: null,
  transactionId: null,
  channels: null,
  contextKeys: null,
  createdAfter: null,
  createdBefore: null,
  severities: null,
  topicKey: null,
};

beforeAll(async () => {
  fixture = await openDatabase();
  planOf = planner(fixture);
  await load(fixture.pool, environmentId, NOTIFICATIONS);
  await load(fixture.pool, otherEnvironmentId, NOTIFICATIONS / 10);
  await fixture.pool.query("VACUUM ANALYZE messages.notifications");
  await fixture.pool.query("VACUUM ANALYZE messages.messages");
}, 120_000);
afterAll(() => fixture?.close());

describe(`activity feed plans over ${NOTIFICATIONS.toLocaleString()} notifications: a page reads about its own rows`, () => {
  const page =
    (filters: Partial<store.NotificationFilters>, offset = 0) =>
    (db: Queryable) =>
      store.selectNotificationPage(db, environmentId, { ...noFilters, ...filters }, offset, 100);

  // Each key's list is read in index order up to the page's end, and only those rows are merged.
  it.each([
    ["no filter", {}, 101, 101],
    ["one subscriber", { subscriberIds: ["sub-7"] }, 100, 100],
    ["two subscribers", { subscriberIds: ["sub-7", "sub-8"] }, 101, 2 * 101],
    ["one workflow", { templateIds: ["wf-3"] }, 101, 101],
    ["a transaction", { transactionId: "txn-4242" }, 1, 1],
    // Every notification has an in-app message: each is read once and its messages probed once.
    ["a channel most notifications have", { channels: ["in_app" as const] }, 101, 2 * 101],
    // Every notification has Novu's default severity: the filter reads no row more.
    ["a severity every notification has", { severities: ["none" as const] }, 101, 101],
  ])("%s: the page newest first, reading no more than its keys' first rows", async (_, filters, expected, bound) => {
    const rows = await page(filters)(fixture.pool);
    expect(rows).toHaveLength(expected);
    expect(rows.every((row) => row.environment_id === environmentId)).toBe(true);
    const times = rows.map((row) => row.created_at.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(rowsRead((await planOf(page(filters))).plan)).toBeLessThanOrEqual(bound);
  });

  it("walks the environment's notifications in index order: no sort at all without a key", async () => {
    expect(hasSort((await planOf(page({}))).plan)).toBe(false);
    expect(hasSort((await planOf(page({ channels: ["in_app"] }))).plan)).toBe(false);
  });

  it("filters subscribers, workflows, transactions and channels together", async () => {
    const rows = await page({ subscriberIds: ["sub-0", "sub-50"], templateIds: ["wf-0"], channels: ["email"] })(fixture.pool);
    // Notification i is sub-(i % 1000), wf-(i % 10), and has an email when i % 50 = 0: all 200 of these two subscribers'.
    expect(rows).toHaveLength(101);
    expect(rows.every((row) => ["sub-0", "sub-50"].includes(row.subscriber_id) && row.template_id === "wf-0")).toBe(true);
  });

  it("reads a page's messages and attempts through the messages' unique key and the attempts' index", async () => {
    const rows = await page({})(fixture.pool);
    const messages = await store.selectNotificationMessages(fixture.pool, environmentId, rows, 100);
    // Notifications 1 to 101, those of 50 and 100 with an email too.
    expect(messages).toHaveLength(101 + 2);
    // (EXPLAIN reports rows per loop as a rounded mean: a little under what was read.)
    expect(rowsRead((await planOf((db) => store.selectNotificationMessages(db, environmentId, rows, 100))).plan)).toBeLessThanOrEqual(101 + 2);
    const named = rows.map((row) => ({ notificationId: row.id, externalSubscriberId: row.external_subscriber_id }));
    expect(rowsRead((await planOf((db) => store.selectExecutionDetails(db, environmentId, named, 1000))).plan)).toBe(0);
  });

  it("counts the environment's notifications of the week and the month", async () => {
    const now = Date.now();
    const counts = await store.countNotificationsSince(fixture.pool, environmentId, new Date(now - 3_600_000), new Date(now - 30 * 86_400_000));
    expect(counts.monthly).toBe(NOTIFICATIONS);
    // One a second back from when they were loaded, a little while ago.
    expect(counts.weekly).toBeGreaterThan(3_000);
    expect(counts.weekly).toBeLessThanOrEqual(3_600);
  });
});
