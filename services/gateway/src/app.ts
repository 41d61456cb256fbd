import { randomUUID } from "node:crypto";
import Router from "@koa/router";
import type { NamePolicy } from "@notify/providers";
import { continueFrom, currentSpan, processStopping, scopeHeaders, SpanKind, type Logger, type Scope } from "@notify/runtime";
import Koa, { type Context, type Next } from "koa";
import { authMiddleware, sessionAuthMiddleware, type AuthDeps } from "./auth.js";
import { readJsonBody, readRawBody, refuseNul } from "./body.js";
import type { Clients } from "./clients.js";
import { inboxCors } from "./cors.js";
import { apiDescription } from "./docs.js";
import type { Accounts } from "./environments.js";
import { errorMiddleware } from "./errors.js";
import { dependencyHealth, livez, readyz, type ReadinessDeps } from "./health.js";
import { idempotencyMiddleware, type IdempotencyDeps } from "./idempotency.js";
import { countRequest } from "./metrics.js";
import { callerLimitMiddleware, rateLimitMiddleware, type RateLimitDeps } from "./rate-limits.js";
import {
  JsonBytes,
  NO_CONTENT,
  type Audience,
  type InboxRouteInput,
  type PublicRouteInput,
  type RawRequest,
  type Route,
  type RouteCall,
  type RouteInput,
} from "./route.js";
import type { SubscriberSession } from "./sessions.js";
import { listsJoined, outboundCheck, parseOrThrow } from "./validation.js";

export interface AppDeps {
  log: Logger;
  clients: Clients;
  routes: Route[];
  auth: AuthDeps;
  accounts: Accounts;
  idempotency: IdempotencyDeps;
  /** Absent: API routes are not rate limited (RATE_LIMITS=off). */
  rateLimits?: RateLimitDeps;
  readiness: ReadinessDeps;
  /** What user-set destinations (webhook URLs, provider hosts) may be written. */
  outbound: NamePolicy;
}

/**
 * Request id (taken from the client when it sends a sane one), one access-log line and the
 * request's metrics, per request (outermost, so the status is the one answered). The request runs
 * under its id, which every log line and every call it makes carries on, and, with tracing on, in
 * a server span (continuing the client's trace when it sends a traceparent).
 */
function requestLog(log: Logger) {
  return (ctx: Context, next: Next) => {
    const offered = ctx.get("x-request-id");
    const requestId = /^[\w.-]{1,64}$/.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set("X-Request-Id", requestId);
    // Once stopping, each answer closes its connection: clients open the next one elsewhere, and
    // no idle connection is left for the final close to cut under a request already sent.
    if (processStopping()) ctx.set("Connection", "close");
    return continueFrom(
      (name) => ctx.get(name) || undefined,
      { name: `HTTP ${ctx.method}`, kind: SpanKind.SERVER },
      () => answer(ctx, next),
      requestId,
    );
  };

  async function answer(ctx: Context, next: Next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      countRequest(ctx, started);
      const route = (ctx as Context & { routerPath?: string }).routerPath;
      currentSpan()
        ?.updateName(`${ctx.method} ${route ?? ctx.path}`)
        .setAttributes({ "http.request.method": ctx.method, "http.response.status_code": ctx.status, ...(route ? { "http.route": route } : {}) });
      // The path only: query strings and bodies may carry personal data; headers may carry keys.
      if (log.isLevelEnabled("info"))
        log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((performance.now() - started) * 10) / 10 }, "request");
    }
  }
}

/** Reads the body with the route's size limit; the raw bytes are kept for the idempotency fingerprint. */
function bodyReader(route: Route) {
  if (route.rawBody) {
    return async (ctx: Context, next: Next) => {
      const headers = Object.fromEntries(Object.entries(ctx.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value]));
      ctx.state.body = { body: await readRawBody(ctx, route.bodyLimit), contentType: ctx.get("content-type"), headers, url: ctx.href } satisfies RawRequest;
      await next();
    };
  }
  return async (ctx: Context, next: Next) => {
    const { value, raw } = await readJsonBody(ctx, route.bodyLimit);
    ctx.state.body = value;
    ctx.state.rawBody = raw;
    await next();
  };
}

/**
 * A signal that aborts when the client goes away before its response is written, so downstream
 * calls stop too. Made when a call first asks for it: an AbortSignal is not cheap to make, and
 * the hottest routes (batched triggers) never read it.
 */
function disconnectSignal(ctx: Context): AbortSignal {
  let signal = ctx.state.disconnectSignal as AbortSignal | undefined;
  if (signal) return signal;
  const abort = new AbortController();
  if (ctx.res.destroyed && !ctx.res.writableEnded) abort.abort();
  else {
    ctx.res.once("close", () => {
      if (!ctx.res.writableEnded) abort.abort();
    });
  }
  signal = abort.signal;
  ctx.state.disconnectSignal = signal;
  return signal;
}

/**
 * The options of every RPC a route makes: the caller's scope headers and the disconnect signal,
 * made when a call first reads it. The getter sits on the class: V8 builds an object literal with
 * a getter the slow way, which cost a request as much as auth, validation and routing together.
 */
class RequestCall implements RouteCall {
  readonly headers: Record<string, string>;
  readonly #ctx: Context;
  constructor(scope: Scope, ctx: Context) {
    this.headers = scopeHeaders(scope);
    this.#ctx = ctx;
  }
  get signal(): AbortSignal {
    return disconnectSignal(this.#ctx);
  }
}

/**
 * The handler input of a route of `audience` (route.ts InputOf), from what its authentication
 * set; one object literal each, as the hottest routes make one per request.
 */
function inputOf(
  audience: Audience,
  { params, query, body }: { params: unknown; query: unknown; body: unknown },
  clients: Clients,
  accounts: Accounts,
  ctx: Context,
): PublicRouteInput<unknown, unknown, unknown> | RouteInput<unknown, unknown, unknown> | InboxRouteInput<unknown, unknown, unknown> {
  if (audience === "public") {
    return { params, query, body, clients, accounts, callAs: (scope) => new RequestCall(scope, ctx) } satisfies PublicRouteInput<unknown, unknown, unknown>;
  }
  const scope = ctx.state.scope as Scope;
  const call = new RequestCall(scope, ctx);
  if (audience === "api") return { params, query, body, clients, accounts, scope, call } satisfies RouteInput<unknown, unknown, unknown>;
  const session = ctx.state.session as SubscriberSession;
  return { params, query, body, clients, accounts, scope, call, session } satisfies InboxRouteInput<unknown, unknown, unknown>;
}

const ENVELOPE_START = Buffer.from('{"data":');
const ENVELOPE_END = Buffer.from("}");

/**
 * Validates params, query and body, then runs the route's RPCs and writes its success response.
 * A replay of a sensitive route (`ctx.state.replayOf`, set by the idempotency middleware) reads
 * the outcome again instead of running the route.
 */
function execute(route: Route, clients: Clients, accounts: Accounts, outbound: NamePolicy) {
  const vetDestinations = outboundCheck(route.body);
  return async (ctx: Context) => {
    // %00 is the only way a URL carries a NUL character.
    if (ctx.originalUrl.includes("%00")) {
      refuseNul(ctx.params);
      refuseNul(ctx.query);
    }
    const params = parseOrThrow(route.params, ctx.params);
    const query = parseOrThrow(route.query, listsJoined(ctx.query));
    const body = parseOrThrow(route.body, ctx.state.body);
    const vetting = vetDestinations?.(body, outbound);
    if (vetting) await vetting;
    ctx.state.executed = true;
    const input = inputOf(route.audience, { params, query, body }, clients, accounts, ctx);
    const replayOf = ctx.state.replayOf as string | undefined;
    const result = replayOf === undefined ? await route.handle(input) : await route.sensitive!.replay(replayOf, input as RouteInput<unknown, unknown, unknown>);
    if (route.sensitive) ctx.state.outcomeRef = route.sensitive.ref(result);
    ctx.status = result === NO_CONTENT ? 204 : route.status;
    if (ctx.status === 204) return;
    if (result instanceof JsonBytes) {
      ctx.type = "application/json";
      ctx.body = route.envelope ? Buffer.concat([ENVELOPE_START, result.bytes, ENVELOPE_END]) : result.bytes;
    } else ctx.body = route.envelope ? { data: result } : result;
  };
}

/**
 * Middleware order: log and metrics → errors → Inbox CORS → one router (probes and the API description; API routes: auth → rate limit
 * → body → idempotency → validate and run; Inbox routes: session → the subscriber's rate limit →
 * body → validate and run, without idempotency keys, which are kept per environment, not per
 * subscriber; public routes: the client address's rate limit → body → validate and run). Auth runs only once a route has matched, as in the reference service: an
 * unknown path is a 404 whoever asks. One router pass per request, not one per group of routes:
 * on these machines every layer a request crosses is measurable (DESIGN §5).
 */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: true });
  app.use(requestLog(deps.log));
  app.use(errorMiddleware(deps.log));
  app.use(inboxCors(deps.accounts.environments));

  const router = new Router();
  router.get("/livez", livez);
  router.get("/readyz", readyz(deps.readiness.accepting));
  router.get("/readyz/dependencies", dependencyHealth(deps.readiness.dependencies));
  for (const [path, serve] of apiDescription(deps.routes)) router.get(path, serve);
  const authenticate = authMiddleware(deps.auth);
  const authenticateSession = sessionAuthMiddleware(deps.accounts.sessions);
  const idempotent = idempotencyMiddleware(deps.idempotency);
  const limited = deps.rateLimits ? rateLimitMiddleware(deps.rateLimits) : undefined;
  const callerLimited = deps.rateLimits ? callerLimitMiddleware(deps.rateLimits) : undefined;
  const inboxLimit = callerLimited ? [callerLimited("inbox")] : [];
  const publicLimit = callerLimited ? [callerLimited("public")] : [];
  for (const route of deps.routes) {
    const read = bodyReader(route);
    const run = execute(route, deps.clients, deps.accounts, deps.outbound);
    const chains = {
      api: () => (limited ? [authenticate, limited(route), read, idempotent(route), run] : [authenticate, read, idempotent(route), run]),
      inbox: () => [authenticateSession, ...inboxLimit, read, run],
      public: () => [...publicLimit, read, run],
    };
    router.register(route.path, [route.method], chains[route.audience]());
  }
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}
