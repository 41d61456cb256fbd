import type { AddressInfo } from "node:net";
import {
  connectNatsInBackground,
  connectRedis,
  createLogger,
  createPool,
  ensureDatabase,
  followChanges,
  isMain,
  processStopping,
  metricsPortOf,
  migrate,
  runMain,
  serveMetrics,
  runProcess,
} from "@notify/runtime";
import { ensureBootstrapKey } from "./accounts.js";
import { createApp } from "./app.js";
import { followRevocations, forgetKeys } from "./auth.js";
import { connectClients } from "./clients.js";
import { inboxOriginAllowed } from "./cors.js";
import { encryptionKeyOf, readConfig, sealerOf, type GatewayConfig } from "./config.js";
import { createEnvironments, type Accounts } from "./environments.js";
import { createOrganizations } from "./organizations.js";
import { feedPagesFollowed } from "./forgetting.js";
import { attachLiveEvents } from "./live.js";
import { liveReadsOf } from "./live-reads.js";
import { watchSocketConnections } from "./metrics.js";
import { createFeedPages } from "./messages-client.js";
import { createPresence, deploymentOf } from "./presence.js";
import { createRateLimiter, defaultRateLimits, inboxAdmission, type RateLimitDeps } from "./rate-limits.js";
import { routes } from "./routes.js";
import { createSessionTokens } from "./sessions.js";
import { migrations } from "./store.js";

/** The gateway's schema, as every service's package names its own (the migrate command reads them). */
export { migrations };

export interface RunningGateway {
  readonly port: number;
  /** Where /metrics is served (GATEWAY_METRICS_PORT). */
  readonly metricsPort: number;
  /** A key generated on a first start without BOOTSTRAP_API_KEY (shown once), if any. */
  readonly generatedKey: string | undefined;
  stop(): Promise<void>;
}

/**
 * Composition root: Postgres, Redis, NATS, the feed pages kept, downstream clients, environments
 * and session tokens, then the HTTP server.
 */
export async function start(config: GatewayConfig): Promise<RunningGateway> {
  const log = createLogger("gateway", config.LOG_LEVEL);
  if (!config.GATEWAY_ENCRYPTION_KEY) {
    log.warn("GATEWAY_ENCRYPTION_KEY is not set: API keys are sealed and Inbox sessions signed with a public development key; set one before real use");
  }
  const sealer = sealerOf(config);
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL);
  await migrate(pool, migrations, log);
  const bootstrap = await ensureBootstrapKey(pool, sealer, config.BOOTSTRAP_API_KEY);
  if (bootstrap.kind === "revoked") log.warn("BOOTSTRAP_API_KEY was revoked and stays refused: set a new one, or unset it");
  const generatedKey = bootstrap.kind === "generated" ? bootstrap.key : undefined;
  const redis = await connectRedis(config.REDIS_URL);
  const stopFollowingRevocations = await followRevocations(redis);
  // Start without NATS and report it until it answers; feed pages are kept only while it does.
  const nats = await connectNatsInBackground(config.NATS_URL, "gateway");
  const feedPages = config.FEED_CACHE_MB > 0 ? createFeedPages(config.FEED_CACHE_MB * 2 ** 20) : undefined;
  if (feedPages) {
    void followChanges(nats, feedPagesFollowed, feedPages, log);
  }
  const downstream = connectClients(config, feedPages, nats.current);
  const environments = createEnvironments({
    pool,
    sealer,
    encryptionKey: encryptionKeyOf(config),
    forgetKeys: (keyHashes) => forgetKeys(redis, keyHashes),
    log,
  });
  const accounts: Accounts = {
    environments,
    organizations: createOrganizations(pool, log),
    sessions: createSessionTokens({ environments, ttlSeconds: config.INBOX_SESSION_TTL_SECONDS }),
    inbox: { maxSnoozeDurationHours: config.INBOX_MAX_SNOOZE_HOURS },
  };
  let accepting = true;
  const rateLimits: RateLimitDeps | undefined =
    config.RATE_LIMITS === "on"
      ? {
          limiter: createRateLimiter(redis),
          environments,
          defaults: defaultRateLimits(config),
          callers: { inbox: config.RATE_LIMIT_INBOX, public: config.RATE_LIMIT_PUBLIC },
          trustedProxies: config.GATEWAY_TRUSTED_PROXIES,
        }
      : undefined;

  const app = createApp({
    log,
    clients: downstream.clients,
    routes,
    auth: { pool, redis, cacheSeconds: config.API_KEY_CACHE_SECONDS },
    accounts,
    idempotency: { redis, ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS, log },
    ...(rateLimits ? { rateLimits } : {}),
    outbound: { allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS },
    readiness: {
      accepting: () => accepting && !processStopping(),
      dependencies: { pool, redis, nats: nats.current, services: downstream.health, timeoutMs: config.READINESS_TIMEOUT_MS },
    },
  });
  const server = app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  server.keepAliveTimeout = 65_000;
  const presence = createPresence({
    redis,
    subscribers: downstream.clients.subscribers,
    log,
    deployment: deploymentOf(config.DATABASE_URL),
    timeoutMs: config.INBOX_PRESENCE_TIMEOUT_MS,
  });
  // The Inbox's live events share the HTTP server, so one origin serves apiUrl and socketUrl.
  const live = attachLiveEvents({
    server,
    sessions: accounts.sessions,
    reads: liveReadsOf(downstream.clients.messages),
    nats,
    log,
    originAllowed: (origin, session) => inboxOriginAllowed(environments, session.scope.environmentId, origin),
    pingIntervalMs: config.INBOX_SOCKET_PING_INTERVAL_MS,
    maxSocketsPerSubscriber: config.INBOX_MAX_SOCKETS_PER_SUBSCRIBER,
    ...(rateLimits ? { admit: inboxAdmission(rateLimits) } : {}),
    presence,
  });
  const stopWatchingSockets = watchSocketConnections(async (set) => set({}, live.sockets()));
  const port = (server.address() as AddressInfo).port;
  log.info({ port }, "gateway listening");
  const metrics = await serveMetrics(config.GATEWAY_HOST, metricsPortOf(config.GATEWAY_PORT, config.GATEWAY_METRICS_PORT), log);

  return {
    port,
    metricsPort: metrics.port,
    generatedKey,
    async stop() {
      accepting = false;
      stopWatchingSockets();
      await metrics.close();
      await live.close();
      await presence.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      downstream.close();
      await stopFollowingRevocations();
      await Promise.allSettled([redis.quit(), nats.close(), pool.end()]);
    },
  };
}

if (isMain(import.meta.url)) {
  runMain(async () => {
    const running = await runProcess("gateway", readConfig(), start);
    if (running.generatedKey) {
      process.stdout.write(
        `\nNo BOOTSTRAP_API_KEY was set, so an API key was generated for the Development environment.\n` +
          `It is shown only this once:\n\n    ${running.generatedKey}\n\n` +
          `Use it as:  Authorization: ApiKey ${running.generatedKey}\n` +
          `More keys:  pnpm notify keys create --environment Production\n\n`,
      );
    }
  });
}
