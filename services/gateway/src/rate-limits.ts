import type { Redis, Scope } from "@notify/runtime";
import type { Context, Next } from "koa";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { z } from "zod";
import type { GatewayConfig } from "./config.js";
import type { Environments } from "./environments.js";
import { HttpError } from "./errors.js";
import { rateLimitRejections } from "./metrics.js";
import type { Route } from "./route.js";
import type { SubscriberSession } from "./sessions.js";

/**
 * API rate limits as the reference service applies them (novu-behaviour.md §1.7): a budget per
 * environment and category, refilled every window, with a burst allowance above it; bulk calls
 * cost more tokens. The Inbox and public routes, which the reference service does not limit,
 * have a budget per caller instead (callerLimitMiddleware).
 */
export const RATE_LIMIT_CATEGORIES = ["trigger", "configuration", "global"] as const;
export type RateLimitCategory = (typeof RATE_LIMIT_CATEGORIES)[number];

export const COST_TOKENS = { single: 1, bulk: 100 } as const;
export type RateLimitCost = keyof typeof COST_TOKENS;

/** What a route costs; routes.ts sets it on the trigger routes, route.ts gives every other route its default. */
export interface RouteRateLimit {
  category: RateLimitCategory;
  cost: RateLimitCost;
}

/** Requests per second of each category. */
export type PerSecond = Record<RateLimitCategory, number>;

/** The reference service's tiers (its service levels), in requests per second. */
export const SERVICE_LEVELS = {
  free: { trigger: 60, configuration: 20, global: 30 },
  pro: { trigger: 240, configuration: 80, global: 120 },
  business: { trigger: 600, configuration: 200, global: 300 },
  enterprise: { trigger: 6000, configuration: 2000, global: 3000 },
  unlimited: { trigger: 3000, configuration: 3000, global: 3000 },
} as const satisfies Record<string, PerSecond>;
export type ServiceLevel = keyof typeof SERVICE_LEVELS;
export const SERVICE_LEVEL_NAMES = Object.keys(SERVICE_LEVELS) as [ServiceLevel, ...ServiceLevel[]];

export const WINDOW_SECONDS = 5;
const BURST_ALLOWANCE = 0.1;

/** The limits of one environment: a service level's figures, any category overridden. */
export interface RateLimitSettings {
  /** The service level named in RateLimit-Policy; "custom" once a category is overridden. */
  serviceLevel: string;
  perSecond: PerSecond;
}

/**
 * An environment's own limits as stored (gateway.environments.rate_limits, set by
 * `pnpm notify rate-limits`): a service level and/or per-second figures of single categories.
 */
export const environmentRateLimits = z
  .object({
    serviceLevel: z.enum(SERVICE_LEVEL_NAMES).optional(),
    trigger: z.number().int().positive().optional(),
    configuration: z.number().int().positive().optional(),
    global: z.number().int().positive().optional(),
  })
  .strict();
export type EnvironmentRateLimits = z.infer<typeof environmentRateLimits>;

/** The settings of `overrides` (an environment's, or the gateway's variables) on top of `base`. */
export function settingsOf(base: RateLimitSettings, overrides: EnvironmentRateLimits | null | undefined): RateLimitSettings {
  if (!overrides) return base;
  const level = overrides.serviceLevel ? { serviceLevel: overrides.serviceLevel, perSecond: SERVICE_LEVELS[overrides.serviceLevel] } : base;
  const overridden = RATE_LIMIT_CATEGORIES.some((category) => overrides[category] !== undefined);
  if (!overridden) return level;
  return {
    serviceLevel: "custom",
    perSecond: {
      trigger: overrides.trigger ?? level.perSecond.trigger,
      configuration: overrides.configuration ?? level.perSecond.configuration,
      global: overrides.global ?? level.perSecond.global,
    },
  };
}

/** The rate limits of environments without limits of their own (the RATE_LIMIT_* variables). */
export function defaultRateLimits(config: GatewayConfig): RateLimitSettings {
  const level = config.RATE_LIMIT_SERVICE_LEVEL;
  return settingsOf(
    { serviceLevel: level, perSecond: SERVICE_LEVELS[level] },
    {
      ...(config.RATE_LIMIT_TRIGGER ? { trigger: config.RATE_LIMIT_TRIGGER } : {}),
      ...(config.RATE_LIMIT_CONFIGURATION ? { configuration: config.RATE_LIMIT_CONFIGURATION } : {}),
      ...(config.RATE_LIMIT_GLOBAL ? { global: config.RATE_LIMIT_GLOBAL } : {}),
    },
  );
}

/** The tokens a window grants (RateLimit-Limit) and the most it admits (the burst). */
function budgetOf(perSecond: number): { limit: number; burst: number } {
  const limit = perSecond * WINDOW_SECONDS;
  return { limit, burst: Math.floor(limit * (1 + BURST_ALLOWANCE)) };
}

export interface Decision {
  allowed: boolean;
  limit: number;
  burst: number;
  remaining: number;
  /** Milliseconds until the window's budget is granted again. */
  resetMs: number;
}

/**
 * Tokens this process took from the shared budget of one environment and category, spent here
 * without a round trip to Redis until they run out or the window ends.
 */
interface Lease {
  tokens: number;
  /** When the window the tokens belong to ends (epoch ms). */
  until: number;
  /** What the shared budget had left when it last answered (other processes may have spent some since). */
  spare: number;
  /** Set while a refill is under way: requests that find the lease empty wait for it instead of asking Redis too. */
  refilling?: Promise<void>;
}

/**
 * A lease takes at most this share of a window's burst, so tokens leased by a process but not
 * spent before the window ends (never handed out: the budget is never exceeded) stay a small part.
 */
const LEASE_DIVISOR = 20;
const KEY_PREFIX = "notify:ratelimit";

export interface RateLimiter {
  /** Takes `cost` tokens from the budget of `key` (an environment, an Inbox subscriber, a client address) in `category`. */
  take(key: string, category: string, cost: number, perSecond: number): Decision | Promise<Decision>;
}

/** How often leases whose window ended are dropped: callers (subscribers, addresses) come and go. */
const SWEEP_MS = WINDOW_SECONDS * 1000;

/**
 * Budgets kept in Redis (rate-limiter-flexible, a fixed window per environment and category),
 * with an in-memory limiter of the same figures standing in while Redis is unreachable: an
 * outage then limits each gateway process on its own instead of blocking requests or lifting
 * the limits. Redis is asked for a lease of tokens, not for every request: the hot routes serve
 * tens of thousands of requests a second, which one round trip each would cost a good part of.
 */
export function createRateLimiter(redis: Redis): RateLimiter {
  const limiters = new Map<string, RateLimiterRedis>();
  const leases = new Map<string, Lease>();
  let nextSweep = Date.now() + SWEEP_MS;

  /** Drops the leases of windows that ended (a refill under way keeps its lease), at most once a window. */
  function sweep(now: number) {
    if (now < nextSweep) return;
    nextSweep = now + SWEEP_MS;
    for (const [key, lease] of leases) if (!lease.refilling && lease.until <= now) leases.delete(key);
  }

  function limiterOf(category: string, burst: number): RateLimiterRedis {
    const name = `${category}:${burst}`;
    let limiter = limiters.get(name);
    if (!limiter) {
      const options = { keyPrefix: `${KEY_PREFIX}:${category}`, points: burst, duration: WINDOW_SECONDS };
      limiter = new RateLimiterRedis({
        ...options,
        storeClient: redis,
        useRedisPackage: true,
        // Fail over at once while disconnected (the client does not queue commands either).
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory(options),
      });
      limiters.set(name, limiter);
    }
    return limiter;
  }

  /** Asks the shared budget for `cost` tokens plus a lease; answers whether `cost` was granted. */
  async function refill(key: string, budgetKey: string, limiter: RateLimiterRedis, cost: number, burst: number): Promise<boolean> {
    const known = leases.get(key);
    const spare = known && known.until > Date.now() ? known.spare : burst;
    const size = Math.max(cost, Math.min(Math.floor(burst / LEASE_DIVISOR), spare));
    try {
      const granted = await limiter.consume(budgetKey, size);
      leases.set(key, { tokens: size - cost, until: Date.now() + granted.msBeforeNext, spare: granted.remainingPoints });
      return true;
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      // A refused consume is counted too: give back what is not kept, so the budget counts
      // only tokens handed out. When `cost` alone still fits, it is kept.
      const room = burst - (refused.consumedPoints - size);
      const fits = room >= cost;
      await limiter.reward(budgetKey, fits ? size - cost : size).catch(() => undefined);
      leases.set(key, { tokens: 0, until: Date.now() + refused.msBeforeNext, spare: Math.max(0, fits ? room - cost : room) });
      return fits;
    }
  }

  /** Waits for the refill under way, or makes one, then decides again. */
  async function afterRefill(key: string, budgetKey: string, category: string, cost: number, perSecond: number): Promise<Decision> {
    const lease = leases.get(key);
    if (lease?.refilling && lease.until > Date.now()) {
      await lease.refilling;
      return take(budgetKey, category, cost, perSecond);
    }
    const { limit, burst } = budgetOf(perSecond);
    const pending = refill(key, budgetKey, limiterOf(category, burst), cost, burst);
    const waitedOn: Lease = lease && lease.until > Date.now() ? lease : { tokens: 0, until: Number.POSITIVE_INFINITY, spare: burst };
    waitedOn.refilling = pending.then(
      () => undefined,
      () => undefined,
    );
    leases.set(key, waitedOn);
    try {
      return decisionOf(await pending, limit, burst, leases.get(key) as Lease);
    } finally {
      // A refill replaces the lease; one that failed must not leave its waiters waiting for good.
      if (leases.get(key) === waitedOn) leases.delete(key);
    }
  }

  /** Decided here while the lease lasts (no promise made: the hot routes pass here on every request), else after a refill. */
  function take(budgetKey: string, category: string, cost: number, perSecond: number): Decision | Promise<Decision> {
    const key = `${category}:${budgetKey}`;
    const lease = leases.get(key);
    const now = Date.now();
    sweep(now);
    if (lease && !lease.refilling && lease.until > now) {
      if (lease.tokens >= cost) {
        lease.tokens -= cost;
        const { limit, burst } = budgetOf(perSecond);
        return decisionOf(true, limit, burst, lease);
      }
      // The shared budget had no room for this cost when last asked: refused here, no round trip.
      if (lease.spare < cost) {
        const { limit, burst } = budgetOf(perSecond);
        return decisionOf(false, limit, burst, lease);
      }
    }
    return afterRefill(key, budgetKey, category, cost, perSecond);
  }

  return { take };
}

function decisionOf(allowed: boolean, limit: number, burst: number, lease: Lease): Decision {
  return { allowed, limit, burst, remaining: Math.min(burst, lease.spare + lease.tokens), resetMs: Math.max(0, lease.until - Date.now()) };
}

export interface RateLimitDeps {
  limiter: RateLimiter;
  environments: Environments;
  /** The limits of environments that have none of their own. */
  defaults: RateLimitSettings;
  /** Requests per second of each Inbox subscriber, and of each client address on the public routes. */
  callers: Record<CallerCategory, number>;
  /** Proxies in front of the gateway whose X-Forwarded-For entries are believed (0: the connection's own address). */
  trustedProxies: number;
}

/**
 * Limits an API-key route per the caller's environment and the route's category, answering the
 * IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers, as the reference service sends
 * them) on every answer, and 429 + Retry-After over the limit. Runs after authentication (the
 * environment is the key's) and before the body is read, so a refused request costs little.
 */
export function rateLimitMiddleware(deps: RateLimitDeps) {
  const settingsOfEnvironment = keptSettings(deps);
  return (route: Route) => {
    const { category, cost } = route.rateLimit;
    const tokens = COST_TOKENS[cost];
    const policies = new WeakMap<RateLimitSettings, string>();
    const rejections = rateLimitRejections.labels(category);
    const answer = (ctx: Context, next: Next, settings: RateLimitSettings, decision: Decision) => {
      let policy = policies.get(settings);
      if (policy === undefined) {
        policy = `${policyOf(decision, category)};cost="${cost}";serviceLevel="${settings.serviceLevel}"`;
        policies.set(settings, policy);
      }
      return answerDecision(ctx, next, decision, policy, rejections);
    };
    const limit = (ctx: Context, next: Next, environmentId: string, settings: RateLimitSettings) => {
      const decision = deps.limiter.take(environmentId, category, tokens, settings.perSecond[category]);
      return decision instanceof Promise ? decision.then((decided) => answer(ctx, next, settings, decided)) : answer(ctx, next, settings, decision);
    };
    // Not an async function: on the hot routes every step decides synchronously, and each
    // promise a request makes on its way is measurable.
    return (ctx: Context, next: Next) => {
      const { environmentId } = ctx.state.scope as Scope;
      const settings = settingsOfEnvironment(environmentId);
      return settings instanceof Promise ? settings.then((found) => limit(ctx, next, environmentId, found)) : limit(ctx, next, environmentId, settings);
    };
  };
}

const policyOf = (decision: Decision, category: string) =>
  `${decision.limit};w=${WINDOW_SECONDS};burst=${decision.burst};comment="fixed window";category="${category}"`;

/** The RateLimit headers of a decision on the answer, and 429 + Retry-After when it refused. */
function answerDecision(ctx: Context, next: Next, decision: Decision, policy: string, rejections: { inc(): void }) {
  const resetSeconds = Math.ceil(decision.resetMs / 1000);
  ctx.set("RateLimit-Limit", String(decision.limit));
  ctx.set("RateLimit-Remaining", String(decision.remaining));
  ctx.set("RateLimit-Reset", String(resetSeconds));
  ctx.set("RateLimit-Policy", policy);
  if (!decision.allowed) {
    rejections.inc();
    throw new HttpError(429, "API rate limit exceeded", {}, { "Retry-After": String(Math.max(1, resetSeconds)) });
  }
  return next();
}

/**
 * Where no API key names an environment to charge, each caller has a budget of its own: an Inbox
 * subscriber (its environment and subscriber) on the Inbox routes, a client address on the
 * public ones (starting an Inbox session, providers' webhooks). One budget per environment shared
 * by every subscriber's browser would let one of them starve the others; one per caller bounds a
 * runaway client or a flood and leaves everyone else alone.
 */
export type CallerCategory = "inbox" | "public";

/**
 * The client's address: the connection's, or with trusted proxies in front, the entry the outermost
 * of them appended to X-Forwarded-For (each proxy appends the address it was reached from, so
 * entries further left are the client's own say, which anyone can forge).
 */
export function clientAddressOf(forwardedFor: string, connectionAddress: string, trustedProxies: number): string {
  if (trustedProxies === 0 || forwardedFor === "") return connectionAddress;
  const chain = forwardedFor
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  return chain[Math.max(0, chain.length - trustedProxies)] ?? connectionAddress;
}

/** The budget of an Inbox subscriber: its environment's and its own, whichever session or socket it calls through. */
const inboxBudgetKey = (session: SubscriberSession) => `${session.scope.environmentId}:${session.subscriberDbId}`;

/**
 * Whether one more call of the session's subscriber fits its Inbox budget, for what is not a route:
 * the handshake of a live socket, which a client reconnecting in a loop repeats.
 */
export function inboxAdmission(deps: RateLimitDeps): (session: SubscriberSession) => boolean | Promise<boolean> {
  const rejections = rateLimitRejections.labels("inbox");
  const admitted = (decision: Decision) => {
    if (!decision.allowed) rejections.inc();
    return decision.allowed;
  };
  return (session) => {
    const decision = deps.limiter.take(inboxBudgetKey(session), "inbox", 1, deps.callers.inbox);
    return decision instanceof Promise ? decision.then(admitted) : admitted(decision);
  };
}

export function callerLimitMiddleware(deps: RateLimitDeps) {
  return (category: CallerCategory) => {
    const perSecond = deps.callers[category];
    const rejections = rateLimitRejections.labels(category);
    let policy: string | undefined;
    const keyOf =
      category === "inbox"
        ? (ctx: Context) => inboxBudgetKey(ctx.state.session as SubscriberSession)
        : (ctx: Context) => clientAddressOf(ctx.get("x-forwarded-for"), ctx.socket.remoteAddress ?? "", deps.trustedProxies);
    const answer = (ctx: Context, next: Next, decision: Decision) => {
      policy ??= policyOf(decision, category);
      return answerDecision(ctx, next, decision, policy, rejections);
    };
    return (ctx: Context, next: Next) => {
      const decision = deps.limiter.take(keyOf(ctx), category, 1, perSecond);
      return decision instanceof Promise ? decision.then((decided) => answer(ctx, next, decided)) : answer(ctx, next, decision);
    };
  };
}

/** How long an environment's settings are kept here, as long as environments.ts keeps the environment. */
const SETTINGS_KEPT_MS = 60_000;

/** Each environment's settings, kept so that a request usually finds them without a promise. */
function keptSettings({ environments, defaults }: RateLimitDeps) {
  const kept = new Map<string, { settings: RateLimitSettings; until: number }>();
  return (environmentId: string): RateLimitSettings | Promise<RateLimitSettings> => {
    const entry = kept.get(environmentId);
    if (entry && entry.until > Date.now()) return entry.settings;
    return environments.byId(environmentId).then(
      (environment) => {
        const settings = settingsOf(defaults, environment?.rateLimits);
        kept.set(environmentId, { settings, until: Date.now() + SETTINGS_KEPT_MS });
        return settings;
      },
      // A failed lookup limits with the defaults, for this request only, rather than failing it.
      () => defaults,
    );
  };
}
