import { parseCidrs } from "@notify/providers";
import { z } from "zod";
import { commonEnv, rpcClientEnv, jobStreamEnv, loadConfig, parsedText, port, snsRequestsEnv, url, webhookSetupEnv, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  ...rpcClientEnv,
  ...jobStreamEnv,
  ...snsRequestsEnv,
  ...webhookSetupEnv,
  /** Batches of jobs processed at once. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** Jobs that arrived together and run together (one round trip per stage for all of them). */
  WORKER_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(200),
  WORKER_MAX_DELIVER: z.coerce.number().int().min(1).max(100).default(8),
  /** How long a delivery may go without progress before JetStream redelivers it (a crashed worker's jobs). */
  WORKER_ACK_WAIT_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  /** Subscribers per page of a fan-out: one lookup and one message batch each (the largest page was the fastest for a broadcast). */
  WORKER_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(1000),
  /**
   * Pages of one fan-out being written at once while the next is read. Under load from other
   * environments a broadcast gets the share of the machine its writes ask for: more pages finish
   * a broadcast sooner and leave the single triggers beside it less of their rate (`pnpm bench
   * triggers` runs both at once); this default sits between the two.
   */
  WORKER_PAGES_IN_FLIGHT: z.coerce.number().int().min(1).max(32).default(8),
  /** The stream sends travel through, apart from trigger jobs: a slow provider never holds a fan-out back. */
  DELIVERIES_STREAM: z.string().min(1).default("NOTIFY_DELIVERIES"),
  DELIVERIES_SUBJECT_PREFIX: z.string().min(1).default("notify.deliveries"),
  /**
   * Sends this process holds at once, across integrations, taken from the stream in whole pages:
   * waiting for a place, claiming their lease, calling their provider or recording the outcome.
   * More lets a quick provider's outcomes be recorded while its next calls run, but a send its
   * integration has no room for goes back to the stream, and on a busy machine taking such sends
   * again and again costs more than it gains.
   */
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(128),
  /** Sends under way at once per integration: a slow provider holds at most this many. */
  DELIVERY_CONCURRENCY_PER_INTEGRATION: z.coerce.number().int().min(1).max(1024).default(32),
  /** How long after a message is written its send may still be retried (transient failures). */
  DELIVERY_BUDGET_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(7 * 24 * 3_600_000)
    .default(3_600_000),
  /**
   * A send whose message was written longer ago is not made: it ends as an error. The send leases
   * that keep a message from going out twice are kept twice as long, then deleted; a job older than
   * this never needs one.
   */
  DELIVERY_MAX_AGE_MS: z.coerce
    .number()
    .int()
    .min(2_001)
    .max(365 * 24 * 3_600_000)
    .default(30 * 24 * 3_600_000),
  /** Ranges user-set URLs may reach besides the public internet (README: Outbound safety). */
  OUTBOUND_ALLOWED_CIDRS: parsedText(parseCidrs),
  OUTBOUND_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  OUTBOUND_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /**
   * Where the Amazon SNS URLs of SES webhooks (certificates, subscription confirmations) are
   * fetched from instead of AWS, path and query kept: a test's stand-in. Unset in production.
   */
  SNS_ENDPOINT_ORIGIN: z.preprocess((value) => (value === "" ? undefined : value), z.string().url().optional()),
  /** The health endpoint (/livez, /readyz): the worker serves nothing else. */
  WORKER_HOST: z.string().default("127.0.0.1"),
  WORKER_PORT: port(50060),
  TRIGGERS_URL: url("http://127.0.0.1:50054"),
  SUBSCRIBERS_URL: url("http://127.0.0.1:50051"),
  INTEGRATIONS_URL: url("http://127.0.0.1:50052"),
  TOPICS_URL: url("http://127.0.0.1:50053"),
  MESSAGES_URL: url("http://127.0.0.1:50055"),
});

/** A send retried within its budget, or redelivered after its worker died, must still find its lease. */
const checked = schema.refine((config) => config.DELIVERY_MAX_AGE_MS > config.DELIVERY_BUDGET_MS + config.WORKER_ACK_WAIT_MS, {
  path: ["DELIVERY_MAX_AGE_MS"],
  message: "must exceed DELIVERY_BUDGET_MS + WORKER_ACK_WAIT_MS: a send retried within its budget must still find its lease",
});

export type WorkerConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): WorkerConfig {
  return loadConfig(checked, env);
}
