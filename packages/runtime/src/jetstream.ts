import { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType, createInbox, headers, nanos, type JsMsg, type Msg, type NatsConnection } from "nats";
import type { Logger } from "./log.js";
import { Counter, metricsRegistry, sampledGauge } from "./metrics.js";
import { continueFrom, currentOrigin, originFrom, SpanKind, startSpanFrom, type Origin, type ReadHeader } from "./tracing.js";

export type { JsMsg };

/** A work-queue stream: each job is kept until one consumer acknowledges it. */
export interface JobStream {
  name: string;
  /** Subjects are `<prefix>.<kind>`, e.g. notify.jobs.trigger. */
  subjectPrefix: string;
}

/** What the jobs of the job stream ask for: the last token of their subjects (the deliveries stream names channels instead). */
export const JOB_KINDS = {
  /** An accepted trigger (triggers.v1.TriggerJob). */
  trigger: "trigger",
  /** A deleted subscriber whose references in other services go too (subscribers.v1.SubscriberDeletedJob). */
  subscriberDeleted: "subscriber-deleted",
} as const;

export const jobSubject = (stream: JobStream, kind: string) => `${stream.subjectPrefix}.${kind}`;

/** Creates the stream if missing (file storage: an acknowledged publish survives a NATS restart). */
export async function ensureJobStream(nats: NatsConnection, stream: JobStream): Promise<void> {
  const manager = await nats.jetstreamManager();
  const config = {
    name: stream.name,
    subjects: [`${stream.subjectPrefix}.>`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    // msgID de-duplication window: a relay that republishes after a crash is absorbed here.
    duplicate_window: nanos(10 * 60_000),
  };
  try {
    await manager.streams.info(stream.name);
  } catch {
    await manager.streams.add(config).catch(async (error: unknown) => {
      // another process created it meanwhile
      await manager.streams.info(stream.name).catch(() => {
        throw error;
      });
    });
  }
}

export interface OutgoingJob {
  subject: string;
  data: Uint8Array;
  /** The stream's de-duplication id: a re-publish with the same id is acknowledged and dropped. */
  msgID: string;
  /** The request that caused the job (its id, its trace), carried in the message's headers. */
  origin?: Origin | undefined;
}

/** NATS's own bound on a message, for a connection whose server has not said its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** Room a job's message keeps for its headers (message id, trace) besides its data. */
const HEADER_ROOM_BYTES = 16 * 1024;

/** The most a job's data may take on this connection: the server refuses a message over its max_payload. */
export const maxJobBytes = (nats: NatsConnection): number => (nats.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - HEADER_ROOM_BYTES;

/** Why the stream refused a publish, if its acknowledgement says it did. */
function refusal(ack: Msg): Error | undefined {
  // No stream listens on the subject: the server answers the reply subject with status 503.
  if (ack.headers?.hasError) return new Error(`publish not acknowledged: ${ack.headers.code} ${ack.headers.description}`);
  const body = ack.json<{ error?: { code: number; description: string } }>();
  return body.error ? new Error(`publish refused: ${body.error.code} ${body.error.description}`) : undefined;
}

/**
 * Publishes the jobs and waits until the stream has acknowledged every one (rejects on the first
 * refusal or after `timeoutMs`). All of them share one reply subscription: `js.publish` pays a
 * request object, a timer, a promise and an error object per message, about a tenth of the
 * triggers process's CPU at full acceptance.
 */
export async function publishJobs(nats: NatsConnection, jobs: readonly OutgoingJob[], timeoutMs = 5_000): Promise<void> {
  if (jobs.length === 0) return;
  const inbox = createInbox();
  let waiting = jobs.length;
  let settle: (error?: Error) => void = () => undefined;
  const acknowledged = new Promise<void>((resolve, reject) => {
    settle = (error) => {
      clearTimeout(timer);
      subscription.unsubscribe();
      for (const span of spans.splice(0)) span?.end(error);
      if (error) reject(error);
      else resolve();
    };
  });
  // With tracing on, each job's publish is a producer span of its request's trace, ended when the stream has them all.
  const spans = jobs.map((job) => (job.origin ? startSpanFrom(job.origin, { name: `${job.subject} publish`, kind: SpanKind.PRODUCER }) : undefined));
  const subscription = nats.subscribe(`${inbox}.*`, {
    callback: (error, ack) => {
      const failure = error ?? refusal(ack);
      if (failure) settle(failure);
      else if (--waiting === 0) settle();
    },
  });
  const timer = setTimeout(() => settle(new Error(`${waiting} of ${jobs.length} publishes unacknowledged after ${timeoutMs} ms`)), timeoutMs);
  try {
    jobs.forEach((job, index) => {
      const header = headers();
      header.set("Nats-Msg-Id", job.msgID);
      const origin = spans[index]?.origin;
      if (origin) for (const key in origin) header.set(key, origin[key]!);
      nats.publish(job.subject, job.data, { reply: `${inbox}.${index}`, headers: header });
    });
  } catch (error) {
    // A connection closed under us: fail now, leaving no timer to reject into the void later.
    settle(error as Error);
  }
  await acknowledged;
}

export interface ConsumeOptions {
  stream: JobStream;
  durable: string;
  /** Jobs (or, with handleBatch, batches) processed at once by this process. */
  concurrency: number;
  /** With handleBatch: the most jobs handed over in one batch. */
  maxBatch?: number;
  /** Messages pulled ahead of those being handled; by default enough to fill every place. */
  prefetch?: number;
  /**
   * Waited for before each next job is taken: a handler that bounds its work by something other
   * than the jobs under way (the sends a page holds) says here when it can take more.
   */
  ready?(): Promise<void> | undefined;
  /**
   * Jobs delivered and not acknowledged yet, beyond which the server delivers no more; by default a
   * few times what the process handles at once. A job handed back for later counts until it is due,
   * so a stream whose handler hands jobs back by the thousand sets -1 (no bound): its own `ready`
   * and `prefetch` bound what it takes.
   */
  maxAckPending?: number;
  /** Deliveries before a job is dead-lettered; -1 for no limit (the handler then decides when to give up). */
  maxDeliver: number;
  /** Waits before the 2nd, 3rd, … delivery. */
  backoffMs: number[];
  /** How long a delivery may run without `working()` before it is redelivered. */
  ackWaitMs: number;
  log: Logger;
  /** Resolves when the job is done, or with a later time to hand it over again (not a failure: nothing is logged). */
  handle(message: JsMsg): Promise<void> | Promise<Later | undefined>;
  /**
   * Handles the jobs that are waiting together (one round trip per stage for all of them). If it
   * throws, each job of the batch goes through `handle` on its own, so one bad job cannot fail
   * its neighbours into the dead letters.
   */
  handleBatch?(messages: JsMsg[]): Promise<void>;
  /** Called instead of `handle` on the last allowed delivery's failure: record it, the job is then dropped. */
  deadLetter(message: JsMsg, error: unknown): Promise<void>;
  /** A failure no redelivery can mend (the job's own data is refused): dead-lettered at once. */
  isPermanent?(error: unknown): boolean;
}

/** The origin of each job under way: its request id and, with tracing on, its consumer span. */
const jobOrigins = new WeakMap<JsMsg, Origin>();

/** The origin a job being handled hands on to the work it causes (e.g. the jobs it publishes). */
export function originOfJob(message: JsMsg): Origin | undefined {
  return jobOrigins.get(message);
}

const headerReader =
  (message: JsMsg): ReadHeader =>
  (name) =>
    message.headers?.get(name) || undefined;

/** A job that is to come back after a while, e.g. a send that waits for its provider. */
export interface Later {
  retryInMs: number;
}

export interface Consumption {
  /** False once the subscription ended: this process takes no more jobs of the stream. */
  active(): boolean;
  stop(): Promise<void>;
}

const JOB_OUTCOMES = ["done", "deferred", "failed", "dead_lettered"] as const;

const jobsTotal = new Counter<"stream" | "outcome">({
  name: "notify_jobs_total",
  help: "Jobs a consumer finished with, by stream and outcome (done; deferred: handed back for later; failed: to be retried; dead_lettered)",
  labelNames: ["stream", "outcome"],
  registers: [metricsRegistry],
});

const consumerLabels = ["stream", "consumer"] as const;
const watchPending = sampledGauge("notify_jetstream_consumer_pending", "Messages of the stream the consumer has not been delivered yet", consumerLabels);
const watchAckPending = sampledGauge("notify_jetstream_consumer_ack_pending", "Messages delivered to the consumer and not acknowledged yet", consumerLabels);
const watchRedelivered = sampledGauge(
  "notify_jetstream_consumer_redelivered",
  "Messages delivered to the consumer more than once and not acknowledged yet",
  consumerLabels,
);

/** How long one consumer info serves the gauges of one scrape (one request for the three). */
const CONSUMER_INFO_KEPT_MS = 1_000;

/** Samples the consumer's state at scrape time; answers the function that stops. */
function watchConsumer(
  read: () => Promise<{ num_pending: number; num_ack_pending: number; num_redelivered: number }>,
  labels: Record<(typeof consumerLabels)[number], string>,
) {
  let kept: { at: number; info: ReturnType<typeof read> } | undefined;
  const info = () => {
    if (!kept || Date.now() - kept.at > CONSUMER_INFO_KEPT_MS) kept = { at: Date.now(), info: read() };
    return kept.info;
  };
  const stops = [
    watchPending(async (set) => set(labels, (await info()).num_pending)),
    watchAckPending(async (set) => set(labels, (await info()).num_ack_pending)),
    watchRedelivered(async (set) => set(labels, (await info()).num_redelivered)),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/**
 * A durable pull consumer with explicit acks and bounded in-flight work. A failed job is nak'ed
 * with the back-off delay and redelivered up to `maxDeliver` times; after the last failure, or a
 * permanent one, it is dead-lettered and terminated. A crashed process's unacknowledged jobs
 * come back after ack wait.
 */
export async function consumeJobs(nats: NatsConnection, options: ConsumeOptions): Promise<Consumption> {
  const manager = await nats.jetstreamManager();
  const consumerConfig = {
    durable_name: options.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // No server-side `backoff`: the server would take its first entry as the ack wait, so a job
    // running longer than that would be delivered again while it runs. Failures are nak'ed with
    // their delay below; a crashed process's jobs come back after the ack wait.
    ack_wait: nanos(options.ackWaitMs),
    max_deliver: options.maxDeliver,
    max_ack_pending: options.maxAckPending ?? Math.max(options.concurrency * (options.maxBatch ?? 1) * 4, 64),
  };
  try {
    await manager.consumers.info(options.stream.name, options.durable);
    await manager.consumers.update(options.stream.name, options.durable, consumerConfig);
  } catch {
    await manager.consumers.add(options.stream.name, consumerConfig);
  }
  const consumer = await nats.jetstream().consumers.get(options.stream.name, options.durable);
  const maxBatch = options.handleBatch ? Math.max(1, options.maxBatch ?? 100) : 1;
  const messages = await consumer.consume({ max_messages: options.prefetch ?? options.concurrency * maxBatch });
  const running = new Set<Promise<void>>();
  const [done, deferred, failed, deadLettered] = JOB_OUTCOMES.map((outcome) => jobsTotal.labels(options.stream.name, outcome)) as [
    Counter.Internal,
    Counter.Internal,
    Counter.Internal,
    Counter.Internal,
  ];
  const stopWatching = watchConsumer(() => consumer.info(), { stream: options.stream.name, consumer: options.durable });

  // Long jobs (a broadcast page after page) keep their deliveries alive.
  const keepAlive = (batch: JsMsg[]) =>
    setInterval(() => {
      for (const message of batch) message.working();
    }, options.ackWaitMs / 3);

  const spanOf = (message: JsMsg) => ({ name: `${message.subject} process`, kind: SpanKind.CONSUMER });

  // Each job is handled under the request id it carries and, with tracing on, in a consumer span of its request's trace.
  const process = (message: JsMsg) =>
    continueFrom(headerReader(message), spanOf(message), () => {
      jobOrigins.set(message, currentOrigin());
      return processOne(message);
    });

  const processOne = async (message: JsMsg) => {
    const heartbeat = keepAlive([message]);
    try {
      const later = await options.handle(message);
      if (later) {
        message.nak(later.retryInMs);
        deferred.inc();
      } else {
        message.ack();
        done.inc();
      }
    } catch (error) {
      const attempt = message.info.redeliveryCount;
      const permanent = options.isPermanent?.(error) ?? false;
      if (permanent || (options.maxDeliver > 0 && attempt >= options.maxDeliver)) {
        options.log.error(
          { err: error, subject: message.subject, attempt },
          permanent ? "job refused; dead-lettered" : "job exhausted its deliveries; dead-lettered",
        );
        await options.deadLetter(message, error).catch((deadLetterError: unknown) => {
          options.log.error({ err: deadLetterError }, "dead-letter record failed");
        });
        message.term();
        deadLettered.inc();
      } else {
        const delay = options.backoffMs[Math.min(attempt - 1, options.backoffMs.length - 1)] ?? 1_000;
        options.log.warn({ err: error, subject: message.subject, attempt, retryInMs: delay }, "job failed; will retry");
        message.nak(delay);
        failed.inc();
      }
    } finally {
      clearInterval(heartbeat);
    }
  };

  const processBatch = async (batch: JsMsg[]) => {
    if (batch.length === 1 || !options.handleBatch) {
      await Promise.all(batch.map(process));
      return;
    }
    const heartbeat = keepAlive(batch);
    const spans = batch.map((message) => startSpanFrom(originFrom(headerReader(message)), spanOf(message)));
    batch.forEach((message, index) => {
      jobOrigins.set(message, spans[index]!.origin);
    });
    try {
      // The batch's log lines name its first job's request.
      await spans[0]!.run(() => options.handleBatch!(batch));
      for (const message of batch) message.ack();
      done.inc(batch.length);
    } catch (error) {
      options.log.warn({ err: error, jobs: batch.length }, "batch failed; handling its jobs one by one");
      for (const span of spans) span.end(error);
      spans.length = 0;
      await Promise.all(batch.map(process));
    } finally {
      for (const span of spans) span.end();
      clearInterval(heartbeat);
    }
  };

  // Jobs that arrive together are handed over together: a batch closes when it is full or when
  // the messages already received have been taken (the next turn of the event loop).
  let pending: JsMsg[] = [];
  let closing: NodeJS.Immediate | undefined;
  // Wakes the loop when a task ends and it waits for room: racing every running task instead
  // would cost a reaction per task for each message pulled.
  let roomMade: (() => void) | undefined;
  const dispatch = () => {
    if (closing) clearImmediate(closing);
    closing = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    const task = processBatch(batch).finally(() => {
      running.delete(task);
      roomMade?.();
    });
    running.add(task);
  };

  let looping = true;
  const loop = (async () => {
    for await (const message of messages) {
      pending.push(message);
      if (pending.length >= maxBatch) dispatch();
      else closing ??= setImmediate(dispatch);
      // consume() bounds what is pulled; this bounds what runs
      while (running.size >= options.concurrency) {
        await new Promise<void>((resolve) => {
          roomMade = resolve;
        });
        roomMade = undefined;
      }
      await options.ready?.();
    }
    dispatch();
  })().finally(() => {
    looping = false;
  });

  return {
    active: () => looping,
    async stop() {
      stopWatching();
      messages.stop();
      await loop.catch(() => undefined);
      await Promise.allSettled(running);
    },
  };
}
