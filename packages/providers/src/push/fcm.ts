import { importPKCS8, SignJWT } from "jose";
import { answerError, expectOk, parseJson, postForm, trimSlash } from "../http.js";
import type { OutboundHttp } from "../outbound.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext } from "../types.js";
import { missingSetting, ProviderError } from "../types.js";
import { createTokenCache, fingerprint, mintedToken } from "../tokens.js";
import { providerOverrides, requireTokens, sendEachToken, settle, stringOf, type TokenOutcome } from "./common.js";
import { objectOf } from "../overrides.js";
import { mergedBody, withProviderData } from "../provider-data.js";

const ID = "fcm";
const DEFAULT_BASE = "https://fcm.googleapis.com";
const DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token";
const SCOPE = "https://www.googleapis.com/auth/firebase.messaging";

interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  projectId: string;
  tokenUri: string;
}

/** The service account JSON (Novu also reads it from `user`); never quoted in errors: it holds the private key. */
function serviceAccountOf(context: SendContext): ServiceAccount {
  const text = context.credentials.serviceAccount ?? context.credentials.user;
  if (!text) throw missingSetting(ID, "serviceAccount");
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = objectOf(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed) throw new ProviderError(`${ID}: the integration's serviceAccount is not a JSON object`, { transient: false });
  const field = (name: string) => {
    const value = stringOf(parsed[name]);
    if (!value) throw missingSetting(ID, `serviceAccount.${name}`);
    return value;
  };
  return {
    clientEmail: field("client_email"),
    // A key pasted with its line breaks escaped once more still reads as PEM.
    privateKey: field("private_key").replace(/\\n/g, "\n"),
    projectId: field("project_id"),
    tokenUri: stringOf(parsed.token_uri) ?? DEFAULT_TOKEN_URI,
  };
}

/** Exchanges a signed assertion (RFC 7523) at the service account's token endpoint for an access token. */
async function mintAccessToken(account: ServiceAccount, http: OutboundHttp) {
  let key: Awaited<ReturnType<typeof importPKCS8>>;
  try {
    key = await importPKCS8(account.privateKey, "RS256");
  } catch {
    throw new ProviderError(`${ID}: the service account's private_key is not a PKCS#8 RSA key`, { transient: false });
  }
  const assertion = await new SignJWT({ scope: SCOPE })
    .setProtectedHeader({ alg: "RS256", typ: "JWT" })
    .setIssuer(account.clientEmail)
    .setAudience(account.tokenUri)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
  const answer = await postForm<{ access_token?: unknown; expires_in?: unknown }>(`${ID} token endpoint`, http, account.tokenUri, {
    grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
    assertion,
  });
  const value = stringOf(answer.access_token);
  if (!value) throw new ProviderError(`${ID}: the token endpoint answered no access_token`, { transient: false });
  return mintedToken(value, answer.expires_in);
}

/** FCM data values are strings: others travel as JSON, as Novu sends them. */
function stringData(payload: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(Object.entries(payload).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]));
}

const renamed = (value: Record<string, unknown>, names: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(value).map(([key, entry]) => [names[key] ?? key, entry]));

/** A length in milliseconds as a protobuf Duration in JSON ("1.5s"). */
const durationOf = (ms: number) => `${(ms / 1000).toFixed(9).replace(/\.?0+$/, "")}s`;

/** firebase-admin's AndroidNotification names (what Novu users write in overrides) that the v1 API spells otherwise. */
const ANDROID_NOTIFICATION_NAMES = {
  imageUrl: "image",
  eventTimestamp: "event_time",
  priority: "notification_priority",
  vibrateTimingsMillis: "vibrate_timings",
  lightSettings: "light_settings",
};

/** A "#RRGGBB" or "#RRGGBBAA" colour as the v1 API's google.type.Color (channels from 0 to 1); undefined for anything else. */
function colorOf(value: unknown): Record<string, number> | undefined {
  const match = typeof value === "string" ? /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})?$/i.exec(value) : null;
  if (!match) return undefined;
  const [, red, green, blue, alpha = "ff"] = match;
  const channel = (hex: string | undefined) => Number.parseInt(hex ?? "ff", 16) / 255;
  return { red: channel(red), green: channel(green), blue: channel(blue), alpha: channel(alpha) };
}

function lightSettingsOf(settings: unknown): unknown {
  const light = objectOf(settings);
  if (!light) return settings;
  const { color, lightOnDurationMillis: on, lightOffDurationMillis: off, ...rest } = light;
  return {
    ...rest,
    ...(color === undefined ? {} : { color: colorOf(color) ?? color }),
    ...(on === undefined ? {} : { light_on_duration: typeof on === "number" ? durationOf(on) : on }),
    ...(off === undefined ? {} : { light_off_duration: typeof off === "number" ? durationOf(off) : off }),
  };
}

/**
 * firebase-admin's AndroidNotification in the v1 API's form: its priority, visibility and proxy
 * as the API's enum names, its millisecond durations as Durations, its light colour as a Color.
 * A value not of firebase-admin's type goes as it is, for FCM to judge.
 */
function androidNotification(notification: Record<string, unknown>): Record<string, unknown> {
  const { priority, visibility, proxy, vibrateTimingsMillis: vibrate, lightSettings, ...rest } = notification;
  const upper = (value: unknown) => (typeof value === "string" ? value.toUpperCase() : value);
  return renamed(
    {
      ...rest,
      ...(priority === undefined ? {} : { priority: typeof priority === "string" ? `PRIORITY_${priority.toUpperCase()}` : priority }),
      ...(visibility === undefined ? {} : { visibility: upper(visibility) }),
      ...(proxy === undefined ? {} : { proxy: upper(proxy) }),
      ...(vibrate === undefined
        ? {}
        : { vibrateTimingsMillis: Array.isArray(vibrate) ? vibrate.map((ms) => (typeof ms === "number" ? durationOf(ms) : ms)) : vibrate }),
      ...(lightSettings === undefined ? {} : { lightSettings: lightSettingsOf(lightSettings) }),
    },
    ANDROID_NOTIFICATION_NAMES,
  );
}

/** firebase-admin's aps names (what Novu users write in overrides) and the ones Apple reads. */
const APS_NAMES = { threadId: "thread-id", targetContentId: "target-content-id", contentAvailable: "content-available", mutableContent: "mutable-content" };
const ALERT_NAMES = {
  locKey: "loc-key",
  locArgs: "loc-args",
  titleLocKey: "title-loc-key",
  titleLocArgs: "title-loc-args",
  subtitleLocKey: "subtitle-loc-key",
  subtitleLocArgs: "subtitle-loc-args",
  actionLocKey: "action-loc-key",
  launchImage: "launch-image",
};

/** Apple's flags are 1 or absent: firebase-admin takes true for 1 and drops any other value. */
const FLAGS = ["content-available", "mutable-content"] as const;
const flagged = (value: unknown) => value === true || value === 1;

/**
 * Novu hands `android` and `apns` to firebase-admin, which converts its own forms to the v1
 * API's: a TTL in milliseconds, the notification's fields above, `imageUrl`, and camelCase aps
 * keys with boolean flags. The rest is already v1 JSON (which takes camelCase field names too).
 */
function androidConfig(android: Record<string, unknown>): Record<string, unknown> {
  const { ttl, notification, ...rest } = android;
  const shown = objectOf(notification);
  return {
    ...rest,
    ...(ttl === undefined ? {} : { ttl: typeof ttl === "number" ? durationOf(ttl) : ttl }),
    ...(notification === undefined ? {} : { notification: shown ? androidNotification(shown) : notification }),
  };
}

/**
 * The trigger's FCM provider overrides with their `android` and `apns` in the v1 API's form: Novu
 * merges them into firebase-admin's message, which converts them as it converts its own.
 */
function inV1Form(providerData: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> | undefined {
  if (!providerData) return providerData;
  const android = objectOf(providerData["android"]);
  const apns = objectOf(providerData["apns"]);
  return { ...providerData, ...(android ? { android: androidConfig(android) } : {}), ...(apns ? { apns: apnsConfig(apns) } : {}) };
}

function apnsConfig(apns: Record<string, unknown>): Record<string, unknown> {
  const { payload, fcmOptions, ...rest } = apns;
  const options = objectOf(fcmOptions);
  return {
    ...rest,
    ...(payload === undefined ? {} : { payload: apnsPayload(payload) }),
    ...(options ? { fcm_options: renamed(options, { imageUrl: "image" }) } : {}),
  };
}

function apnsPayload(payload: unknown): unknown {
  const body = objectOf(payload);
  const aps = objectOf(body?.aps);
  if (!body || !aps) return payload;
  const { alert, sound, ...fields } = renamed(aps, APS_NAMES);
  const text = objectOf(alert);
  const tone = objectOf(sound);
  const { critical, ...toneFields } = tone ?? {};
  for (const flag of FLAGS) {
    if (flag in fields) {
      if (flagged(fields[flag])) fields[flag] = 1;
      else delete fields[flag];
    }
  }
  return {
    ...body,
    aps: {
      ...fields,
      ...(text ? { alert: renamed(text, ALERT_NAMES) } : alert === undefined ? {} : { alert }),
      ...(tone ? { sound: { ...toneFields, ...(flagged(critical) ? { critical: 1 } : {}) } } : sound === undefined ? {} : { sound }),
    },
  };
}

/**
 * The HTTP v1 message for one token (none: the overrides name a topic), as Novu builds its multicast: a `type: "data"` override sends
 * a data-only message carrying the payload; otherwise a notification whose data is
 * `overrides.data` (the payload stays out of it, as in Novu: FCM caps a message at a few KB).
 */
function fcmMessage(message: PushMessage, token: string | undefined): Record<string, unknown> {
  const { type, android, apns, fcmOptions, webPush, data, ...notification } = providerOverrides(message);
  const androidOverrides = objectOf(android);
  const apnsOverrides = objectOf(apns);
  const platforms = {
    ...(androidOverrides ? { android: androidConfig(androidOverrides) } : {}),
    ...(apnsOverrides ? { apns: apnsConfig(apnsOverrides) } : {}),
    ...(fcmOptions === undefined ? {} : { fcm_options: fcmOptions }),
    ...(webPush === undefined ? {} : { webpush: webPush }),
  };
  if (type === "data") {
    return { token, data: { ...stringData(message.payload), title: message.title, body: message.content, message: message.content }, ...platforms };
  }
  // As Novu sends a notification: its data is the overrides' data and the id of the message it delivers.
  const messageId = stringOf(message.payload.__nvMessageId);
  const extra = { ...(messageId ? { __nvMessageId: messageId } : {}), ...objectOf(data) };
  return {
    token,
    notification: {
      title: stringOf(notification.title) ?? message.title,
      body: stringOf(notification.body) ?? message.content,
      ...(stringOf(notification.imageUrl) ? { image: notification.imageUrl } : {}),
    },
    ...(Object.keys(extra).length > 0 ? { data: stringData(extra) } : {}),
    ...platforms,
  };
}

interface GoogleError {
  error?: { status?: string; message?: string; details?: { errorCode?: string; fieldViolations?: { field?: string }[] }[] };
}

/** Whether FCM's answer says the token itself is dead: unregistered, or not a registration token at all. */
function tokenIsInvalid(text: string): boolean {
  let error: GoogleError["error"];
  try {
    error = (JSON.parse(text) as GoogleError).error;
  } catch {
    return false;
  }
  if (!error) return false;
  const details = error.details ?? [];
  if (details.some((detail) => detail.errorCode === "UNREGISTERED")) return true;
  if (error.status !== "INVALID_ARGUMENT") return false;
  return (
    details.some((detail) => (detail.fieldViolations ?? []).some((violation) => violation.field === "message.token")) ||
    /registration token/i.test(error.message ?? "")
  );
}

/**
 * Whether the trigger's FCM overrides (`SendContext.providerData`) name a topic or a condition:
 * the send then goes there once, as Novu's does, instead of to the devices.
 */
export function fcmSendsToTopic(providerData: SendContext["providerData"]): boolean {
  const target = mergedBody({}, providerData, "snake") as { topic?: unknown; condition?: unknown };
  return typeof target.topic === "string" || typeof target.condition === "string";
}

export const fcm: ProviderFactory = () => {
  const tokens = createTokenCache();
  return {
    id: ID,
    channel: "push",
    idempotent: false,
    async send(message: PushMessage, context: SendContext) {
      const toTopic = fcmSendsToTopic(context.providerData);
      if (!toTopic) requireTokens(ID, message);
      const account = serviceAccountOf(context);
      const accessToken = await tokens.get(context.integrationId, fingerprint(account.clientEmail, account.privateKey, account.tokenUri), () =>
        mintAccessToken(account, context.http),
      );
      const providerData = inV1Form(context.providerData);
      /** One message to `token`, or to whatever the overrides name instead; the trigger's provider overrides merged into it as Novu merges them into the admin SDK's. */
      const sendOne = async (token: string | undefined): Promise<TokenOutcome> => {
        const { url, body, headers } = withProviderData(
          {
            url: `${trimSlash(context.credentials.baseUrl ?? DEFAULT_BASE)}/v1/projects/${encodeURIComponent(account.projectId)}/messages:send`,
            body: fcmMessage(message, token),
            headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
          },
          providerData,
          "snake",
        );
        // The devices the overrides name (Novu's multicast `tokens`) are the tokens sent to, not a field of the message.
        const { tokens: _devices, ...fields } = body;
        const response = await context.http.request(url, { method: "POST", headers, body: JSON.stringify({ message: fields }) });
        if (response.status === 401) throw tokens.refused(context.integrationId, accessToken, ID, response);
        // Only the subscriber's own token, not one the overrides put in its place, is dropped as dead.
        if (token !== undefined && body.token === token && response.status >= 400 && response.status < 500 && tokenIsInvalid(response.text)) {
          return { sent: false, invalid: true, error: answerError(ID, response, false) };
        }
        expectOk(ID, response);
        return { sent: true, id: stringOf(parseJson<{ name?: unknown }>(response.text).name) };
      };
      if (toTopic) return settle(ID, [{ token: "", outcome: await sendOne(undefined) }]);
      return sendEachToken(ID, message.tokens, sendOne);
    },
  };
};
