import {
  connect as http2Connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import { connect as netConnect, isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { importPKCS8, SignJWT } from "jose";
import { answerError, expectOk, parseJson } from "../http.js";
import { OutboundRefused, urlRefusal, type OutboundHttp, type OutboundResponse } from "../outbound.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext } from "../types.js";
import { missingSetting, ProviderError } from "../types.js";
import { createTokenCache, fingerprint } from "../tokens.js";
import { providerOverrides, requireTokens, sendEachToken, stringOf, type TokenOutcome } from "./common.js";
import { objectOf } from "../overrides.js";
import { mergedBody, withProviderData } from "../provider-data.js";

const ID = "apns";
const PRODUCTION = "https://api.push.apple.com";
const SANDBOX = "https://api.sandbox.push.apple.com";
/** Apple refuses provider tokens older than an hour and throttles renewals more often than every 20 minutes. */
const TOKEN_LIFETIME_MS = 40 * 60_000;
/** An idle connection is let go after this long; Apple asks for long-lived connections, not idle ones forever. */
const IDLE_MS = 10 * 60_000;

/** The integration's settings under Novu's names: secretKey = the .p8 key, apiKey = its key id, projectName = the team id. */
function settingsOf(context: SendContext) {
  const { secretKey, apiKey, projectName, applicationId, secure, baseUrl } = context.credentials;
  if (!secretKey) throw missingSetting(ID, "secretKey");
  if (!apiKey) throw missingSetting(ID, "apiKey");
  if (!projectName) throw missingSetting(ID, "projectName");
  return {
    key: secretKey.replace(/\\n/g, "\n"),
    keyId: apiKey,
    teamId: projectName,
    bundleId: applicationId,
    base: baseUrl ?? (secure ? PRODUCTION : SANDBOX),
  };
}

async function mintProviderToken(key: string, keyId: string, teamId: string) {
  let signingKey: Awaited<ReturnType<typeof importPKCS8>>;
  try {
    signingKey = await importPKCS8(key, "ES256");
  } catch {
    throw new ProviderError(`${ID}: the integration's secretKey is not a PKCS#8 (.p8) EC key`, { transient: false });
  }
  const value = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: keyId }).setIssuer(teamId).setIssuedAt().sign(signingKey);
  return { value, renewAt: Date.now() + TOKEN_LIFETIME_MS };
}

/** APNs priorities are 10, 5 or 1; Novu's push overrides say "high" and "normal" too. */
function priorityOf(value: unknown): string | undefined {
  if (value === "high") return "10";
  if (value === "normal") return "5";
  return typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value)) ? String(value) : undefined;
}

const flag = (value: unknown) => (value === true || value === 1 ? 1 : undefined);

/** Drops undefined entries, so the JSON carries only what was set. */
const defined = (entries: Record<string, unknown>) => Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));

/**
 * The request for one notification, from the fields Novu's APNs provider (node-apn's Notification)
 * takes as overrides: header fields, `aps` fields under their camelCase names, and the custom
 * payload at the top level beside `aps`.
 */
function apnsRequest(message: PushMessage, bundleId: string | undefined, providerData: SendContext["providerData"]) {
  // The trigger's provider overrides: their known fields are node-apn's, like the push overrides;
  // their `_passthrough` reaches the payload and the headers.
  const { _passthrough, ...known } = providerData ?? {};
  const channel = providerOverrides(message);
  const overrides = mergedBody(channel, known, "camel");
  const topic = stringOf(overrides.topic) ?? bundleId;
  if (!topic) throw missingSetting(ID, "applicationId");
  // node-apn's `alert`: a string is the whole alert, an object is taken as the alert's fields.
  const given = overrides.alert;
  const alert =
    typeof given === "string"
      ? given
      : defined({
          title: stringOf(overrides.title) ?? message.title,
          subtitle: overrides.subtitle,
          body: stringOf(overrides.body) ?? message.content,
          "title-loc-key": overrides.titleLocKey,
          "title-loc-args": overrides.titleLocArgs,
          "subtitle-loc-key": overrides.subtitleLocKey,
          "subtitle-loc-args": overrides.subtitleLocArgs,
          "action-loc-key": overrides.actionLocKey,
          "loc-key": overrides.locKey,
          "loc-args": overrides.locArgs,
          "launch-image": overrides.launchImage,
          ...objectOf(given),
        });
  const aps = defined({
    alert,
    badge: overrides.badge,
    sound: overrides.sound,
    category: overrides.category ?? overrides.categoryId,
    "thread-id": overrides.threadId,
    "content-available": flag(overrides.contentAvailable),
    "mutable-content": flag(overrides.mutableContent),
    "url-args": overrides.urlArgs,
    "target-content-id": overrides.targetContentIdentifier,
    "interruption-level": overrides.interruptionLevel,
    "relevance-score": overrides.relevanceScore,
    ...objectOf(overrides.aps),
  });
  // As Novu builds it: the push overrides' payload replaces the trigger's, the provider overrides' merges into that.
  const base = { payload: objectOf(channel.payload) ?? message.payload };
  const custom = objectOf(mergedBody(base, known.payload === undefined ? {} : { payload: known.payload }, "camel").payload) ?? {};
  const headers = defined({
    "apns-topic": topic,
    "apns-push-type": stringOf(overrides.pushType) ?? "alert",
    "apns-priority": priorityOf(overrides.priority),
    "apns-expiration": typeof overrides.expiry === "number" ? String(overrides.expiry) : stringOf(overrides.expiry),
    "apns-collapse-id": stringOf(overrides.collapseId),
    "apns-id": stringOf(overrides.id),
  }) as Record<string, string>;
  // node-apn sends a rawPayload as it is, instead of the payload it would build.
  const raw = objectOf(overrides.rawPayload);
  // APNs takes no query: the URL is only what the merge asks for.
  const request = withProviderData({ url: PRODUCTION, body: raw ?? { ...custom, aps }, headers }, { _passthrough }, "camel");
  return { headers: request.headers, body: JSON.stringify(request.body) };
}

interface Connection {
  origin: string;
  session: Promise<ClientHttp2Session>;
}

/**
 * Opens an HTTP/2 session to the vetted address of the base's host (TLS keeps the host name for
 * SNI and the certificate; an http:// base speaks h2c, for local receivers).
 */
async function openSession(base: URL, http: OutboundHttp): Promise<ClientHttp2Session> {
  const refusal = urlRefusal(base.href, http.policy);
  if (refusal) throw new OutboundRefused(`${base.origin}: ${refusal}`);
  const host = base.hostname.startsWith("[") ? base.hostname.slice(1, -1) : base.hostname;
  const { address } = await http.resolve(host);
  const tls = base.protocol === "https:";
  const port = Number(base.port) || (tls ? 443 : 80);
  const session = http2Connect(base.origin, {
    createConnection: () =>
      tls ? tlsConnect({ host: address, port, ALPNProtocols: ["h2"], ...(isIP(host) ? {} : { servername: host }) }) : netConnect({ host: address, port }),
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      session.destroy();
      reject(new ProviderError(`${ID}: no connection to ${base.host} within ${http.policy.connectTimeoutMs} ms`, { transient: true }));
    }, http.policy.connectTimeoutMs);
    session.once("connect", () => {
      clearTimeout(timer);
      session.off("error", failed);
      session.setTimeout(IDLE_MS, () => session.close());
      // Errors after the connect end the session; the requests on it see their own.
      session.on("error", () => undefined);
      resolve(session);
    });
    const failed = (error: Error) => {
      clearTimeout(timer);
      reject(new ProviderError(`${ID}: cannot connect to ${base.host}: ${error.message}`, { transient: true, cause: error }));
    };
    session.once("error", failed);
  });
}

/** One POST on the session, read as an OutboundResponse (with the outbound guard's total timeout and size cap). */
function post(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  body: string,
  http: OutboundHttp,
  signal: AbortSignal | undefined,
): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    let stream: ClientHttp2Stream;
    try {
      stream = session.request({ ":method": "POST", ...headers }, signal ? { signal } : {});
    } catch (error) {
      reject(new ProviderError(`${ID}: the connection is gone: ${(error as Error).message}`, { transient: true, cause: error }));
      return;
    }
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: Error) =>
      settle(() => {
        if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
        reject(error);
      });
    const timer = setTimeout(() => fail(new ProviderError(`${ID}: no answer within ${http.policy.timeoutMs} ms`, { transient: true })), http.policy.timeoutMs);
    let answer: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("response", (received) => {
      answer = received;
    });
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > http.policy.maxResponseBytes) fail(new OutboundRefused(`${ID} answered more than ${http.policy.maxResponseBytes} bytes`));
      else chunks.push(chunk);
    });
    stream.on("end", () =>
      settle(() => {
        const { ":status": status, ...rest } = answer;
        resolve({ status: Number(status ?? 0), headers: rest, text: Buffer.concat(chunks).toString("utf8") });
      }),
    );
    stream.on("error", (error) => fail(new ProviderError(`${ID}: the request failed: ${error.message}`, { transient: true, cause: error })));
    stream.on("close", () => fail(new ProviderError(`${ID}: the stream closed without an answer`, { transient: true })));
    stream.end(body);
  });
}

export const apns: ProviderFactory = () => {
  const tokens = createTokenCache();
  const connections = new Map<string, Connection>();

  /** The integration's session, reused while it lives (a closed one has left the map) and its origin stays the same. */
  function sessionFor(integrationId: string, base: URL, http: OutboundHttp): Promise<ClientHttp2Session> {
    const existing = connections.get(integrationId);
    if (existing && existing.origin === base.origin) return existing.session;
    if (existing)
      void existing.session.then(
        (session) => session.close(),
        () => undefined,
      );
    const connection: Connection = { origin: base.origin, session: openSession(base, http) };
    connections.set(integrationId, connection);
    const forget = () => {
      if (connections.get(integrationId) === connection) connections.delete(integrationId);
    };
    connection.session.then((session) => {
      session.once("close", forget);
      session.once("goaway", forget);
    }, forget);
    return connection.session;
  }

  return {
    id: ID,
    channel: "push",
    idempotent: false,
    async send(message: PushMessage, context: SendContext) {
      requireTokens(ID, message);
      const settings = settingsOf(context);
      const { headers, body } = apnsRequest(message, settings.bundleId, context.providerData);
      let base: URL;
      try {
        base = new URL(settings.base);
      } catch {
        throw new ProviderError(`${ID}: the integration's baseUrl is not a URL`, { transient: false });
      }
      const jwt = await tokens.get(context.integrationId, fingerprint(settings.key, settings.keyId, settings.teamId), () =>
        mintProviderToken(settings.key, settings.keyId, settings.teamId),
      );
      const session = await sessionFor(context.integrationId, base, context.http);
      return sendEachToken(ID, message.tokens, async (token): Promise<TokenOutcome> => {
        const path = `${base.pathname.replace(/\/+$/, "")}/3/device/${encodeURIComponent(token)}`;
        const response = await post(
          session,
          { ":path": path, authorization: `bearer ${jwt}`, "content-type": "application/json", ...headers },
          body,
          context.http,
          context.signal,
        );
        const reason = stringOf(parseJson<{ reason?: unknown }>(response.text).reason);
        // 410 (Unregistered, ExpiredToken): the device is gone. BadDeviceToken is not counted so: Apple
        // also answers it for every token when the integration names the wrong environment
        // (sandbox or production), and that mistake must not wipe the subscribers' tokens.
        if (response.status === 410) {
          return { sent: false, invalid: true, error: answerError(ID, response, false) };
        }
        if (response.status === 403 && reason === "ExpiredProviderToken") throw tokens.refused(context.integrationId, jwt, ID, response);
        expectOk(ID, response);
        return { sent: true, id: stringOf(response.headers["apns-id"]) };
      });
    },
    async close() {
      const open = [...connections.values()];
      connections.clear();
      await Promise.all(
        open.map((connection) =>
          connection.session.then(
            (session) => new Promise<void>((resolve) => session.close(() => resolve())),
            () => undefined,
          ),
        ),
      );
    },
  };
};
