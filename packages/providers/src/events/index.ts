import { emailEventReaders } from "./email.js";
import { smsEventReaders } from "./sms.js";
import { type EventReader, type InboundWebhook, type ProviderEvent, WebhookRefused } from "./types.js";

export * from "./types.js";

const readers = new Map<string, EventReader>([...emailEventReaders, ...smsEventReaders].map((reader) => [reader.providerId, reader]));

function parsedBody(providerId: string, webhook: InboundWebhook): unknown {
  const text = webhook.body.toString("utf8");
  if (/^application\/x-www-form-urlencoded\b/i.test(webhook.contentType)) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    throw new WebhookRefused("body", `${providerId}: the body is neither JSON nor a form`);
  }
}

/**
 * The events of a provider's webhook request. With a signing key, the request must carry the
 * provider's valid signature; a provider that does not sign its webhooks cannot be held to a key,
 * so its requests are refused rather than taken unchecked. Without a key, nothing is checked, as
 * Novu does.
 */
export function readProviderEvents(providerId: string, webhook: InboundWebhook, signingKey: string | undefined): ProviderEvent[] {
  const reader = readers.get(providerId);
  if (!reader) throw new WebhookRefused("unsupported", `notify does not read ${providerId}'s webhooks`);
  const body = parsedBody(providerId, webhook);
  if (signingKey) {
    if (!reader.verify)
      throw new WebhookRefused(
        "signature",
        `${providerId} does not sign its webhooks: remove the integration's inboundWebhookSigningKey to take them unsigned`,
      );
    reader.verify(webhook, body, signingKey);
  }
  return reader.read(body);
}
