import { objectId } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { purgeStepState, purgeTriggerRecords } from "../src/triggers/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await openDatabase();
});
afterAll(() => fixture?.close());

const DAY = 86_400_000;

describe("purgeStepState", () => {
  it("deletes closed digests, lone events, idle keys, unneeded jobs and ended throttle windows older than the cut-off, and nothing newer or open", async () => {
    const environmentId = objectId();
    const db = fixture.pool;
    const ago = (days: number) => new Date(Date.now() - days * DAY);
    const digest = async (key: string, closedAt: Date | null) =>
      (
        await db.query<{ id: string }>(
          `INSERT INTO triggers.digests (environment_id, workflow_id, subscriber_id, step_id, digest_key, trigger_id, run_at, closed_at)
           VALUES ($1, 'w', 's', 'step', $2, 't', now(), $3) RETURNING id`,
          [environmentId, key, closedAt],
        )
      ).rows[0]!.id;
    const event = (transactionId: string, digestId: string | null, createdAt: Date) =>
      db.query(
        `INSERT INTO triggers.digest_events (environment_id, subscriber_id, step_id, transaction_id, digest_id, payload, created_at)
         VALUES ($1, 's', 'step', $2, $3, '{}', $4)`,
        [environmentId, transactionId, digestId, createdAt],
      );
    const key = (value: string, lastEventAt: Date) =>
      db.query(
        `INSERT INTO triggers.digest_keys (environment_id, workflow_id, subscriber_id, step_id, digest_key, last_event_at) VALUES ($1, 'w', 's', 'step', $2, $3)`,
        [environmentId, value, lastEventAt],
      );
    const oldClosed = await digest("old", ago(10));
    const recentClosed = await digest("recent", ago(1));
    const open = await digest("open", null);
    await event("t1", oldClosed, ago(11));
    await event("t2", recentClosed, ago(2));
    await event("t3", open, ago(20));
    await event("t4", null, ago(9));
    await event("t5", null, ago(1));
    await key("old", ago(8));
    await key("recent", ago(1));
    const throttle = (value: string, endedAt: Date) =>
      db.query(`INSERT INTO triggers.throttle_windows (environment_id, throttle_key, window_ends, transactions) VALUES ($1, $2, $3, '{t}')`, [
        environmentId,
        value,
        endedAt,
      ]);
    await throttle("ended", ago(8));
    await throttle("ending", ago(1));
    await throttle("open", ago(-1));
    const job = (transactionId: string, createdAt: Date) =>
      db.query(`INSERT INTO triggers.digest_jobs (environment_id, trigger_id, transaction_id, job, created_at) VALUES ($1, $2, $2, '', $3)`, [
        environmentId,
        transactionId,
        createdAt,
      ]);
    // Old jobs go once no open digest holds their events; t3's is in one.
    await job("t1", ago(11));
    await job("t3", ago(20));
    await job("t5", ago(1));

    let purged = 0;
    for (let round: number; (round = await purgeStepState(db, ago(7), 1)) > 0; ) purged += round;
    // The old digest's event goes with it (ON DELETE CASCADE), uncounted.
    expect(purged).toBe(5);

    const left = async (sql: string) =>
      (await db.query(`${sql} WHERE environment_id = $1 ORDER BY 1`, [environmentId])).rows.map((row) => Object.values(row)[0]);
    expect(await left("SELECT digest_key FROM triggers.digests")).toEqual(["open", "recent"]);
    expect(await left("SELECT transaction_id FROM triggers.digest_events")).toEqual(["t2", "t3", "t5"]);
    expect(await left("SELECT digest_key FROM triggers.digest_keys")).toEqual(["recent"]);
    expect(await left("SELECT throttle_key FROM triggers.throttle_windows")).toEqual(["ending", "open"]);
    expect(await left("SELECT trigger_id FROM triggers.digest_jobs")).toEqual(["t3", "t5"]);
  });
});

describe("purgeTriggerRecords", () => {
  it("frees the transactionIds of triggers older than the cut-off, except those a schedule still names", async () => {
    const environmentId = objectId();
    const db = fixture.pool;
    const ago = (days: number) => new Date(Date.now() - days * DAY);
    const record = async (transactionId: string, createdAt: Date) => {
      const id = objectId();
      await db.query(
        `INSERT INTO triggers.trigger_records (environment_id, organization_id, id, transaction_id, workflow_id, status, created_at)
         VALUES ($1, 'org', $2, $3, 'w', 'processed', $4)`,
        [environmentId, id, transactionId, createdAt],
      );
      return id;
    };
    await record("old", ago(40));
    await record("older", ago(50));
    const delayed = await record("delayed", ago(45));
    await record("recent", ago(10));
    await db.query(
      `INSERT INTO triggers.schedules (environment_id, trigger_id, dedupe_key, subject, job, run_at) VALUES ($1, $2, 'd', 'subject', '\\x00', now() + interval '1 day')`,
      [environmentId, delayed],
    );

    let purged = 0;
    for (let round: number; (round = await purgeTriggerRecords(db, ago(30), 1)) > 0; ) purged += round;
    expect(purged).toBe(2);
    const { rows } = await db.query<{ transaction_id: string }>(
      "SELECT transaction_id FROM triggers.trigger_records WHERE environment_id = $1 ORDER BY transaction_id",
      [environmentId],
    );
    expect(rows.map((row) => row.transaction_id)).toEqual(["delayed", "recent"]);
  });
});
