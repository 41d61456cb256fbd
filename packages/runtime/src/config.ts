import { z } from "zod";

export type Env = Readonly<Record<string, string | undefined>>;

/** Thrown with every invalid variable listed, so one failed start shows all that is wrong. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/** Validates environment variables once, at start-up. Keys of the schema are variable names. */
export function loadConfig<S extends z.ZodObject>(schema: S, env: Env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`));
}

/** A TCP port; 0 asks the OS for a free one (tests). */
export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** A port with no fixed default (the reader derives one). */
export const optionalPort = z.coerce.number().int().min(0).max(65535).optional();

export const url = (fallback: string) => z.string().url().default(fallback);

/** A variable read by `parse`, whose error (it throws on what it cannot read) becomes the variable's problem. */
export const parsedText = <T>(parse: (text: string) => T, fallback = "") =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        return parse(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
        return z.NEVER;
      }
    });

export const logLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info");

/** Variables every process reads. */
export const commonEnv = {
  LOG_LEVEL: logLevel,
  /** Where spans are sent by OTLP/HTTP (…/v1/traces is appended); unset or empty: no tracing at all. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess((value) => (value === "" ? undefined : value), z.string().url().optional()),
  /**
   * After SIGTERM, how long the process reports not ready while it goes on serving, before it
   * stops accepting: the time a load balancer (a Kubernetes Service) takes to drop it. deploy/ sets it.
   */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  DATABASE_URL: url("postgres://postgres@127.0.0.1:5432/notify"),
};

/** Variables of every process that serves internal calls or makes them. */
export const internalRpcEnv = {
  /**
   * Proves that a caller is a notify process: every internal call carries it and every service
   * refuses a call without it (the scope headers a service trusts are only as good as this).
   * Unset: a public development token, and services warn at start.
   */
  INTERNAL_RPC_TOKEN: z.preprocess((value) => (value === "" ? undefined : value), z.string().min(24).optional()),
};

/** Variables of the processes that call other services. */
export const rpcClientEnv = {
  ...internalRpcEnv,
  /**
   * The deadline of a call that sets none: whatever hangs downstream (a lock held by a huge
   * update, a stalled peer) ends as an error the caller answers, never as a request left open.
   */
  RPC_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
};

/** Variables of the processes that use NATS. */
export const natsEnv = {
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
};

/** The NATS subject the worker answers the gateway's calls to Amazon SNS on (SES webhooks); tests use their own. */
export const snsRequestsEnv = {
  SNS_REQUESTS_SUBJECT: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .default("notify.outbound.sns"),
};

/** The NATS subject the worker answers the gateway's requests to set up providers' event webhooks on; tests use their own. */
export const webhookSetupEnv = {
  WEBHOOK_SETUP_SUBJECT: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .default("notify.outbound.webhook-setup"),
};

/** Variables of the processes that publish or consume jobs (triggers relay, worker). */
export const jobStreamEnv = {
  ...natsEnv,
  /** The JetStream stream triggers are published to (tests use their own). */
  JOBS_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("NOTIFY_JOBS"),
  JOBS_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .default("notify.jobs"),
};

/** Days of retention (data retention, README): 0 keeps for good. */
export const retentionDays = (fallback: number) => z.coerce.number().int().min(0).max(36_500).default(fallback);

/**
 * Variables of the processes that keep what a notification leaves (messages: the notification and
 * its sent messages; triggers: its transactionId, taken until then, as in the reference service).
 */
export const notificationRetentionEnv = {
  /** Days a notification is kept (the reference service's default); 0 keeps it for good. */
  NOTIFICATION_RETENTION_DAYS: retentionDays(30),
};
