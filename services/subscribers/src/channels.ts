import { CHAT_PROVIDER_IDS, PUSH_PROVIDER_IDS, type FieldErrors } from "@notify/runtime";
import type { subscribersV1 } from "@notify/proto";
import type { StoredChannel, StoredCredentials } from "./store.js";

/** The chat and push providers a subscriber channel may name. */
export const CHANNEL_PROVIDERS: ReadonlySet<string> = new Set([...CHAT_PROVIDER_IDS, ...PUSH_PROVIDER_IDS]);

export const MAX_DEVICE_TOKENS = 100;
export const MAX_TOKEN_LENGTH = 4096;
/** Integration identifiers are at most this long in the integrations service. */
const MAX_IDENTIFIER = 255;
/** The other credential strings: room for any URL or chat channel name, not for a payload. */
const MAX_CREDENTIAL_TEXT = 4096;

/** The string credentials that a write replaces when it gives them. */
const REPLACED_FIELDS = ["webhookUrl", "channel", "alertUid", "title", "imageUrl", "state", "externalUrl"] as const;

export interface ChannelWrite {
  providerId: string;
  integrationIdentifier?: string | undefined;
  credentials?: subscribersV1.CredentialsUpdate | undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** The value rules of one credentials write, all failures at once, by public field path. */
export function channelWriteErrors(write: ChannelWrite): FieldErrors {
  const errors: FieldErrors = {};
  const fail = (field: string, message: string, value: string | string[]) => {
    errors[field] = { messages: [message], value };
  };
  if (!CHANNEL_PROVIDERS.has(write.providerId)) fail("providerId", "providerId must be a valid provider ID", write.providerId);
  const identifier = write.integrationIdentifier;
  if (identifier !== undefined && (identifier.trim().length === 0 || identifier.length > MAX_IDENTIFIER)) {
    fail("integrationIdentifier", `integrationIdentifier must be between 1 and ${MAX_IDENTIFIER} characters`, identifier);
  }
  const credentials = write.credentials;
  if (!credentials) return errors;
  for (const field of REPLACED_FIELDS) {
    const value = credentials[field];
    if (value !== undefined && value.length > MAX_CREDENTIAL_TEXT) {
      fail(`credentials.${field}`, `${field} must be at most ${MAX_CREDENTIAL_TEXT} characters`, value);
    }
  }
  if (credentials.webhookUrl !== undefined && !isHttpUrl(credentials.webhookUrl)) {
    fail("credentials.webhookUrl", "webhookUrl must be an absolute http(s) URL", credentials.webhookUrl);
  }
  const tokens = credentials.deviceTokens?.tokens;
  if (tokens) {
    if (tokens.length > MAX_DEVICE_TOKENS) {
      fail("credentials.deviceTokens", `deviceTokens must contain no more than ${MAX_DEVICE_TOKENS} elements`, tokens);
    } else if (tokens.some((token) => token.length === 0 || token.length > MAX_TOKEN_LENGTH)) {
      fail("credentials.deviceTokens", `each device token must be between 1 and ${MAX_TOKEN_LENGTH} characters`, tokens);
    }
  }
  return errors;
}

/** The error of a merge that would leave the channel with too many tokens. */
export function tokenLimitErrors(channel: StoredChannel): FieldErrors {
  const count = channel.credentials.deviceTokens.length;
  if (count <= MAX_DEVICE_TOKENS) return {};
  return {
    "credentials.deviceTokens": {
      messages: [`a channel holds at most ${MAX_DEVICE_TOKENS} device tokens (this write would make ${count}); replace or clear them first`],
    },
  };
}

/** `first` followed by the tokens of `second` it lacks, each once. */
const union = (first: readonly string[], second: readonly string[]) => [...new Set([...first, ...second])];

function mergeCredentials(stored: StoredCredentials, update: subscribersV1.CredentialsUpdate | undefined, replaceTokens: boolean): StoredCredentials {
  const merged: StoredCredentials = { ...stored };
  for (const field of REPLACED_FIELDS) {
    const value = update?.[field];
    if (value !== undefined) merged[field] = value;
  }
  const given = update?.deviceTokens?.tokens;
  if (given) merged.deviceTokens = replaceTokens || given.length === 0 ? union([], given) : union(stored.deviceTokens, given);
  return merged;
}

/**
 * The subscriber's channels after a write bound to `integrationId`: the channel of the same
 * provider and integration is merged in place, or a new one is appended. Also answers that channel.
 */
export function mergeChannel(
  channels: readonly StoredChannel[],
  write: ChannelWrite,
  integrationId: string,
  replaceTokens: boolean,
): { channels: StoredChannel[]; merged: StoredChannel } {
  const index = channels.findIndex((channel) => channel.providerId === write.providerId && channel.integrationId === integrationId);
  const existing = channels[index];
  const identifier = write.integrationIdentifier ?? existing?.integrationIdentifier;
  const next: StoredChannel = {
    providerId: write.providerId,
    integrationId,
    ...(identifier !== undefined ? { integrationIdentifier: identifier } : {}),
    credentials: mergeCredentials(existing?.credentials ?? { deviceTokens: [] }, write.credentials, replaceTokens),
  };
  return {
    channels: existing ? channels.map((channel, position) => (position === index ? next : channel)) : [...channels, next],
    merged: next,
  };
}

/** The subscriber's channels without those of `providerId`. */
/** The channels with these tokens gone from the channel bound to `integrationId`. */
export function withoutTokens(channels: readonly StoredChannel[], integrationId: string, tokens: ReadonlySet<string>): StoredChannel[] {
  return channels.map((channel) =>
    channel.integrationId === integrationId
      ? { ...channel, credentials: { ...channel.credentials, deviceTokens: channel.credentials.deviceTokens.filter((token) => !tokens.has(token)) } }
      : channel,
  );
}

export const withoutProvider = (channels: readonly StoredChannel[], providerId: string) => channels.filter((channel) => channel.providerId !== providerId);

/** "credentials.webhookUrl: webhookUrl must be …; providerId: …", for skipped batch entries. */
export const describeErrors = (errors: FieldErrors) =>
  Object.entries(errors)
    .map(([field, entry]) => `${field}: ${entry.messages.join(", ")}`)
    .join("; ");
