import { createHash } from "node:crypto";
import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext, SendResult } from "../types.js";
import { missingSetting, ProviderError } from "../types.js";
import { providerOverrides, requireTokens, stringOf } from "./common.js";
import { objectOf } from "../overrides.js";
import { type Spelling, withProviderData } from "../provider-data.js";

const ID = "one-signal";
const DEFAULT_BASE = "https://api.onesignal.com";

/**
 * OneSignal deduplicates on `idempotency_key` but takes only UUIDs there: the message's key is
 * turned into one, the same for every attempt at the message.
 */
function uuidOf(key: string): string {
  const bytes = createHash("sha256").update(key).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Whom the notification goes to: the subscriber's tokens as OneSignal player (subscription) ids,
 * or, for an integration whose apiVersion is "externalId" (OneSignal's user model), as the
 * external ids of its users, as Novu targets them.
 */
const targetOf = (message: PushMessage, byExternalId: boolean) =>
  byExternalId ? { include_aliases: { external_id: message.tokens }, target_channel: "push" } : { include_player_ids: message.tokens };

/** The notification as Novu builds it. */
function notificationBody(message: PushMessage, appId: string, idempotencyKey: string, byExternalId: boolean): Record<string, unknown> {
  const { sound, ...overrides } = providerOverrides(message);
  const icon = overrides.icon;
  return {
    app_id: appId,
    ...targetOf(message, byExternalId),
    headings: { en: message.title },
    contents: { en: message.content },
    ...(overrides.subtitle === undefined ? {} : { subtitle: { en: overrides.subtitle } }),
    data: message.payload,
    ios_badgeType: "Increase",
    ios_badgeCount: 1,
    ios_sound: sound,
    android_sound: sound,
    mutable_content: overrides.mutableContent,
    android_channel_id: overrides.channelId,
    small_icon: icon,
    large_icon: icon,
    chrome_icon: icon,
    firefox_icon: icon,
    ios_category: overrides.categoryId,
    idempotency_key: uuidOf(idempotencyKey),
  };
}

/** OneSignal's fields that snake_case does not spell, by what it makes of them (as Novu names them). */
const ONE_SIGNAL_SPELLING: Spelling = {
  case: "snake",
  names: {
    is_ios: "isIos",
    is_android: "isAndroid",
    is_huawei: "isHuawei",
    is_any_web: "isAnyWeb",
    is_chrome_web: "isChromeWeb",
    is_firefox: "isFirefox",
    is_safari: "isSafari",
    is_wp_wns: "isWP_WNS",
    is_adm: "isAdm",
    is_chrome: "isChrome",
    ios_badge_type: "ios_badgeType",
    ios_badge_count: "ios_badgeCount",
  },
};

export const oneSignal: ProviderFactory = () => ({
  id: ID,
  channel: "push",
  idempotent: true,
  async send(message: PushMessage, context: SendContext): Promise<SendResult> {
    requireTokens(ID, message);
    const { apiKey, applicationId, baseUrl, apiVersion } = context.credentials;
    const byExternalId = apiVersion === "externalId";
    if (!apiKey) throw missingSetting(ID, "apiKey");
    if (!applicationId) throw missingSetting(ID, "applicationId");
    // App API keys of the current kind go with the `Key` scheme; legacy REST API keys with `Basic`.
    const authorization = apiKey.startsWith("os_v2_") ? `Key ${apiKey}` : `Basic ${apiKey}`;
    const { url, body, headers } = withProviderData(
      {
        url: `${trimSlash(baseUrl ?? DEFAULT_BASE)}/notifications`,
        body: notificationBody(message, applicationId, context.idempotencyKey, byExternalId),
        headers: { authorization },
      },
      context.providerData,
      ONE_SIGNAL_SPELLING,
    );
    const answer = await postJson<{ id?: unknown; errors?: unknown }>(ID, context.http, url, body, headers);
    // Only player ids are device tokens: an external id OneSignal does not know is a user's, not a dead device.
    const reported = byExternalId ? undefined : objectOf(answer.errors)?.invalid_player_ids;
    const invalidTokens = Array.isArray(reported) ? reported.filter((token): token is string => typeof token === "string") : [];
    const id = stringOf(answer.id);
    // An answer without an id created nothing: none of the tokens is subscribed.
    if (!id) {
      throw new ProviderError(`${ID}: no notification was created: ${JSON.stringify(answer.errors ?? null).slice(0, 2000)}`, {
        transient: false,
        ...(invalidTokens.length > 0 ? { invalidTokens } : {}),
      });
    }
    return { id, ...(invalidTokens.length > 0 ? { invalidTokens } : {}) };
  },
});
