import { createHmac } from "node:crypto";
import { Novu, type Subscriber } from "@novu/js";
import { canonicalize } from "@tufjs/canonical-json";
import { expect } from "vitest";
import type { Data, Stack } from "./stack.js";

/** The session @novu/js gets from POST /v1/inbox/session. */
export interface InboxSession {
  token: string;
  totalUnreadCount: number;
  unreadCount: { total: number; severity: { high: number; medium: number; low: number; none: number } };
  removeNovuBranding: boolean;
  isDevelopmentMode: boolean;
  maxSnoozeDurationHours: number;
  applicationIdentifier: string;
  contextKeys: string[];
}

const identifiers = new Map<string, Promise<string>>();

/** The applicationIdentifier of the environment of `key` (the stack's Development key by default). */
export function environmentIdentifier(stack: Stack, key: string = stack.key): Promise<string> {
  const cacheKey = `${stack.url} ${key}`;
  let identifier = identifiers.get(cacheKey);
  if (!identifier) {
    identifier = stack.request<Data<{ identifier: string }>>("GET", "/v1/environments/me", undefined, { authorization: `ApiKey ${key}` }).then((reply) => {
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return reply.body.data.identifier;
    });
    identifiers.set(cacheKey, identifier);
  }
  return identifier;
}

/** What an app's backend gives its browser for an environment that enforces HMAC: hex HMAC-SHA256 of the subscriberId keyed by the API key. */
export const subscriberHash = (key: string, subscriberId: string) => createHmac("sha256", key).update(subscriberId).digest("hex");

/** Turns the HMAC requirement of the environment of `key` on or off (`credentials.hmac` of its in_app integration). */
export async function requireHmac(stack: Stack, required: boolean, key: string = stack.key): Promise<void> {
  const authorization = { authorization: `ApiKey ${key}` };
  const listed = await stack.request<Data<{ _id: string; channel: string; active: boolean }[]>>("GET", "/v1/integrations", undefined, authorization);
  const inApp = listed.body.data.find((integration) => integration.channel === "in_app" && integration.active);
  if (!inApp) throw new Error("the environment has no active in_app integration");
  const updated = await stack.request("PUT", `/v1/integrations/${inApp._id}`, { credentials: { hmac: required } }, authorization);
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
}

export interface InboxOptions {
  /** The environment's API key (default: the stack's Development key). */
  key?: string;
  /** Sent as subscriberHash; `true` computes the right one from `key`. */
  subscriberHash?: string | true;
  /** Profile fields sent with the subscriber. */
  profile?: Omit<Subscriber, "subscriberId">;
  /** The session's contexts. */
  context?: Record<string, string | { id: string; data?: Record<string, unknown> }>;
  /** Sent as contextHash; `true` computes the right one from `key`. */
  contextHash?: string | true;
}

/** What an app's backend gives its browser for a context where HMAC is enforced: hex HMAC-SHA256 of the context as canonical JSON. */
export const contextHash = (key: string, context: unknown) => createHmac("sha256", key).update(canonicalize(context)).digest("hex");

/** The session's context fields of a session body or a @novu/js client's options. */
function contextFields(key: string, options: InboxOptions) {
  if (!options.context) return {};
  const hash = options.contextHash === true ? contextHash(key, options.context) : options.contextHash;
  return { context: options.context, ...(hash !== undefined ? { contextHash: hash } : {}) };
}

/** A session of `subscriberId` started over plain HTTP, as @novu/js would (for tests that call the Inbox routes themselves). */
export async function openSession(stack: Stack, subscriberId: string, options: InboxOptions = {}): Promise<InboxSession> {
  const key = options.key ?? stack.key;
  const hash = options.subscriberHash === true ? subscriberHash(key, subscriberId) : options.subscriberHash;
  const reply = await stack.request<Data<InboxSession>>(
    "POST",
    "/v1/inbox/session",
    {
      applicationIdentifier: await environmentIdentifier(stack, key),
      subscriber: { subscriberId, ...options.profile },
      ...(hash !== undefined ? { subscriberHash: hash } : {}),
      ...contextFields(key, options),
    },
    { authorization: "" },
  );
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.data;
}

/**
 * A `@novu/js` client of `subscriberId` (apiUrl and socketUrl: the stack), resolved once its
 * session started; rejects with the client's error (which carries `status`) when it did not.
 * The caller disconnects its socket, if it opened one: `novu.socket.disconnect()`.
 */
export async function openInbox(stack: Stack, subscriberId: string, options: InboxOptions = {}): Promise<Novu> {
  const key = options.key ?? stack.key;
  const hash = options.subscriberHash === true ? subscriberHash(key, subscriberId) : options.subscriberHash;
  const novu = new Novu({
    applicationIdentifier: await environmentIdentifier(stack, key),
    subscriber: { subscriberId, ...options.profile },
    ...(hash !== undefined ? { subscriberHash: hash } : {}),
    ...contextFields(key, options),
    apiUrl: stack.url,
    socketUrl: stack.url,
  });
  await new Promise<void>((resolve, reject) => {
    const stop = novu.on("session.initialize.resolved", ({ data, error }) => {
      stop();
      if (error || !data) reject(error ?? new Error("the session resolved without data"));
      else resolve();
    });
  });
  return novu;
}
