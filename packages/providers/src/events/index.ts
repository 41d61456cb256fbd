import { emailEventReaders } from "./email.js";
import { smsEventReaders } from "./sms.js";
import { type SnsEndpoints, verifiedSnsMessage } from "./sns.js";
import { type EventReader, type InboundWebhook, type ProviderEvent, WebhookRefused } from "./types.js";

export * from "./sns.js";
export * from "./webhook-setup.js";
export * from "./types.js";

const readers = new Map<string, EventReader>([...emailEventReaders, ...smsEventReaders].map((reader) => [reader.providerId, reader]));

/** Whether notify reads the webhooks of a provider (Novu's "webhook support" of an integration). */
export function readsWebhooksOf(providerId: string): boolean {
  return readers.has(providerId);
}

function parsedBody(providerId: string, webhook: InboundWebhook): unknown {
  const text = webhook.body.toString("utf8");
  if (/^application\/x-www-form-urlencoded\b/i.test(webhook.contentType)) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    throw new WebhookRefused("body", `${providerId}: the body is neither JSON nor a form`);
  }
}

/** What reading a webhook may need besides the request. */
export interface WebhookContext {
  /** The integration's inboundWebhookSigningKey. */
  signingKey?: string | undefined;
  /** The integration's AWS region: an SNS topic must be in it. */
  region?: string | undefined;
  /** Certificates and subscription confirmations of SNS deliveries. */
  sns: SnsEndpoints;
}

/**
 * The events of a provider's webhook request. With a signing key, the request must carry the
 * provider's valid signature; a provider that does not sign its webhooks cannot be held to a key,
 * so its requests are refused rather than taken unchecked. Without a key, nothing is checked, as
 * Novu does. SNS deliveries (ses) are always checked, as Novu checks them, and an SNS
 * subscription confirmation is answered by confirming the subscription.
 */
export async function readProviderEvents(providerId: string, webhook: InboundWebhook, context: WebhookContext): Promise<ProviderEvent[]> {
  const reader = readers.get(providerId);
  if (!reader) throw new WebhookRefused("unsupported", `notify does not read ${providerId}'s webhooks`);
  const body = parsedBody(providerId, webhook);
  if (reader.viaSns) {
    const message = await verifiedSnsMessage(body, context.sns, context.region);
    if (message.Type === "SubscriptionConfirmation") await context.sns.confirm(message.SubscribeURL!);
    return message.Type === "Notification" ? reader.read(message) : [];
  }
  const { signingKey } = context;
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
