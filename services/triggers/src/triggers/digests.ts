import { clone, create, fromBinary, toBinary, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { triggersV1 } from "@notify/proto";
import { boundBatch, currentOrigin, invalidField, withTransaction, type Pool, type Queryable } from "@notify/runtime";
import * as store from "./store.js";

const { TriggerJobSchema, ResumptionSchema } = triggersV1;

/** Entries, jobs or digest ids in one call. */
export const MAX_DIGEST_BATCH = 1000;
/** Event payloads a digest lists; its total count stays exact beyond them. */
export const MAX_DIGEST_EVENTS = 1000;

const keyId = (key: store.DigestKey) => JSON.stringify([key.workflowId, key.subscriberId, key.stepId, key.key]);
const arrivalId = (arrival: store.DigestArrival) => JSON.stringify([arrival.subscriberId, arrival.stepId, arrival.transactionId]);

interface Item {
  entry: triggersV1.DigestEntry;
  job: triggersV1.TriggerJob;
  key: store.DigestKey;
  arrival: store.DigestArrival;
  runAt: Date;
}

function itemsOf(environmentId: string, request: triggersV1.DigestEventsRequest): Item[] {
  boundBatch("entries", request.entries.length, MAX_DIGEST_BATCH);
  boundBatch("jobs", request.jobs.length, MAX_DIGEST_BATCH);
  request.jobs.forEach((job, index) => {
    if (job.environmentId !== environmentId) throw invalidField(`jobs[${index}].environmentId`, "must be the caller's environment", job.environmentId);
    if (!job.workflow?.id) throw invalidField(`jobs[${index}].workflow`, "is required");
  });
  return request.entries.map((entry, index) => {
    const job = request.jobs[entry.job];
    if (!job) throw invalidField(`entries[${index}].job`, "must name one of the jobs", entry.job);
    if (!entry.subscriberId) throw invalidField(`entries[${index}].subscriberId`, "is required");
    if (!entry.stepId) throw invalidField(`entries[${index}].stepId`, "is required");
    if (!entry.runAt) throw invalidField(`entries[${index}].runAt`, "is required");
    return {
      entry,
      job,
      key: { workflowId: job.workflow!.id, subscriberId: entry.subscriberId, stepId: entry.stepId, key: entry.key },
      arrival: { subscriberId: entry.subscriberId, stepId: entry.stepId, transactionId: job.transactionId },
      runAt: timestampDate(entry.runAt),
    };
  });
}

/** Digests whose runs go on under one job, from one step, when they end at one time. */
interface Resuming {
  job: triggersV1.TriggerJob;
  fromStep: number;
  runAt: Date;
  subscriberIds: string[];
  digestIds: string[];
}

/**
 * Adds a subscriber's digest to the group of `key` (one job, first step and end time), made by
 * `first` when the digest is its first: each group is resumed by the same schedules.
 */
function addResuming(
  groups: Map<string, Resuming>,
  key: string,
  first: () => Omit<Resuming, "subscriberIds" | "digestIds">,
  subscriberId: string,
  digestId: string,
): void {
  let group = groups.get(key);
  if (!group) groups.set(key, (group = { ...first(), subscriberIds: [], digestIds: [] }));
  group.subscriberIds.push(subscriberId);
  group.digestIds.push(digestId);
}

/** The schedules that resume digests' runs when they end, at most MAX_DIGEST_BATCH digests each. */
function resumptionSchedules(groups: Iterable<Resuming>, jobSubject: string) {
  return [...groups].flatMap(({ job, fromStep, runAt, subscriberIds, digestIds }) => {
    const rows = [];
    for (let start = 0; start < digestIds.length; start += MAX_DIGEST_BATCH) {
      const ids = digestIds.slice(start, start + MAX_DIGEST_BATCH);
      const resumption = clone(TriggerJobSchema, job);
      resumption.resumption = create(ResumptionSchema, {
        subscriberIds: subscriberIds.slice(start, start + MAX_DIGEST_BATCH),
        fromStep,
        digestIds: ids,
        digestRun: true,
      });
      rows.push({
        triggerId: job.triggerId,
        dedupeKey: `digest:${ids[0]}`,
        subject: jobSubject,
        job: toBinary(TriggerJobSchema, resumption),
        runAt,
        digestIds: ids,
      });
    }
    return rows;
  });
}

/** A job as a digest keeps it: a resumption names its subscribers, so it needs no recipients. */
function keptJob(job: triggersV1.TriggerJob): triggersV1.TriggerJob {
  const kept = clone(TriggerJobSchema, job);
  kept.resumption = undefined;
  if (kept.event) kept.event.to = [];
  return kept;
}

/**
 * Applies the entries in order in one transaction. The keys' rows are locked first, so events of
 * one key are decided one batch at a time whichever worker sends them; an arrival recorded before
 * (a redelivered job) answers what it did then. A new event is digested unless its digest backs
 * off and no event of its key arrived within the backoff before it; the first digested event of
 * a key opens the digest when none is open, and the digests opened are scheduled to resume their
 * runs, grouped per (job, step, time) as delays are. Answers, per entry, whether it was digested
 * and whether it joined a digest another trigger opened (for one recorded before: whether the
 * digest's run now goes on under another trigger's, a cancel having passed it on maybe since).
 */
export async function digestEvents(
  pool: Pool,
  environmentId: string,
  request: triggersV1.DigestEventsRequest,
  jobSubject: string,
): Promise<{ digested: boolean[]; merged: boolean[] }> {
  const items = itemsOf(environmentId, request);
  if (items.length === 0) return { digested: [], merged: [] };
  const keys = new Map(items.map((item) => [keyId(item.key), item.key]));
  const arrivals = new Map(items.map((item) => [arrivalId(item.arrival), item.arrival]));
  return withTransaction(pool, async (tx) => {
    const locked = await store.lockDigestKeys(tx, environmentId, [...keys.values()]);
    const now = locked[0]!.now.getTime();
    const lastEventAt = new Map(
      locked.map((row) => [
        keyId({ workflowId: row.workflow_id, subscriberId: row.subscriber_id, stepId: row.step_id, key: row.digest_key }),
        row.last_event_at?.getTime(),
      ]),
    );
    const seen = new Map(
      (await store.selectDigestArrivals(tx, environmentId, [...arrivals.values()])).map((row) => [
        arrivalId({ subscriberId: row.subscriber_id, stepId: row.step_id, transactionId: row.transaction_id }),
        { digested: row.digest_id !== null, triggerId: row.digest_trigger_id, index: -1 },
      ]),
    );

    const digested: boolean[] = [];
    const merged: boolean[] = [];
    /** The first digested new event of each key: it opens the key's digest if none is open. */
    const firstDigested = new Map<string, Item>();
    const fresh: { item: Item; digested: boolean; index: number }[] = [];
    /** Entries naming an arrival an earlier entry of this call made: they answer as it does. */
    const repeats: { index: number; of: number }[] = [];
    for (const item of items) {
      const id = arrivalId(item.arrival);
      const before = seen.get(id);
      if (before !== undefined) {
        if (before.index >= 0) repeats.push({ index: merged.length, of: before.index });
        digested.push(before.digested);
        merged.push(before.digested && before.triggerId !== null && before.triggerId !== item.job.triggerId);
        continue;
      }
      const key = keyId(item.key);
      const last = lastEventAt.get(key);
      const backoff = item.entry.backoffMs;
      const digest = backoff === undefined || (last !== undefined && now - last <= backoff);
      lastEventAt.set(key, now);
      seen.set(id, { digested: digest, triggerId: null, index: merged.length });
      if (digest && !firstDigested.has(key)) firstDigested.set(key, item);
      digested.push(digest);
      merged.push(false);
      fresh.push({ item, digested: digest, index: merged.length - 1 });
    }
    if (fresh.length === 0) return { digested, merged };

    const openers = [...firstDigested.values()];
    const digests = openers.length
      ? await store.openDigests(
          tx,
          environmentId,
          openers.map((item) => ({ ...item.key, triggerId: item.job.triggerId, runAt: item.runAt })),
        )
      : [];
    const digestOf = new Map(
      digests.map((row) => [keyId({ workflowId: row.workflow_id, subscriberId: row.subscriber_id, stepId: row.step_id, key: row.digest_key }), row]),
    );

    // A digest that names its opener's trigger was opened here: a trigger reaches a key once.
    const groups = new Map<string, Resuming>();
    for (const item of openers) {
      const digest = digestOf.get(keyId(item.key))!;
      if (digest.trigger_id !== item.job.triggerId) continue;
      addResuming(
        groups,
        `${item.entry.job}/${item.entry.fromStep}/${item.runAt.getTime()}`,
        () => ({ job: item.job, fromStep: item.entry.fromStep, runAt: item.runAt }),
        item.key.subscriberId,
        String(digest.id),
      );
    }
    const schedules = resumptionSchedules(groups.values(), jobSubject);
    if (schedules.length > 0) {
      await store.insertSchedules(tx, environmentId, currentOrigin(), schedules);
      await store.notifySchedules(tx);
    }
    await store.touchDigestKeys(tx, environmentId, [...new Map(fresh.map(({ item }) => [keyId(item.key), item.key])).values()]);
    // The jobs of triggers whose events joined a digest another trigger opened: it may pass to them.
    const joiners = new Map<string, triggersV1.TriggerJob>();
    for (const { item, digested: digest, index } of fresh) {
      if (digest && digestOf.get(keyId(item.key))!.trigger_id !== item.job.triggerId) {
        joiners.set(item.job.triggerId, item.job);
        merged[index] = true;
      }
    }
    if (joiners.size > 0) {
      await store.insertDigestJobs(
        tx,
        environmentId,
        [...joiners.values()].map((job) => ({ triggerId: job.triggerId, transactionId: job.transactionId, job: toBinary(TriggerJobSchema, keptJob(job)) })),
      );
    }
    await store.insertDigestEvents(
      tx,
      environmentId,
      fresh.map(({ item, digested: digest }) => ({
        ...item.arrival,
        digested: digest
          ? {
              digestId: String(digestOf.get(keyId(item.key))!.id),
              payload: JSON.stringify(item.job.event?.payload ?? {}),
              triggerId: item.job.triggerId,
              fromStep: item.entry.fromStep,
            }
          : undefined,
      })),
    );
    for (const { index, of } of repeats) merged[index] = merged[of]!;
    return { digested, merged };
  });
}

/**
 * What canceling a trigger does to digests, in the cancel's transaction (after the digests it
 * opened or joined were locked): its events leave them, and each one it opened passes to the
 * trigger of its next event, as Novu makes the next merged job the main one. The digest keeps its
 * end; its run goes on under that trigger's job, so with its payload, overrides and transactionId.
 * A digest with no event left closes, and the next event of its key opens a new one.
 *
 * `dueDigestIds` are digests it opened that came due before the cancel, whose run (its resumption)
 * the cancel took out of the outbox or the worker dropped: they pass on the same way, so the
 * events of other triggers in them are not lost with the canceled trigger's run. Answers how many
 * of its events left digests, and every digest passed on from it (by this call or an earlier one,
 * whose answer may have been lost).
 */
export async function cancelDigestsOf(
  tx: Queryable,
  environmentId: string,
  triggerId: string,
  transactionId: string,
  jobSubject: string,
  dueDigestIds: readonly string[],
): Promise<{ eventsTaken: number; passedDigests: triggersV1.PassedDigest[] }> {
  const eventsTaken = await store.deleteDigestEventsOf(tx, environmentId, transactionId, dueDigestIds);
  await store.deleteDigestJob(tx, environmentId, triggerId);
  const groups = new Map<string, Resuming>();
  const passed: { digestId: string; triggerId: string }[] = [];
  const ended: string[] = [];
  for (const row of await store.selectDigestSuccessors(tx, environmentId, triggerId, dueDigestIds)) {
    if (row.job === null || row.trigger_id === null || row.from_step === null) {
      ended.push(row.id);
      continue;
    }
    const { job, from_step: fromStep, run_at: runAt } = row;
    addResuming(
      groups,
      `${row.trigger_id}/${fromStep}/${runAt.getTime()}`,
      () => ({ job: fromBinary(TriggerJobSchema, job), fromStep, runAt }),
      row.subscriber_id,
      row.id,
    );
    passed.push({ digestId: row.id, triggerId: row.trigger_id });
  }
  if (ended.length > 0) await store.closeDigests(tx, environmentId, ended);
  if (passed.length > 0) {
    await store.reassignDigests(tx, environmentId, triggerId, passed);
    await store.insertSchedules(tx, environmentId, currentOrigin(), resumptionSchedules(groups.values(), jobSubject));
    await store.notifySchedules(tx);
  }
  const passedDigests = (await store.selectDigestsPassedFrom(tx, environmentId, triggerId)).map((row) =>
    create(triggersV1.PassedDigestSchema, { transactionId: row.transaction_id, subscriberId: row.subscriber_id, stepId: row.step_id }),
  );
  return { eventsTaken, passedDigests };
}

/** The digests whose own runs are among these stream jobs. */
export const digestsRunBy = (jobs: readonly Uint8Array[]): string[] =>
  jobs.flatMap((job) => {
    const resumption = fromBinary(TriggerJobSchema, job).resumption;
    return resumption?.digestRun ? resumption.digestIds : [];
  });

/** Refuses more digest ids than a call takes, or one no digest can have. */
export function checkDigestIds(digestIds: readonly string[]): void {
  if (digestIds.length > MAX_DIGEST_BATCH) throw invalidField("digestIds", `at most ${MAX_DIGEST_BATCH} per call`, digestIds.length);
  digestIds.forEach((id, index) => {
    if (!/^\d{1,18}$/.test(id)) throw invalidField(`digestIds[${index}]`, "must be a digest id", id);
  });
}

/**
 * The listed events and the exact count of each digest asked for (unknown ids are absent), for
 * its run: marked read first, so that a cancel either came before (and its events are gone) or
 * leaves them, and every step of the run reads the same events.
 */
export async function getDigests(pool: Pool, environmentId: string, digestIds: readonly string[]): Promise<triggersV1.Digest[]> {
  checkDigestIds(digestIds);
  if (digestIds.length === 0) return [];
  await store.markDigestsRead(pool, environmentId, digestIds);
  const digests = new Map<number, triggersV1.Digest>();
  for (const row of await store.selectDigestEvents(pool, environmentId, digestIds, MAX_DIGEST_EVENTS)) {
    let digest = digests.get(row.digest_id);
    if (!digest) {
      digest = create(triggersV1.DigestSchema, { id: String(row.digest_id), totalCount: row.total });
      digests.set(row.digest_id, digest);
    }
    digest.events.push(row.payload as JsonObject);
    digest.arrivals.push(create(triggersV1.DigestArrivalSchema, { transactionId: row.transaction_id, arrivedAt: timestampFromDate(row.created_at) }));
  }
  return [...digests.values()];
}
