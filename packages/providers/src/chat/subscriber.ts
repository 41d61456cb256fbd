import { ProviderError, type ChatMessage } from "../types.js";

/**
 * A setting that comes from the subscriber's chat channel rather than the integration (the webhook,
 * the channel, the phone): a final error naming it when the subscriber has none.
 */
export function channelSetting(providerId: string, message: ChatMessage, field: "webhookUrl" | "channel" | "phone"): string {
  const value = message[field];
  if (value === undefined || value.trim() === "") {
    throw new ProviderError(`${providerId}: the subscriber's chat channel has no ${field}`, { transient: false });
  }
  return value;
}
