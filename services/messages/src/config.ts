import { z } from "zod";
import { commonEnv, rpcClientEnv, loadConfig, notificationRetentionEnv, optionalPort, natsEnv, port, retentionDays, url, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  ...rpcClientEnv,
  MESSAGES_HOST: z.string().default("127.0.0.1"),
  MESSAGES_PORT: port(50055),
  /** Where /metrics is served; unset: MESSAGES_PORT + 1000. */
  MESSAGES_METRICS_PORT: optionalPort,
  /** Subscriber routes name subscribers by their external id; the subscribers service resolves them. */
  SUBSCRIBERS_URL: url("http://127.0.0.1:50051"),
  /** Listed messages carry their workflow (`template`); the workflow catalogue is in the triggers process. */
  TRIGGERS_URL: url("http://127.0.0.1:50054"),
  /** The subscribers service announces changed subscribers here; found subscribers are kept while they can be followed. */
  ...natsEnv,
  SUBSCRIBER_CACHE_SIZE: z.coerce.number().int().min(0).max(10_000_000).default(100_000),
  /**
   * Rows changed per statement by mark-all, so one huge mark-all holds row locks and a connection
   * for about a second at a time; chunks this large cost about what one UPDATE of every row does,
   * while much smaller ones cost markedly more (`pnpm bench messages` times a chunked mark-all).
   */
  MARK_ALL_CHUNK_ROWS: z.coerce.number().int().min(100).max(1_000_000).default(50_000),
  /** A notification (an activity feed entry) goes with its email, SMS, chat and push messages and their execution details. */
  ...notificationRetentionEnv,
  /** Days any message is kept, the in-app ones being the last left by default (as the reference service keeps them); 0: for good. */
  MESSAGE_RETENTION_DAYS: retentionDays(365),
  /** How often expired notifications and messages are looked for. */
  RETENTION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(600_000),
  /** How far ahead an Inbox snooze may end (the Inbox session tells clients the same bound). */
  INBOX_MAX_SNOOZE_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 366)
    .default(24 * 90),
});

export type MessagesConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): MessagesConfig {
  return loadConfig(schema, env);
}
