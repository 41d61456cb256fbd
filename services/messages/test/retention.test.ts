import { createLogger, objectId, type ChangedKeys } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepExpired } from "../src/retention.js";
import * as store from "../src/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";
import { planner, rowsRead } from "./plans.js";

// Retention as the reference service keeps data: notifications with their sent messages and
// execution details for 30 days, in-app messages for a year; swept a batch at a time, in every
// environment, reading only what goes.

let fixture: Fixture;
const log = createLogger("retention-test", "warn");
/** What the sweeps announced: environment and the subscribers whose feeds changed. */
const announced: [string, ChangedKeys][] = [];
const announceFeeds = async (environmentId: string, keys: ChangedKeys) => {
  announced.push([environmentId, keys]);
};

beforeAll(async () => {
  fixture = await openDatabase();
});
afterAll(() => fixture?.close());

const ago = (days: number) => `now() - make_interval(days => ${days})`;

/** A notification of subscriber `s` made `days` ago, under transaction `txn`. */
async function notification(environmentId: string, txn: string, days: number): Promise<string> {
  const id = objectId();
  await fixture.pool.query(
    `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id, created_at)
     VALUES ($1, 'org', $2, $3, 's', 's-1', 't', ${ago(days)})`,
    [id, environmentId, txn],
  );
  return id;
}

/** A message of that notification on `channel`, made `days` ago; an email also gets a send attempt and a provider event. */
async function message(environmentId: string, notificationId: string, txn: string, channel: string, days: number): Promise<string> {
  const id = objectId();
  await fixture.pool.query(
    `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                    template_id, message_template_id, step_id, transaction_id, channel, created_at)
     VALUES ($1, 'org', $2, $3, 's', 's-1', 't', 'mt', $4 || '-step', $5, $4, ${ago(days)})`,
    [id, environmentId, notificationId, channel, txn],
  );
  if (channel === "email") {
    await fixture.pool.query(
      `INSERT INTO messages.delivery_attempts (id, organization_id, environment_id, message_id, notification_id, external_subscriber_id,
                                               attempt, provider_id, status, provider_message_id, detail, started_at, duration_ms)
       VALUES ($1, 'org', $2, $3, $4, 's-1', 1, 'sendgrid', 'success', $3, 'sent', now(), 3)`,
      [objectId(), environmentId, id, notificationId],
    );
    await fixture.pool.query(
      `INSERT INTO messages.provider_events (id, organization_id, environment_id, message_id, notification_id, external_subscriber_id,
                                             provider_id, provider_message_id, status, occurred_at, raw, event_key)
       VALUES ($1, 'org', $2, $3, $4, 's-1', 'sendgrid', $3, 'delivered', now(), '{}', '\\x00')`,
      [objectId(), environmentId, id, notificationId],
    );
  }
  return id;
}

async function idsIn(table: string, environmentId: string): Promise<string[]> {
  const { rows } = await fixture.pool.query<{ id: string }>(`SELECT id FROM messages.${table} WHERE environment_id = $1 ORDER BY id`, [environmentId]);
  return rows.map((row) => row.id);
}

describe("retention", () => {
  it("deletes notifications past their retention with their sent messages and execution details, and in-app messages past theirs", async () => {
    const [here, there] = [objectId(), objectId()];
    const old = await notification(here, "old", 40);
    const oldEmail = await message(here, old, "old", "email", 40);
    const oldInApp = await message(here, old, "old", "in_app", 40);
    const recent = await notification(here, "recent", 10);
    const recentEmail = await message(here, recent, "recent", "email", 10);
    const recentInApp = await message(here, recent, "recent", "in_app", 10);
    const ancient = await notification(here, "ancient", 400);
    await message(here, ancient, "ancient", "in_app", 400);
    const elsewhere = await notification(there, "old", 40);
    await message(there, elsewhere, "old", "sms", 40);

    expect(await sweepExpired({ pool: fixture.pool, notificationDays: 30, messageDays: 365, announceFeeds, log })).toEqual({ notifications: 3, messages: 1 });
    expect(await idsIn("notifications", here)).toEqual([recent]);
    expect(await idsIn("messages", here)).toEqual([oldInApp, recentEmail, recentInApp].sort());
    expect(await idsIn("notifications", there)).toEqual([]);
    expect(await idsIn("messages", there)).toEqual([]);
    // The old email's send attempt and provider event went with it; the recent one's stay.
    const attempts = await fixture.pool.query<{ message_id: string }>("SELECT message_id FROM messages.delivery_attempts WHERE environment_id = $1", [here]);
    expect(attempts.rows.map((row) => row.message_id)).toEqual([recentEmail]);
    const events = await fixture.pool.query<{ message_id: string }>("SELECT message_id FROM messages.provider_events WHERE environment_id = $1", [here]);
    expect(events.rows.map((row) => row.message_id)).toEqual([recentEmail]);
    expect(oldEmail).not.toBe(recentEmail);
    // The year-old in-app message's subscriber is told its feed changed.
    expect(announced.filter(([environmentId]) => environmentId === here)).toEqual([[here, ["s-1"]]]);

    expect(await sweepExpired({ pool: fixture.pool, notificationDays: 30, messageDays: 365, announceFeeds, log })).toEqual({ notifications: 0, messages: 0 });
  });

  it("goes a batch at a time within a bounded number of statements a sweep, and keeps everything for good at 0 days", async () => {
    // First in id order, so the sweep's statements go to it before any other test's environment.
    const environmentId = "000000000000000000000001";
    for (let index = 0; index < 7; index += 1) {
      const txn = `bulk-${index}`;
      await message(environmentId, await notification(environmentId, txn, 40), txn, "push", 40);
    }
    const forGood = { pool: fixture.pool, notificationDays: 0, messageDays: 0, announceFeeds, log };
    expect(await sweepExpired(forGood)).toEqual({ notifications: 0, messages: 0 });
    expect(await idsIn("notifications", environmentId)).toHaveLength(7);

    const bounded = { pool: fixture.pool, notificationDays: 30, messageDays: 0, announceFeeds, log, batchRows: 3, statementsPerSweep: 2 };
    expect(await sweepExpired(bounded)).toEqual({ notifications: 6, messages: 0 });
    expect(await idsIn("messages", environmentId)).toHaveLength(1);
    expect(await sweepExpired(bounded)).toEqual({ notifications: 1, messages: 0 });
    expect(await idsIn("messages", environmentId)).toEqual([]);
  });

  it("reads only what it deletes, and finds environments without reading their rows", async () => {
    const environmentId = objectId();
    await fixture.pool.query(
      `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id)
       SELECT 'a' || lpad(to_hex(i), 23, '0'), 'org', $1, 'young-' || i, 's', 's-1', 't' FROM generate_series(1, 2000) AS i`,
      [environmentId],
    );
    await fixture.pool.query(
      `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                      template_id, message_template_id, step_id, transaction_id, channel)
       SELECT 'b' || lpad(to_hex(i), 23, '0'), 'org', $1, 'a' || lpad(to_hex(i), 23, '0'), 's', 's-1', 't', 'mt', 'step', 'young-' || i, 'email'
         FROM generate_series(1, 2000) AS i`,
      [environmentId],
    );
    for (let index = 0; index < 3; index += 1) {
      const txn = `expired-${index}`;
      await message(environmentId, await notification(environmentId, txn, 40), txn, "chat", 400);
    }
    await fixture.pool.query("ANALYZE messages.notifications; ANALYZE messages.messages");
    const planOf = planner(fixture);

    const environments = await planOf((db) => store.selectMessageEnvironments(db));
    expect(rowsRead(environments.plan)).toBeLessThan(50);
    const notifications = await planOf((db) => store.deleteExpiredNotifications(db, environmentId, 30, 100));
    expect(rowsRead(notifications.plan)).toBeLessThan(50);
    expect(await idsIn("notifications", environmentId)).toHaveLength(2000);
    await message(environmentId, await notification(environmentId, "expired-again", 10), "expired-again", "in_app", 400);
    const messages = await planOf((db) => store.deleteExpiredMessages(db, environmentId, 365, 100));
    expect(rowsRead(messages.plan)).toBeLessThan(50);
    expect(await idsIn("messages", environmentId)).toHaveLength(2000);
  });
});
