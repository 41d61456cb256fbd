import type { InboundWebhook } from "@notify/providers/events";
import type { Scope } from "@notify/runtime";
import { z } from "zod";
import { MIB } from "./body.js";
import type { Clients } from "./clients.js";
import type { Accounts } from "./environments.js";
import type { RouteRateLimit } from "./rate-limits.js";
import type { SubscriberSession } from "./sessions.js";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * The caller's scope headers and the request's abort signal. `signal` is a getter of a class
 * (made on first read), which an object spread drops: name the fields to pass them on.
 */
export interface RouteCall {
  readonly headers: Record<string, string>;
  readonly signal: AbortSignal;
}

/**
 * Who may call a route: `api` takes `Authorization: ApiKey <key>` only (a server); `inbox` takes
 * `Authorization: Bearer <session token>` only (a subscriber's browser or app); `public` takes no
 * credentials at all (the Inbox session route, which checks its own).
 */
export type Audience = "api" | "inbox" | "public";

/**
 * A request's body as it arrived, with what signatures over it are checked against: the shape
 * providers' webhooks are read from, which are the routes that take one.
 */
export type RawRequest = InboundWebhook;

/** What every handler gets. */
export interface BaseRouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  clients: Clients;
  /** The gateway's own records: environments, session tokens, Inbox settings. */
  accounts: Accounts;
}

/** The input of an `api` route: the scope of the caller's key. */
export interface RouteInput<P, Q, B> extends BaseRouteInput<P, Q, B> {
  scope: Scope;
  /** Options for every RPC the route makes. */
  call: RouteCall;
}

/** The input of an `inbox` route: `scope` is the session's environment, `session` its subscriber. */
export interface InboxRouteInput<P, Q, B> extends RouteInput<P, Q, B> {
  session: SubscriberSession;
}

/** The input of a `public` route, which finds its scope itself. */
export interface PublicRouteInput<P, Q, B> extends BaseRouteInput<P, Q, B> {
  /** Options for the RPCs the route makes on behalf of `scope`. */
  callAs(scope: Scope): RouteCall;
}

export type InputOf<A extends Audience, P, Q, B> = A extends "inbox"
  ? InboxRouteInput<P, Q, B>
  : A extends "public"
    ? PublicRouteInput<P, Q, B>
    : RouteInput<P, Q, B>;

/**
 * Marks a route whose responses carry decrypted secrets (integration credentials). Such responses
 * never rest in the idempotency cache: it keeps `ref(result)` instead, and a replay answers
 * `replay(ref, input)`, the resource read again (see idempotency.ts for why that is what a
 * retrying client should get).
 */
export interface Sensitive<P = unknown, Q = unknown, B = unknown, R = unknown> {
  /** What names the outcome, e.g. the id of the integration created. */
  ref(result: R): string;
  /** The result (before the envelope) a replay answers. */
  replay(ref: string, input: RouteInput<P, Q, B>): Promise<R>;
}

export interface Route {
  method: Method;
  audience: Audience;
  /** Koa path, e.g. /v1/subscribers/:subscriberId */
  path: string;
  /** Success status; 204 sends no body. */
  status: number;
  /** Wrap the result (an object or JsonBytes) as {"data": result}; false for paginated lists, which carry their own data. */
  envelope: boolean;
  bodyLimit: number;
  /**
   * The body is not JSON parsed for the route: its `body` is the request as it arrived
   * (RawRequest), for callers that sign their bytes (providers' webhooks).
   */
  rawBody: boolean;
  params: z.ZodType;
  query: z.ZodType;
  body: z.ZodType;
  /**
   * The success body's shape (inside the envelope, if the route has one): what the API description
   * documents the route answers. Described, not enforced when answering; a test holds real answers
   * to it. Absent: documented as any JSON.
   */
  response?: z.ZodType;
  /** Called with the input of the route's audience (InputOf). */
  handle(input: BaseRouteInput<unknown, unknown, unknown>): Promise<unknown>;
  sensitive?: Sensitive;
  /** The rate-limit category and cost of an `api` route. */
  rateLimit: RouteRateLimit;
}

/**
 * A success body that is JSON text already, sent as it is (inside the route's envelope, if it has
 * one). Requests that share one downstream answer (identical polls batched together) share its
 * bytes through jsonOnce: mapping and stringifying a feed page is the larger part of what the
 * gateway spends on it, which a hundred polling clients would otherwise pay a hundred times.
 */
export class JsonBytes {
  readonly bytes: Buffer;
  constructor(text: string) {
    this.bytes = Buffer.from(text);
  }
}

/** What a handler answers for "nothing to show": 204 without a body, whatever the route's success status. */
export const NO_CONTENT = Symbol("no content");

const serialized = new WeakMap<object, Map<string, JsonBytes>>();

/** The JSON text `build` makes from `answer`, made on the first call for that answer object (and rendering, when routes render it differently) only. */
export function jsonOnce(answer: object, build: () => string, rendering = ""): JsonBytes {
  let bodies = serialized.get(answer);
  if (!bodies) serialized.set(answer, (bodies = new Map()));
  let body = bodies.get(rendering);
  if (!body) bodies.set(rendering, (body = new JsonBytes(build())));
  return body;
}

const anything = z.unknown();

/**
 * Declares a route; schemas default to "accept anything" and types flow from them into `handle`,
 * as does the audience (default `api`): an `inbox` handler's input carries the session.
 */
export function route<
  A extends Audience = "api",
  P extends z.ZodType = typeof anything,
  Q extends z.ZodType = typeof anything,
  B extends z.ZodType = typeof anything,
  R = unknown,
>(spec: {
  method: Method;
  audience?: A;
  path: string;
  status?: number;
  envelope?: boolean;
  bodyLimit?: number;
  rawBody?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  response?: z.ZodType;
  handle(input: InputOf<A, z.output<P>, z.output<Q>, z.output<B>>): Promise<R>;
  /** Only on `api` routes: idempotency keys are kept per environment, not per subscriber. */
  sensitive?: A extends "api" ? Sensitive<z.output<P>, z.output<Q>, z.output<B>, R> : never;
  /** Default: one token of `global` for reads, of `configuration` for writes (trigger routes name theirs). */
  rateLimit?: Partial<RouteRateLimit>;
}): Route {
  return {
    method: spec.method,
    audience: spec.audience ?? "api",
    path: spec.path,
    status: spec.status ?? (spec.method === "POST" ? 201 : 200),
    envelope: spec.envelope ?? true,
    bodyLimit: spec.bodyLimit ?? MIB,
    rawBody: spec.rawBody ?? false,
    params: spec.params ?? anything,
    query: spec.query ?? anything,
    body: spec.body ?? anything,
    handle: spec.handle as Route["handle"],
    rateLimit: { category: spec.method === "GET" ? "global" : "configuration", cost: "single", ...spec.rateLimit },
    ...(spec.response ? { response: spec.response } : {}),
    ...(spec.sensitive ? { sensitive: spec.sensitive as Sensitive } : {}),
  };
}
