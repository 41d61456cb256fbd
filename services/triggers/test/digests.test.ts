import { create, fromBinary, toBinary, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { triggersV1 } from "@notify/proto";
import { continueFrom, objectId, REQUEST_ID_HEADER, SpanKind, type Scope } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/triggers/store.js";
import { callAs, Code, inMemoryClients, newScope, openDatabase, rpcError, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let triggers: ReturnType<typeof inMemoryClients>["triggers"];
beforeAll(async () => {
  fixture = await openDatabase();
  triggers = inMemoryClients(fixture.pool).triggers;
});
afterAll(() => fixture?.close());

const WORKFLOW = objectId();

function jobOf(scope: Scope, transactionId: string, payload: JsonObject = {}): triggersV1.TriggerJob {
  return create(triggersV1.TriggerJobSchema, {
    triggerId: objectId(),
    organizationId: scope.organizationId,
    environmentId: scope.environmentId,
    transactionId,
    event: { name: "digested", payload },
    workflow: { id: WORKFLOW },
  });
}

const inAMinute = () => timestampFromDate(new Date(Date.now() + 60_000));
const entry = (job: number, subscriberId: string, extra: Partial<triggersV1.DigestEntry> = {}) => ({
  job,
  subscriberId,
  stepId: "digest-step",
  fromStep: 1,
  key: "",
  runAt: inAMinute(),
  ...extra,
});

async function schedulesOf(scope: Scope) {
  const { rows } = await fixture.pool.query<{ trigger_id: string; job: Buffer; digest_ids: string[] | null }>(
    "SELECT trigger_id, job, digest_ids FROM triggers.schedules WHERE environment_id = $1 ORDER BY id",
    [scope.environmentId],
  );
  return rows.map((row) => ({ ...row, job: fromBinary(triggersV1.TriggerJobSchema, row.job) }));
}

async function openDigestsOf(scope: Scope) {
  const { rows } = await fixture.pool.query<{ id: number; subscriber_id: string; digest_key: string }>(
    "SELECT id, subscriber_id, digest_key FROM triggers.digests WHERE environment_id = $1 AND closed_at IS NULL ORDER BY id",
    [scope.environmentId],
  );
  return rows;
}

/** Records the jobs' triggers, as accepting them does, so that they can be canceled. */
async function record(scope: Scope, jobs: readonly triggersV1.TriggerJob[]) {
  await store.recordTriggers(
    fixture.pool,
    scope.environmentId,
    scope.organizationId,
    "test.jobs",
    jobs.map((job) => ({ id: job.triggerId, transactionId: job.transactionId, workflowId: WORKFLOW, job: new Uint8Array(), origin: null })),
  );
}

async function digestOf(scope: Scope, id: string | number) {
  const [digest] = (await triggers.getDigests({ digestIds: [String(id)] }, callAs(scope))).digests;
  return digest;
}

describe("DigestEvents", () => {
  it("opens a digest for a key's first event and merges the rest, listing payloads in arrival order", async () => {
    const scope = newScope();
    const jobs = [jobOf(scope, "t1", { n: 1 }), jobOf(scope, "t2", { n: 2 }), jobOf(scope, "t3", { n: 3 })];
    const reply = await triggers.digestEvents({ jobs, entries: [entry(0, "s1"), entry(1, "s1"), entry(2, "s1")] }, callAs(scope));
    expect(reply.digested).toEqual([true, true, true]);
    // The first event leads the digest; the others joined it (Novu's merged jobs).
    expect(reply.merged).toEqual([false, true, true]);

    const [digest] = await openDigestsOf(scope);
    const schedules = await schedulesOf(scope);
    expect(schedules).toHaveLength(1);
    expect(schedules[0]!.trigger_id).toBe(jobs[0]!.triggerId);
    expect(schedules[0]!.digest_ids).toEqual([String(digest!.id)]);
    expect(schedules[0]!.job.resumption).toMatchObject({ subscriberIds: ["s1"], fromStep: 1, digestIds: [String(digest!.id)] });
    expect(schedules[0]!.job.transactionId).toBe("t1");

    expect((await triggers.digestEvents({ jobs: [jobOf(scope, "t4", { n: 4 })], entries: [entry(0, "s1")] }, callAs(scope))).merged).toEqual([true]);
    const merged = await digestOf(scope, digest!.id);
    expect(merged).toMatchObject({ events: [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }], totalCount: 4 });
    // Each event's transaction and arrival, in the same order (v2 templates read them as id and time).
    expect(merged!.arrivals.map((arrival) => arrival.transactionId)).toEqual(["t1", "t2", "t3", "t4"]);
    for (const arrival of merged!.arrivals) expect(Math.abs(timestampDate(arrival.arrivedAt!).getTime() - Date.now())).toBeLessThan(60_000);
    expect(await schedulesOf(scope)).toHaveLength(1);
  });

  it("counts a redelivered event once and answers what it did the first time", async () => {
    const scope = newScope();
    const first = jobOf(scope, "r1", { n: 1 });
    const second = jobOf(scope, "r2", { n: 2 });
    await triggers.digestEvents({ jobs: [first, second], entries: [entry(0, "s1"), entry(1, "s1")] }, callAs(scope));
    // The same jobs again (redelivered), and one job twice in one call.
    const again = await triggers.digestEvents({ jobs: [second, first], entries: [entry(0, "s1"), entry(1, "s1"), entry(1, "s1")] }, callAs(scope));
    expect(again.digested).toEqual([true, true, true]);
    expect(again.merged).toEqual([true, false, false]);
    const [digest] = await openDigestsOf(scope);
    expect(await digestOf(scope, digest!.id)).toMatchObject({ events: [{ n: 1 }, { n: 2 }], totalCount: 2 });
    expect(await schedulesOf(scope)).toHaveLength(1);
  });

  it("opens one digest when concurrent calls race for a key", async () => {
    const scope = newScope();
    const jobs = Array.from({ length: 12 }, (_, n) => jobOf(scope, `race-${n}`, { n }));
    const replies = await Promise.all(jobs.map((job) => triggers.digestEvents({ jobs: [job], entries: [entry(0, "s1")] }, callAs(scope))));
    expect(replies.map((reply) => reply.digested)).toEqual(jobs.map(() => [true]));
    expect(replies.filter((reply) => reply.merged[0] === false)).toHaveLength(1);
    const digests = await openDigestsOf(scope);
    expect(digests).toHaveLength(1);
    expect((await digestOf(scope, digests[0]!.id))?.totalCount).toBe(12);
    expect(await schedulesOf(scope)).toHaveLength(1);
  });

  it("keeps keys apart and schedules the digests one job opens together", async () => {
    const scope = newScope();
    const job = jobOf(scope, "k1", { post: 1 });
    const other = jobOf(scope, "k2", { post: 2 });
    // Schedules are shared by digests with the same next step and the same end time.
    const runAt = inAMinute();
    await triggers.digestEvents(
      {
        jobs: [job, other],
        entries: [
          entry(0, "s1", { key: "1", runAt }),
          entry(0, "s2", { key: "1", runAt }),
          entry(1, "s1", { key: "2", runAt }),
          entry(1, "s1", { key: "1", stepId: "other-step", fromStep: 2, runAt }),
        ],
      },
      callAs(scope),
    );
    expect(await openDigestsOf(scope)).toHaveLength(4);
    const schedules = await schedulesOf(scope);
    expect(schedules.map((schedule) => schedule.job.resumption?.subscriberIds)).toEqual([["s1", "s2"], ["s1"], ["s1"]]);
    expect(schedules.map((schedule) => schedule.job.resumption?.fromStep)).toEqual([1, 1, 2]);
  });

  it("backs off: an event without a recent one of its key is not digested, the next one is", async () => {
    const scope = newScope();
    const backoff = { backoffMs: 60_000 };
    const lone = await triggers.digestEvents({ jobs: [jobOf(scope, "b1", { n: 1 })], entries: [entry(0, "s1", backoff)] }, callAs(scope));
    expect(lone.digested).toEqual([false]);
    expect(await openDigestsOf(scope)).toHaveLength(0);
    // Redelivered: still not digested.
    const { jobs } = create(triggersV1.DigestEventsRequestSchema, { jobs: [jobOf(scope, "b1", { n: 1 })] });
    expect((await triggers.digestEvents({ jobs, entries: [entry(0, "s1", backoff)] }, callAs(scope))).digested).toEqual([false]);

    const next = await triggers.digestEvents(
      { jobs: [jobOf(scope, "b2", { n: 2 }), jobOf(scope, "b3", { n: 3 })], entries: [entry(0, "s1", backoff), entry(1, "s1", backoff)] },
      callAs(scope),
    );
    expect(next.digested).toEqual([true, true]);
    expect(next.merged).toEqual([false, true]);
    const [digest] = await openDigestsOf(scope);
    expect(await digestOf(scope, digest!.id)).toMatchObject({ events: [{ n: 2 }, { n: 3 }], totalCount: 2 });

    // Two events of a new key in one call: the first runs now, the second opens the digest.
    const pair = await triggers.digestEvents(
      { jobs: [jobOf(scope, "b4"), jobOf(scope, "b5")], entries: [entry(0, "s2", backoff), entry(1, "s2", backoff)] },
      callAs(scope),
    );
    expect(pair.digested).toEqual([false, true]);
    expect(pair.merged).toEqual([false, false]);
    // A backoff of 0 ms: an event a moment after the last one is not digested.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await triggers.digestEvents({ jobs: [jobOf(scope, "b6")], entries: [entry(0, "s3", { backoffMs: 0 })] }, callAs(scope));
    const later = await triggers.digestEvents({ jobs: [jobOf(scope, "b7")], entries: [entry(0, "s3", { backoffMs: 0 })] }, callAs(scope));
    expect([late.digested, later.digested]).toEqual([[false], [false]]);
  });

  it("closes a digest when its schedule moves into the outbox; later events open a new one", async () => {
    const scope = newScope();
    const past = timestampFromDate(new Date(Date.now() - 1_000));
    // Called for a request: the digest's resumption goes on as that request's work.
    const request = (name: string) => (name === REQUEST_ID_HEADER ? "digest-request-1" : undefined);
    await continueFrom(request, { name: "digest", kind: SpanKind.INTERNAL }, () =>
      triggers.digestEvents({ jobs: [jobOf(scope, "m1", { n: 1 })], entries: [entry(0, "s1", { runAt: past })] }, callAs(scope)),
    );
    const [opened] = await openDigestsOf(scope);
    expect(await store.moveDueSchedules(fixture.pool, 1000)).toBeGreaterThanOrEqual(1);
    expect(await openDigestsOf(scope)).toHaveLength(0);
    const { rows: outbox } = await fixture.pool.query("SELECT job, origin FROM triggers.outbox WHERE environment_id = $1", [scope.environmentId]);
    expect(outbox).toHaveLength(1);
    expect(outbox[0].origin).toEqual({ [REQUEST_ID_HEADER]: "digest-request-1" });

    const reply = await triggers.digestEvents({ jobs: [jobOf(scope, "m2", { n: 2 })], entries: [entry(0, "s1")] }, callAs(scope));
    expect(reply.digested).toEqual([true]);
    const [reopened] = await openDigestsOf(scope);
    expect(reopened!.id).not.toBe(opened!.id);
    expect(await digestOf(scope, opened!.id)).toMatchObject({ events: [{ n: 1 }], totalCount: 1 });
    expect(await digestOf(scope, reopened!.id)).toMatchObject({ events: [{ n: 2 }], totalCount: 1 });
  });

  it("passes a digest to its next event's trigger when the trigger that opened it is canceled, and closes one left empty", async () => {
    const scope = newScope();
    const jobs = [jobOf(scope, "c1", { n: 1 }), jobOf(scope, "c2", { n: 2 }), jobOf(scope, "c3", { n: 3 })];
    jobs[1]!.event!.to = [create(triggersV1.RecipientSchema, { kind: { case: "subscriberId", value: "s1" } })];
    await record(scope, jobs);
    const runAt = inAMinute();
    await triggers.digestEvents(
      { jobs, entries: [entry(0, "s1", { runAt }), entry(1, "s1", { fromStep: 2 }), entry(0, "s2"), entry(2, "s2"), entry(0, "s3")] },
      callAs(scope),
    );
    const [forS1, forS2] = await openDigestsOf(scope);
    // c3 joined s2's digest; canceling it takes its event out.
    expect((await triggers.cancelTrigger({ transactionId: "c3" }, callAs(scope))).canceled).toBe(true);
    expect(await digestOf(scope, forS2!.id)).toMatchObject({ events: [{ n: 1 }], totalCount: 1 });

    // c1 opened the three digests: s1's goes on under c2, whose event is next in it; the others are left empty and close.
    await triggers.cancelTrigger({ transactionId: "c1" }, callAs(scope));
    expect((await openDigestsOf(scope)).map((digest) => [digest.id, digest.subscriber_id])).toEqual([[forS1!.id, "s1"]]);
    expect(await digestOf(scope, forS1!.id)).toMatchObject({ events: [{ n: 2 }], totalCount: 1 });
    const [passed, ...others] = await schedulesOf(scope);
    expect(others).toEqual([]);
    expect(passed!.trigger_id).toBe(jobs[1]!.triggerId);
    expect(passed!.digest_ids).toEqual([String(forS1!.id)]);
    expect(passed!.job.transactionId).toBe("c2");
    expect(passed!.job.event?.payload).toEqual({ n: 2 });
    // The step c2's own run would go on from; a resumption names its subscribers, so the job keeps no recipients.
    expect(passed!.job.resumption).toMatchObject({ subscriberIds: ["s1"], fromStep: 2, digestIds: [String(forS1!.id)] });
    expect(passed!.job.event?.to).toEqual([]);
    // The digest keeps its end.
    const { rows } = await fixture.pool.query<{ run_at: Date }>("SELECT run_at FROM triggers.schedules WHERE environment_id = $1", [scope.environmentId]);
    expect(rows[0]!.run_at.getTime()).toBe(timestampDate(runAt).getTime());

    // A later event joins the passed digest, and the digest passes on again when c2 is canceled.
    const c4 = jobOf(scope, "c4", { n: 4 });
    await record(scope, [c4]);
    await triggers.digestEvents({ jobs: [c4], entries: [entry(0, "s1")] }, callAs(scope));
    expect(await schedulesOf(scope)).toHaveLength(1);
    await triggers.cancelTrigger({ transactionId: "c2" }, callAs(scope));
    expect(await digestOf(scope, forS1!.id)).toMatchObject({ events: [{ n: 4 }], totalCount: 1 });
    expect((await schedulesOf(scope)).map((schedule) => schedule.job.transactionId)).toEqual(["c4"]);

    // The last event's cancel closes it; the key is free, and no job is kept any more.
    await triggers.cancelTrigger({ transactionId: "c4" }, callAs(scope));
    expect(await openDigestsOf(scope)).toHaveLength(0);
    expect(await schedulesOf(scope)).toHaveLength(0);
    const { rows: kept } = await fixture.pool.query("SELECT 1 FROM triggers.digest_jobs WHERE environment_id = $1", [scope.environmentId]);
    expect(kept).toEqual([]);
    await triggers.digestEvents({ jobs: [jobOf(scope, "c5")], entries: [entry(0, "s1")] }, callAs(scope));
    const reopened = await openDigestsOf(scope);
    expect(reopened.map((digest) => digest.subscriber_id)).toEqual(["s1"]);
    expect(reopened[0]!.id).not.toBe(forS1!.id);
    expect(await schedulesOf(scope)).toHaveLength(1);
  });

  describe("passes a digest that came due before the trigger that opened it was canceled", () => {
    /** e1 opens s1's digest, due already, and e2 joins it; e1 alone is in s2's; the digests' run moves into the outbox. */
    async function dueDigests() {
      const scope = newScope();
      const jobs = [jobOf(scope, "e1", { n: 1 }), jobOf(scope, "e2", { n: 2 })];
      await record(scope, jobs);
      const past = timestampFromDate(new Date(Date.now() - 1_000));
      await triggers.digestEvents({ jobs, entries: [entry(0, "s1", { runAt: past }), entry(1, "s1"), entry(0, "s2", { runAt: past })] }, callAs(scope));
      const [forS1, forS2] = await openDigestsOf(scope);
      await store.moveDueSchedules(fixture.pool, 1000);
      expect(await openDigestsOf(scope)).toEqual([]);
      return { scope, jobs, digestIds: [String(forS1!.id), String(forS2!.id)] };
    }

    const expectPassedToE2 = async (scope: Scope, jobs: triggersV1.TriggerJob[], digestId: string) => {
      const [passed, ...others] = await schedulesOf(scope);
      expect(others).toEqual([]);
      expect(passed!.trigger_id).toBe(jobs[1]!.triggerId);
      expect(passed!.digest_ids).toEqual([digestId]);
      expect(passed!.job.transactionId).toBe("e2");
      expect(passed!.job.resumption).toMatchObject({ subscriberIds: ["s1"], digestIds: [digestId], digestRun: true });
      expect(await digestOf(scope, digestId)).toMatchObject({ events: [{ n: 2 }], totalCount: 1 });
    };

    it("taking its run out of the outbox", async () => {
      const { scope, jobs, digestIds } = await dueDigests();
      await triggers.cancelTrigger({ transactionId: "e1" }, callAs(scope));
      const { rows: outbox } = await fixture.pool.query("SELECT 1 FROM triggers.outbox WHERE environment_id = $1 AND trigger_id = $2", [
        scope.environmentId,
        jobs[0]!.triggerId,
      ]);
      expect(outbox).toEqual([]);
      await expectPassedToE2(scope, jobs, digestIds[0]!);
    });

    it("but not when what the cancel takes out of the outbox is a later resumption of the digest's run, which ran the digest already", async () => {
      const { scope, digestIds } = await dueDigests();
      // The digest's run went on to a delay: its resumption names the digest, but is not the digest's run.
      const { rows } = await fixture.pool.query<{ message_id: string; job: Buffer }>(
        "SELECT message_id, job FROM triggers.outbox WHERE environment_id = $1 AND message_id LIKE '%.resume.%'",
        [scope.environmentId],
      );
      const later = fromBinary(triggersV1.TriggerJobSchema, rows[0]!.job);
      expect(later.resumption).toMatchObject({ digestRun: true, digestIds });
      later.resumption!.digestRun = false;
      later.resumption!.fromStep += 1;
      await fixture.pool.query("UPDATE triggers.outbox SET job = $2 WHERE message_id = $1", [
        rows[0]!.message_id,
        toBinary(triggersV1.TriggerJobSchema, later),
      ]);
      await triggers.cancelTrigger({ transactionId: "e1" }, callAs(scope));
      expect(await schedulesOf(scope)).toEqual([]);
    });

    it("and takes out of it, before its run reads them, the events of a trigger that joined it and is canceled", async () => {
      const { scope, jobs, digestIds } = await dueDigests();
      await triggers.cancelTrigger({ transactionId: "e2" }, callAs(scope));
      expect(await digestOf(scope, digestIds[0]!)).toMatchObject({ events: [{ n: 1 }], totalCount: 1 });
      // The run stays the first trigger's, in the outbox; nothing is passed.
      const { rows: outbox } = await fixture.pool.query("SELECT 1 FROM triggers.outbox WHERE environment_id = $1 AND trigger_id = $2", [
        scope.environmentId,
        jobs[0]!.triggerId,
      ]);
      expect(outbox).not.toEqual([]);
      expect(await schedulesOf(scope)).toEqual([]);
    });

    it("but leaves them in once its run has read the digest, so that the run's later steps read the same events", async () => {
      const { scope, digestIds } = await dueDigests();
      expect(await digestOf(scope, digestIds[0]!)).toMatchObject({ events: [{ n: 1 }, { n: 2 }], totalCount: 2 });
      await triggers.cancelTrigger({ transactionId: "e2" }, callAs(scope));
      expect(await digestOf(scope, digestIds[0]!)).toMatchObject({ events: [{ n: 1 }, { n: 2 }], totalCount: 2 });
    });

    it("once the worker finds its published run canceled, and once only", async () => {
      const { scope, jobs, digestIds } = await dueDigests();
      // The relay published the run before the cancel: the cancel finds nothing to pass.
      await fixture.pool.query("DELETE FROM triggers.outbox WHERE environment_id = $1 AND trigger_id = $2", [scope.environmentId, jobs[0]!.triggerId]);
      await triggers.cancelTrigger({ transactionId: "e1" }, callAs(scope));
      expect(await schedulesOf(scope)).toEqual([]);

      await triggers.passCanceledDigests({ transactionId: "e1", digestIds }, callAs(scope));
      await expectPassedToE2(scope, jobs, digestIds[0]!);
      // A redelivered run asks again: the digest names e2 now, and nothing more is scheduled.
      await triggers.passCanceledDigests({ transactionId: "e1", digestIds }, callAs(scope));
      await expectPassedToE2(scope, jobs, digestIds[0]!);

      expect((await rpcError(triggers.passCanceledDigests({ transactionId: "e2", digestIds }, callAs(scope)))).code).toBe(Code.FailedPrecondition);
      expect((await rpcError(triggers.passCanceledDigests({ transactionId: "e1", digestIds: ["x"] }, callAs(scope)))).code).toBe(Code.InvalidArgument);
    });
  });

  it("passes a digest once when the triggers of its first two events are canceled together", async () => {
    for (let round = 0; round < 5; round += 1) {
      const scope = newScope();
      const jobs = [jobOf(scope, "d1", { n: 1 }), jobOf(scope, "d2", { n: 2 }), jobOf(scope, "d3", { n: 3 })];
      await record(scope, jobs);
      await triggers.digestEvents({ jobs, entries: [entry(0, "s1"), entry(1, "s1"), entry(2, "s1")] }, callAs(scope));
      await Promise.all(["d1", "d2"].map((transactionId) => triggers.cancelTrigger({ transactionId }, callAs(scope))));
      const [digest] = await openDigestsOf(scope);
      expect(await digestOf(scope, digest!.id)).toMatchObject({ events: [{ n: 3 }], totalCount: 1 });
      expect((await schedulesOf(scope)).map((schedule) => schedule.job.transactionId)).toEqual(["d3"]);
    }
  });

  it("lists at most 1000 events of a digest with the exact total", async () => {
    const scope = newScope();
    const jobs = Array.from({ length: 1000 }, (_, n) => jobOf(scope, `many-${n}`, { n }));
    await triggers.digestEvents({ jobs, entries: jobs.map((_, index) => entry(index, "s1")) }, callAs(scope));
    await triggers.digestEvents({ jobs: [jobOf(scope, "many-last", { n: 1000 })], entries: [entry(0, "s1")] }, callAs(scope));
    const [open] = await openDigestsOf(scope);
    const digest = await digestOf(scope, open!.id);
    expect(digest?.totalCount).toBe(1001);
    expect(digest?.events).toHaveLength(1000);
    expect(digest?.events[999]).toEqual({ n: 999 });
  });

  it("refuses entries that name no job, jobs of another environment and bad digest ids", async () => {
    const scope = newScope();
    expect((await rpcError(triggers.digestEvents({ jobs: [], entries: [entry(0, "s1")] }, callAs(scope)))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(triggers.digestEvents({ jobs: [jobOf(newScope(), "x")], entries: [entry(0, "s1")] }, callAs(scope)))).code).toBe(
      Code.InvalidArgument,
    );
    expect((await rpcError(triggers.getDigests({ digestIds: ["abc"] }, callAs(scope)))).code).toBe(Code.InvalidArgument);
    // Another environment's digest is not visible.
    const owner = newScope();
    await triggers.digestEvents({ jobs: [jobOf(owner, "o1")], entries: [entry(0, "s1")] }, callAs(owner));
    const [digest] = await openDigestsOf(owner);
    expect((await triggers.getDigests({ digestIds: [String(digest!.id)] }, callAs(scope))).digests).toEqual([]);
  });
});
