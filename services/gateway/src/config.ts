import { parseCidrs } from "@notify/providers/outbound";
import { z } from "zod";
import { SERVICE_LEVEL_NAMES } from "./rate-limits.js";
import {
  commonEnv,
  createSealer,
  developmentKey,
  encryptionKeyVariable,
  rpcClientEnv,
  loadConfig,
  optionalPort,
  parsedText,
  port,
  snsRequestsEnv,
  url,
  webhookSetupEnv,
  type Env,
} from "@notify/runtime";

const perSecond = z.preprocess((value) => (value === "" ? undefined : value), z.coerce.number().int().positive().optional());

const schema = z.object({
  ...commonEnv,
  ...rpcClientEnv,
  ...snsRequestsEnv,
  ...webhookSetupEnv,
  /**
   * The address providers reach this gateway at (https://notify.example.com): auto-configure points
   * their event webhooks there. Unset, auto-configure says it is needed.
   */
  GATEWAY_PUBLIC_URL: z.preprocess((value) => (value === "" ? undefined : value), z.string().url().optional()),
  GATEWAY_HOST: z.string().default("0.0.0.0"),
  GATEWAY_PORT: port(3000),
  /** Where /metrics is served: not on the public port. Unset: GATEWAY_PORT + 1000 (a free port when that is 0). */
  GATEWAY_METRICS_PORT: optionalPort,
  REDIS_URL: url("redis://127.0.0.1:6379"),
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  SUBSCRIBERS_URL: url("http://127.0.0.1:50051"),
  INTEGRATIONS_URL: url("http://127.0.0.1:50052"),
  TOPICS_URL: url("http://127.0.0.1:50053"),
  MESSAGES_URL: url("http://127.0.0.1:50055"),
  TRIGGERS_URL: url("http://127.0.0.1:50054"),
  /**
   * A key the Development environment accepts, ensured at every start (deployments set it from a
   * secret). Empty counts as unset: compose passes a variable left blank in .env as "".
   */
  BOOTSTRAP_API_KEY: z.preprocess((value) => (value === "" ? undefined : value), z.string().min(16).optional()),
  /**
   * Seals the API keys at rest (so Inbox subscriberHashes can be checked with them) and is mixed
   * into every environment's session signing key; without it a public development key is used.
   * Changing it ends every Inbox session and every stored key's HMAC checks.
   */
  GATEWAY_ENCRYPTION_KEY: encryptionKeyVariable(),
  /** How long an Inbox session token lasts (Novu: 15 days); the client never refreshes one, it starts a new session. */
  INBOX_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(365 * 86_400)
    .default(15 * 86_400),
  /** The longest an Inbox snooze may last (the Inbox UI offers snoozing only above zero). */
  INBOX_MAX_SNOOZE_HOURS: z.coerce
    .number()
    .int()
    .min(0)
    .max(365 * 24)
    .default(30 * 24),
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** API rate limits (README: Rate limits): off only to measure what they cost. */
  RATE_LIMITS: z.enum(["on", "off"]).default("on"),
  /** The service level of environments without limits of their own. */
  RATE_LIMIT_SERVICE_LEVEL: z.enum(SERVICE_LEVEL_NAMES).default("enterprise"),
  /** Requests per second of a category, over the service level's, for environments without limits of their own. */
  RATE_LIMIT_TRIGGER: perSecond,
  RATE_LIMIT_CONFIGURATION: perSecond,
  RATE_LIMIT_GLOBAL: perSecond,
  /** Requests per second of each Inbox subscriber (all its browsers and apps together). */
  RATE_LIMIT_INBOX: z.coerce.number().int().positive().default(20),
  /** Requests per second of each client address on the public routes (Inbox session start, providers' webhooks). */
  RATE_LIMIT_PUBLIC: z.coerce.number().int().positive().default(50),
  /** Proxies in front of the gateway that append to X-Forwarded-For: the client address is the entry the outermost one added. */
  GATEWAY_TRUSTED_PROXIES: z.coerce.number().int().min(0).max(10).default(0),
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().min(60).default(86_400),
  /**
   * Memory for the feed pages kept between identical polls (messages-client.ts); 0 keeps none.
   * A page stays only while NATS brings the changes that would make it wrong. Under constant
   * eviction (1,000 inboxes of 70 KB pages polled at random) the process grew by up to twice
   * this, against a 512 MiB limit in deploy/.
   */
  FEED_CACHE_MB: z.coerce.number().int().min(0).max(4096).default(32),
  /** Ranges user-set URLs may reach besides the public internet (README: Outbound safety). */
  OUTBOUND_ALLOWED_CIDRS: parsedText(parseCidrs),
  /**
   * How often the gateway pings an idle Inbox socket (and so how soon it notices a vanished
   * client). Each ping costs the gateway a little CPU per socket; keep it under the idle timeout
   * of any proxy in front, which cuts a silent websocket.
   */
  INBOX_SOCKET_PING_INTERVAL_MS: z.coerce.number().int().min(1_000).max(300_000).default(45_000),
  /** Inbox sockets one subscriber may hold open on one gateway process (every tab and app of theirs); one more is closed as it connects. */
  INBOX_MAX_SOCKETS_PER_SUBSCRIBER: z.coerce.number().int().min(1).max(100_000).default(50),
  /**
   * How long a gateway that stopped without closing its Inbox sockets (killed, crashed, cut off
   * from Redis) keeps their subscribers online: it says it is alive three times as often, and
   * the other gateways look for ones gone silent as often.
   */
  INBOX_PRESENCE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  /** Time /readyz/dependencies waits for each dependency. */
  READINESS_TIMEOUT_MS: z.coerce.number().int().min(50).default(1_000),
});

export type GatewayConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): GatewayConfig {
  return loadConfig(schema, env);
}

/** What seals API keys and signs sessions: the configured key, or the public development one. */
export const encryptionKeyOf = (config: Pick<GatewayConfig, "GATEWAY_ENCRYPTION_KEY">) => config.GATEWAY_ENCRYPTION_KEY ?? developmentKey("gateway");
export const sealerOf = (config: Pick<GatewayConfig, "GATEWAY_ENCRYPTION_KEY">) => createSealer(encryptionKeyOf(config), "GATEWAY_ENCRYPTION_KEY");
