import { clone, create, toBinary, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { triggersV1 } from "@notify/proto";
import { boundBatch, currentOrigin, invalidField, withTransaction, type Pool } from "@notify/runtime";
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

/**
 * Applies the entries in order in one transaction. The keys' rows are locked first, so events of
 * one key are decided one batch at a time whichever worker sends them; an arrival recorded before
 * (a redelivered job) answers what it did then. A new event is digested unless its digest backs
 * off and no event of its key arrived within the backoff before it; the first digested event of
 * a key opens the digest when none is open, and the digests opened are scheduled to resume their
 * runs, grouped per (job, step, time) as delays are. Answers, per entry, whether it was digested.
 */
export async function digestEvents(pool: Pool, environmentId: string, request: triggersV1.DigestEventsRequest, jobSubject: string): Promise<boolean[]> {
  const items = itemsOf(environmentId, request);
  if (items.length === 0) return [];
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
        row.digest_id !== null,
      ]),
    );

    const digested: boolean[] = [];
    /** The first digested new event of each key: it opens the key's digest if none is open. */
    const firstDigested = new Map<string, Item>();
    const fresh: { item: Item; digested: boolean }[] = [];
    for (const item of items) {
      const id = arrivalId(item.arrival);
      const before = seen.get(id);
      if (before !== undefined) {
        digested.push(before);
        continue;
      }
      const key = keyId(item.key);
      const last = lastEventAt.get(key);
      const backoff = item.entry.backoffMs;
      const digest = backoff === undefined || (last !== undefined && now - last <= backoff);
      lastEventAt.set(key, now);
      seen.set(id, digest);
      if (digest && !firstDigested.has(key)) firstDigested.set(key, item);
      digested.push(digest);
      fresh.push({ item, digested: digest });
    }
    if (fresh.length === 0) return digested;

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
    const groups = new Map<string, { item: Item; subscriberIds: string[]; digestIds: string[] }>();
    for (const item of openers) {
      const digest = digestOf.get(keyId(item.key))!;
      if (digest.trigger_id !== item.job.triggerId) continue;
      const group = `${item.entry.job}/${item.entry.fromStep}/${item.runAt.getTime()}`;
      const entry = groups.get(group) ?? { item, subscriberIds: [], digestIds: [] };
      entry.subscriberIds.push(item.key.subscriberId);
      entry.digestIds.push(String(digest.id));
      groups.set(group, entry);
    }
    const schedules = [...groups.values()].flatMap(({ item, subscriberIds, digestIds }) => {
      const rows = [];
      for (let start = 0; start < digestIds.length; start += MAX_DIGEST_BATCH) {
        const ids = digestIds.slice(start, start + MAX_DIGEST_BATCH);
        const job = clone(TriggerJobSchema, item.job);
        job.resumption = create(ResumptionSchema, {
          subscriberIds: subscriberIds.slice(start, start + MAX_DIGEST_BATCH),
          fromStep: item.entry.fromStep,
          digestIds: ids,
        });
        rows.push({
          triggerId: item.job.triggerId,
          dedupeKey: `digest:${ids[0]}`,
          subject: jobSubject,
          job: toBinary(TriggerJobSchema, job),
          runAt: item.runAt,
          digestIds: ids,
        });
      }
      return rows;
    });
    if (schedules.length > 0) {
      await store.insertSchedules(tx, environmentId, currentOrigin(), schedules);
      await store.notifySchedules(tx);
    }
    await store.touchDigestKeys(tx, environmentId, [...new Map(fresh.map(({ item }) => [keyId(item.key), item.key])).values()]);
    await store.insertDigestEvents(
      tx,
      environmentId,
      fresh.map(({ item, digested: digest }) => ({
        ...item.arrival,
        digestId: digest ? String(digestOf.get(keyId(item.key))!.id) : null,
        payload: digest ? JSON.stringify(item.job.event?.payload ?? {}) : null,
      })),
    );
    return digested;
  });
}

/** The listed events and the exact count of each digest asked for; unknown ids are absent. */
export async function getDigests(pool: Pool, environmentId: string, digestIds: readonly string[]): Promise<triggersV1.Digest[]> {
  if (digestIds.length > MAX_DIGEST_BATCH) throw invalidField("digestIds", `at most ${MAX_DIGEST_BATCH} per call`, digestIds.length);
  digestIds.forEach((id, index) => {
    if (!/^\d{1,18}$/.test(id)) throw invalidField(`digestIds[${index}]`, "must be a digest id", id);
  });
  if (digestIds.length === 0) return [];
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
