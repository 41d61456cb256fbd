import { fromBinary, toJson, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { deliveriesV1, subscribersV1, triggersV1 } from "@notify/proto";
import {
  channelName,
  JOB_KINDS,
  jobSubject,
  publishJobs,
  withTransaction,
  type JobStream,
  type NatsConnection,
  type Pool,
  type Queryable,
} from "@notify/runtime";
import { isPageSubject } from "./deliveries.js";
import * as store from "./store.js";

/** The worker's two streams: what a dead letter's subject is read against. */
export interface WorkerStreams {
  jobs: JobStream;
  deliveries: JobStream;
}

/** The message a job of this subject is, if it is a job of the worker's streams. */
function jobSchemaOf(subject: string, streams: WorkerStreams): DescMessage | undefined {
  if (subject === jobSubject(streams.jobs, JOB_KINDS.trigger)) return triggersV1.TriggerJobSchema;
  if (subject === jobSubject(streams.jobs, JOB_KINDS.subscriberDeleted)) return subscribersV1.SubscriberDeletedJobSchema;
  if (isPageSubject(streams.deliveries, subject)) return deliveriesV1.DeliveryPageSchema;
  if (subject.startsWith(`${streams.deliveries.subjectPrefix}.`)) return deliveriesV1.DeliveryJobSchema;
  return undefined;
}

/** A dead letter as `dead-letters show` prints it: its job decoded (JSON) and its last error. */
export async function deadLetterShown(db: Queryable, streams: WorkerStreams, id: string): Promise<string | undefined> {
  const row = await store.selectDeadLetter(db, id);
  if (!row) return undefined;
  const schema = jobSchemaOf(row.subject, streams);
  let job: JsonValue;
  try {
    job = schema ? toJson(schema, fromBinary(schema, row.job)) : { undecoded: row.job.toString("base64") };
  } catch {
    job = { unreadable: row.job.toString("base64") };
  }
  const shown = {
    id: row.id,
    deadSince: row.created_at.toISOString(),
    environmentId: row.environment_id,
    deliveries: row.deliveries,
    subject: row.subject,
    summary: describeJob(row, streams),
    lastError: row.error,
    job,
  };
  return `${JSON.stringify(shown, null, 2)}\n`;
}

const describeSend = (job: deliveriesV1.DeliveryJob) => `${channelName(job.channel) ?? "?"} send of message ${job.messageId} through ${job.providerId}`;

/** What a dead letter's job asks for, in a few words an operator can act on. */
export function describeJob(row: Pick<store.DeadLetterRow, "subject" | "job">, streams: WorkerStreams): string {
  const schema = jobSchemaOf(row.subject, streams);
  try {
    if (schema === triggersV1.TriggerJobSchema) {
      const job = fromBinary(triggersV1.TriggerJobSchema, row.job);
      const what = job.snoozeReturn ? "snooze return" : job.resumption ? "resumption" : "trigger";
      return `${what} of ${job.workflow?.identifier ?? "?"} (transaction ${job.transactionId})`;
    }
    if (schema === subscribersV1.SubscriberDeletedJobSchema) {
      const job = fromBinary(subscribersV1.SubscriberDeletedJobSchema, row.job);
      return `deleted subscriber ${job.subscriberId} (${job.id})`;
    }
    if (schema === deliveriesV1.DeliveryPageSchema) {
      const { jobs } = fromBinary(deliveriesV1.DeliveryPageSchema, row.job);
      if (jobs.length === 0) return "an empty page of sends";
      const others = jobs.length > 1 ? ` and ${jobs.length - 1} more` : "";
      return `${describeSend(jobs[0]!)}${others}`;
    }
    if (schema === deliveriesV1.DeliveryJobSchema) return describeSend(fromBinary(deliveriesV1.DeliveryJobSchema, row.job));
  } catch {
    return "a job that cannot be read";
  }
  return "a job of an unknown kind";
}

/** The listing an operator reads: one tab-separated line per dead letter, under a header. */
export async function deadLettersReport(db: Queryable, streams: WorkerStreams, limit: number): Promise<string> {
  const rows = await store.selectDeadLetters(db, limit);
  const lines = rows.map((row) =>
    [row.id, row.created_at.toISOString(), row.environment_id ?? "", String(row.deliveries), describeJob(row, streams), row.error.replace(/\s+/g, " ")].join(
      "\t",
    ),
  );
  return `${["ID\tDEAD SINCE\tENVIRONMENT\tDELIVERIES\tJOB\tERROR", ...lines].join("\n")}\n`;
}

/**
 * Publishes each dead letter's job again on its own subject, then forgets the letter, in one
 * transaction per letter: a letter is dropped only once its stream has acknowledged the job.
 * The message id is new (the stream would drop the original's within its window); the
 * handlers are idempotent, so a job that half ran before it died does not run its done part
 * twice. Answers, per id, whether it was replayed (false: no such letter, or one being replayed).
 */
export async function replayDeadLetters(pool: Pool, nats: NatsConnection, ids: readonly string[]): Promise<Map<string, boolean>> {
  const replayed = new Map<string, boolean>();
  for (const id of ids) {
    replayed.set(
      id,
      await withTransaction(pool, async (tx) => {
        const row = await store.selectDeadLetterForReplay(tx, id);
        if (!row) return false;
        await publishJobs(nats, [{ subject: row.subject, data: row.job, msgID: `replay.${row.id}.${row.created_at.getTime()}` }]);
        await store.deleteDeadLetter(tx, id);
        return true;
      }),
    );
  }
  return replayed;
}
