/** What a provider's webhook can say of a message it sent: Novu's EventStatusEnum, in its order. */
export const PROVIDER_EVENT_STATUSES = [
  "opened",
  "rejected",
  "sent",
  "deferred",
  "delivered",
  "bounced",
  "dropped",
  "clicked",
  "blocked",
  "spam",
  "unsubscribed",
  "delayed",
  "complaint",
  "created",
  "accepted",
  "queued",
  "sending",
  "failed",
  "undelivered",
  "dismissed",
] as const;

export type ProviderEventStatus = (typeof PROVIDER_EVENT_STATUSES)[number];

/** One event a provider reported about a message it accepted. */
export interface ProviderEvent {
  /** The id the provider's send answered for the message (what notify kept): how the event finds it. */
  providerMessageId: string;
  status: ProviderEventStatus;
  /** When the provider says it happened, or when it arrived if the provider does not say. */
  occurredAt: Date;
  /** The provider's own id of the event, where it has one. */
  externalId?: string | undefined;
  attempts?: number | undefined;
  /** What the receiving server or the provider said (a bounce's reason, say). */
  response?: string | undefined;
  /** The provider's event as JSON text. */
  raw: string;
}

/** A provider's webhook request, as it arrived. */
export interface InboundWebhook {
  /** The body's bytes: what signatures are computed over. */
  body: Buffer;
  contentType: string;
  /** By lower-case name. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The URL the provider called, as the provider wrote it (Twilio signs it). */
  url: string;
}

export type RefusalReason = "unsupported" | "signature" | "body";

/** A webhook notify will not read: an unknown provider, a signature that does not hold, a body it cannot parse. */
export class WebhookRefused extends Error {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, message: string) {
    super(message);
    this.name = "WebhookRefused";
    this.reason = reason;
  }
}

/** How one provider's webhooks are checked and read. */
export interface EventReader {
  readonly providerId: string;
  /**
   * Throws WebhookRefused("signature") unless the request was signed with `signingKey`. Absent
   * when the provider does not sign its webhooks.
   */
  readonly verify?: ((webhook: InboundWebhook, body: unknown, signingKey: string) => void) | undefined;
  /**
   * Posts through Amazon SNS (ses): every request is an SNS message whose own signature is checked,
   * with or without a signing key, and `read` gets the message once it holds.
   */
  readonly viaSns?: true;
  /** The events of a parsed body; those of kinds notify does not keep are left out. */
  readonly read: (body: unknown) => ProviderEvent[];
}
