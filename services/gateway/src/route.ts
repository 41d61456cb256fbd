import type { Scope } from "@notify/runtime";
import { z } from "zod";
import { MIB } from "./body.js";
import type { Clients } from "./clients.js";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * The caller's scope headers and the request's abort signal. `signal` is a getter of a class
 * (made on first read), which an object spread drops: name the fields to pass them on.
 */
export interface RouteCall {
  readonly headers: Record<string, string>;
  readonly signal: AbortSignal;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  scope: Scope;
  clients: Clients;
  /** Options for every RPC the route makes. */
  call: RouteCall;
}

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
  /** Koa path, e.g. /v1/subscribers/:subscriberId */
  path: string;
  /** Success status; 204 sends no body. */
  status: number;
  /** Wrap the result (an object or JsonBytes) as {"data": result}; false for paginated lists, which carry their own data. */
  envelope: boolean;
  bodyLimit: number;
  params: z.ZodType;
  query: z.ZodType;
  body: z.ZodType;
  handle(input: RouteInput<unknown, unknown, unknown>): Promise<unknown>;
  sensitive?: Sensitive;
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

const serialized = new WeakMap<object, JsonBytes>();

/** The JSON text `build` makes from `answer`, made on the first call for that answer object only. */
export function jsonOnce(answer: object, build: () => string): JsonBytes {
  let body = serialized.get(answer);
  if (!body) {
    body = new JsonBytes(build());
    serialized.set(answer, body);
  }
  return body;
}

const anything = z.unknown();

/** Declares a route; schemas default to "accept anything" and types flow from them into `handle`. */
export function route<P extends z.ZodType = typeof anything, Q extends z.ZodType = typeof anything, B extends z.ZodType = typeof anything, R = unknown>(spec: {
  method: Method;
  path: string;
  status?: number;
  envelope?: boolean;
  bodyLimit?: number;
  params?: P;
  query?: Q;
  body?: B;
  handle(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>): Promise<R>;
  sensitive?: Sensitive<z.output<P>, z.output<Q>, z.output<B>, R>;
}): Route {
  return {
    method: spec.method,
    path: spec.path,
    status: spec.status ?? (spec.method === "POST" ? 201 : 200),
    envelope: spec.envelope ?? true,
    bodyLimit: spec.bodyLimit ?? MIB,
    params: spec.params ?? anything,
    query: spec.query ?? anything,
    body: spec.body ?? anything,
    handle: spec.handle as Route["handle"],
    ...(spec.sensitive ? { sensitive: spec.sensitive as Sensitive } : {}),
  };
}
