import type { Context, Next } from "koa";
import type { Environment, Environments } from "./environments.js";
import type { SubscriberSession } from "./sessions.js";

/** The routes browsers call, with a subscriber session, from the app's own origin: the Inbox's and the Notification Center's. */
const BROWSER_PATH_PREFIXES = ["/v1/inbox/", "/v1/widgets/"];

const ALLOWED_METHODS = "GET, POST, PATCH, DELETE";
/**
 * What @novu/js sends on every request (inbox-protocol §1), and @novu/client's User-Agent (Firefox
 * lets a page set it, and then asks for it in the preflight).
 */
const ALLOWED_HEADERS = "Authorization, Content-Type, Novu-API-Version, Novu-Client-Version, Novu-Application-Identifier, User-Agent";
/** Chromium keeps a preflight at most two hours, Firefox a day. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/** An origin as browsers send it and as origins are configured: scheme://host[:port], lowercase; undefined if it is not one. */
export function normalizeOrigin(text: string): string | undefined {
  if (text === "null") return text;
  try {
    const url = new URL(text);
    return url.origin === "null" ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/** Whether the environment's Inbox may be used from `origin` (none configured: any). */
export function originAllowed(environment: Pick<Environment, "inboxOrigins">, origin: string): boolean {
  if (environment.inboxOrigins === null) return true;
  const normalized = normalizeOrigin(origin);
  return normalized !== undefined && environment.inboxOrigins.includes(normalized);
}

/**
 * For the socket server: whether a connection from `origin` (undefined for a client that is not
 * a browser) may use the environment's Inbox.
 */
export async function inboxOriginAllowed(environments: Environments, environmentId: string, origin: string | undefined): Promise<boolean> {
  if (origin === undefined) return true;
  const environment = await environments.byId(environmentId);
  return environment !== undefined && originAllowed(environment, origin);
}

/**
 * The environment a request names: its session's, else the applicationIdentifier of its body or
 * header. undefined when it names none or an unknown one; throws when it cannot be looked up.
 */
async function environmentNamed(ctx: Context, environments: Environments): Promise<Environment | undefined> {
  const session = ctx.state.session as SubscriberSession | undefined;
  if (session) return environments.byId(session.scope.environmentId);
  const body = ctx.state.body as { applicationIdentifier?: unknown } | undefined;
  const identifier = typeof body?.applicationIdentifier === "string" ? body.applicationIdentifier : ctx.get("novu-application-identifier");
  return identifier ? environments.byIdentifier(identifier) : undefined;
}

/**
 * CORS of the Inbox routes. Preflights are answered for any origin without credentials (they
 * carry none, nor the environment); an answer carries Access-Control-Allow-Origin when its
 * environment allows the origin. Answers that name no known environment (an unknown
 * applicationIdentifier, a missing or forged token) carry it for any origin: they hold nothing of
 * any environment, and the app's developer then reads the real error instead of a CORS failure.
 */
export function inboxCors(environments: Environments) {
  return async (ctx: Context, next: Next) => {
    const origin = ctx.get("origin");
    if (!origin || !BROWSER_PATH_PREFIXES.some((prefix) => ctx.path.startsWith(prefix))) return next();
    ctx.vary("Origin");
    if (ctx.method === "OPTIONS" && ctx.get("access-control-request-method")) {
      ctx.set({
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": ALLOWED_METHODS,
        "Access-Control-Allow-Headers": ALLOWED_HEADERS,
        "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_SECONDS),
      });
      ctx.status = 204;
      return;
    }
    try {
      await next();
    } finally {
      // A failed lookup allows nothing, and the answer already made (an error, maybe) stands.
      const environment = await environmentNamed(ctx, environments).then(
        (found) => found ?? null,
        () => undefined,
      );
      if (environment === null || (environment !== undefined && originAllowed(environment, origin))) ctx.set("Access-Control-Allow-Origin", origin);
    }
  };
}
