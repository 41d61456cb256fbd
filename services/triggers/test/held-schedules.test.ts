import { create } from "@bufbuild/protobuf";
import { triggersV1 } from "@notify/proto";
import { objectId, type Scope } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moveDueSchedules, purgeHolds } from "../src/triggers/store.js";
import { callAs, inMemoryClients, newScope, openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let triggers: ReturnType<typeof inMemoryClients>["triggers"];
beforeAll(async () => {
  fixture = await openDatabase();
  triggers = inMemoryClients(fixture.pool).triggers;
});
afterAll(() => fixture?.close());

const resumption = (scope: Scope, triggerId: string) =>
  create(triggersV1.TriggerJobSchema, {
    triggerId,
    organizationId: scope.organizationId,
    environmentId: scope.environmentId,
    transactionId: `t-${triggerId}`,
    resumption: { subscriberIds: ["s1"], fromStep: 1 },
  });

/** The environment's schedules: their dedupe keys and whether they are due (null: held). */
const schedulesOf = async (scope: Scope) =>
  (
    await fixture.pool.query<{ dedupe_key: string; due: boolean | null }>(
      "SELECT dedupe_key, run_at <= now() AS due FROM triggers.schedules WHERE environment_id = $1 ORDER BY dedupe_key",
      [scope.environmentId],
    )
  ).rows.map((row) => [row.dedupe_key, row.due]);

describe("held jobs", () => {
  it("are kept without a time, made due by their first release only, and never by another environment's", async () => {
    const scope = newScope();
    const triggerId = objectId();
    await triggers.scheduleJobs({ jobs: [{ holdKey: "wait-1", job: resumption(scope, triggerId) }] }, callAs(scope));
    // Held again (a redelivered job): still one.
    await triggers.scheduleJobs({ jobs: [{ holdKey: "wait-1", job: resumption(scope, triggerId) }] }, callAs(scope));
    expect(await schedulesOf(scope)).toEqual([["held:wait-1", null]]);

    await triggers.releaseHeldJobs({ holdKeys: ["wait-1"] }, callAs(newScope()));
    expect(await schedulesOf(scope)).toEqual([["held:wait-1", null]]);

    await triggers.releaseHeldJobs({ holdKeys: ["wait-1", "unknown"] }, callAs(scope));
    const runAt = async () =>
      (await fixture.pool.query<{ run_at: Date }>("SELECT run_at FROM triggers.schedules WHERE environment_id = $1", [scope.environmentId])).rows[0]!.run_at;
    const released = await runAt();
    expect(await schedulesOf(scope)).toEqual([["held:wait-1", true]]);
    // A later send of the same step releases nothing more: the job keeps the time of the first.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await triggers.releaseHeldJobs({ holdKeys: ["wait-1"] }, callAs(scope));
    expect(await runAt()).toEqual(released);
  });

  it("are held no more once released and run, when a job run again holds them anew", async () => {
    const scope = newScope();
    const hold = () => triggers.scheduleJobs({ jobs: [{ holdKey: "wait-2", job: resumption(scope, objectId()) }] }, callAs(scope));
    await hold();
    await triggers.releaseHeldJobs({ holdKeys: ["wait-2"] }, callAs(scope));
    while ((await moveDueSchedules(fixture.pool, 100)) > 0) {
      // every due schedule into the outbox
    }
    expect(await schedulesOf(scope)).toEqual([]);
    // A redelivered or replayed job holds the key again, and a later send of the step releases it again: nothing is kept.
    await hold();
    await triggers.releaseHeldJobs({ holdKeys: ["wait-2"] }, callAs(scope));
    expect(await schedulesOf(scope)).toEqual([]);
  });

  it("go once older than the cut-off, unreleased, with the released keys; timed and recent ones stay", async () => {
    const scope = newScope();
    const insert = (key: string, runAt: string | null, createdAt: string) =>
      fixture.pool.query(
        `INSERT INTO triggers.schedules (environment_id, trigger_id, dedupe_key, subject, job, run_at, created_at)
         VALUES ($1, 't', $2, 'subject', '\\x00', ${runAt ?? "NULL"}, ${createdAt})`,
        [scope.environmentId, key],
      );
    await insert("held:old", null, "now() - interval '40 days'");
    await insert("held:recent", null, "now() - interval '1 day'");
    await insert("timed", "now() + interval '30 days'", "now() - interval '40 days'");
    const released = (key: string, releasedAt: string) =>
      fixture.pool.query(`INSERT INTO triggers.released_holds (environment_id, dedupe_key, released_at) VALUES ($1, $2, ${releasedAt})`, [
        scope.environmentId,
        key,
      ]);
    await released("held:long-ago", "now() - interval '40 days'");
    await released("held:lately", "now() - interval '1 day'");
    while ((await purgeHolds(fixture.pool, new Date(Date.now() - 30 * 86_400_000), 1)) > 0) {
      // more to purge
    }
    expect((await schedulesOf(scope)).map(([key]) => key)).toEqual(["held:recent", "timed"]);
    const { rows } = await fixture.pool.query("SELECT dedupe_key FROM triggers.released_holds WHERE environment_id = $1", [scope.environmentId]);
    expect(rows.map((row) => row.dedupe_key)).toEqual(["held:lately"]);
  });
});
