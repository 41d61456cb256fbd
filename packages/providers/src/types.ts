import type { integrationsV1 } from "@notify/proto";
import type { OutboundHttp } from "./outbound.js";

/** The channels that leave the system through a provider. */
export type DeliveryChannel = "email" | "sms" | "chat" | "push";

/**
 * An integration's settings as the integrations service keeps them (the spec's IntegrationCredentials),
 * TLS options as a plain object. Every field is optional: each provider says which ones it needs
 * and refuses to send without them.
 */
export type ProviderCredentials = Omit<integrationsV1.IntegrationCredentials, "$typeName" | "$unknown" | "tlsOptions"> & {
  tlsOptions?: Readonly<Record<string, unknown>> | undefined;
};

export interface Attachment {
  name: string;
  content: Uint8Array;
  mime?: string | undefined;
}

export interface EmailMessage {
  to: string[];
  cc?: string[] | undefined;
  bcc?: string[] | undefined;
  /** Overrides the integration's `from` / `senderName` (trigger `overrides.email`). */
  from?: string | undefined;
  senderName?: string | undefined;
  replyTo?: string | undefined;
  subject: string;
  html: string;
  /** The plain-text alternative of `html`. */
  text: string;
  attachments: Attachment[];
  /** Extra header lines (trigger `overrides.email.headers`), each name a token and each value one line. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** What a provider's own templates read (trigger `overrides.email.customData`). */
  customData?: Readonly<Record<string, unknown>> | undefined;
  /** Overrides the integration's `ipPoolName` (trigger `overrides.email.ipPoolName`). */
  ipPoolName?: string | undefined;
  /** What the mail was sent for, which Novu's SendGrid mails name in their category and custom args. */
  notification?: SentFor | undefined;
}

export interface SentFor {
  messageId: string;
  transactionId: string;
  /** The caller's subscriberId. */
  subscriberId: string;
  workflowIdentifier?: string | undefined;
}

export interface SmsMessage {
  to: string;
  content: string;
  /** Overrides the integration's `from` (trigger `overrides.sms.from`). */
  from?: string | undefined;
  /** The message sent: a generic SMS gateway gets it as Novu's `id`. */
  messageId?: string | undefined;
  /** Trigger `overrides.sms.customData`, for a generic SMS gateway. */
  customData?: Record<string, unknown> | undefined;
}

export interface ChatMessage {
  /** The subscriber's channel webhook (most chat providers post to it). */
  webhookUrl?: string | undefined;
  /** A channel name where the provider takes one (mattermost's `channel`). */
  channel?: string | undefined;
  /** The subscriber's phone (whatsapp-business). */
  phone?: string | undefined;
  /** A Slack or Teams channel or user id (a channel endpoint), posted to through its channel connection. */
  conversation?: string | undefined;
  /** `conversation` is a person, not a channel (Teams opens a conversation with them first). */
  direct?: boolean | undefined;
  /** The team of a Teams channel. */
  teamId?: string | undefined;
  /** The channel connection's token: a secret, redacted from whatever a failure says. */
  accessToken?: string | undefined;
  /** The channel connection's workspace (Slack's team, Teams' customer tenant). */
  workspaceId?: string | undefined;
  content: string;
  /** Provider-native rich content when the step has it (Slack blocks, a Teams card, …). */
  blocks?: readonly unknown[] | undefined;
  title?: string | undefined;
  /** The trigger's chat overrides (`overrides.chat`, then `overrides.<providerId>`), as Novu passes them as customData. */
  customData?: Readonly<Record<string, unknown>> | undefined;
}

export interface PushMessage {
  /** Device tokens (or provider subscriber ids) of one subscriber channel. */
  tokens: string[];
  title: string;
  content: string;
  /** The trigger's payload, delivered as the notification's data. */
  payload: Readonly<Record<string, unknown>>;
  /** `overrides.<provider id>` / `overrides.push` of the trigger, merged into the provider's request as Novu does. */
  overrides: Readonly<Record<string, unknown>>;
  /** The subscriber's profile (Novu's subscriber fields: `_id`, `subscriberId`, `firstName`, `email`, `data`, …). */
  subscriber: Readonly<Record<string, unknown>> & { subscriberId: string };
  /** After a digest, the digest as templates read it ({digest, events, total_count}). */
  step?: Readonly<Record<string, unknown>> | undefined;
  /** The notify message this send delivers. */
  messageId?: string | undefined;
}

export interface MessageByChannel {
  email: EmailMessage;
  sms: SmsMessage;
  chat: ChatMessage;
  push: PushMessage;
}

export interface SendContext {
  /** The integration whose credentials these are: providers that keep connections key them by it. */
  integrationId: string;
  credentials: ProviderCredentials;
  /** The integration's settings that are not credentials, as far as a send uses them. */
  configurations?: SendConfigurations | undefined;
  /** Every HTTP call a provider makes goes through it (SSRF guard, timeouts, no redirects, size cap). */
  http: OutboundHttp;
  /** The same for every attempt at one message: providers that deduplicate receive it. */
  idempotencyKey: string;
  /**
   * The trigger's overrides for this provider (`overrides.providers.<id>`, and over it
   * `overrides.steps.<stepId>.providers.<id>`), merged into its request by `withProviderData`.
   */
  providerData?: Readonly<Record<string, unknown>> | undefined;
  signal?: AbortSignal | undefined;
}

export interface SendConfigurations {
  /** SES: the configuration set each send names (its events reach SNS through it). */
  configurationSetName?: string | undefined;
}

export interface SendResult {
  /** The provider's id for what it accepted. */
  id?: string | undefined;
  /** Push tokens the provider reported as no longer valid: they are removed from the subscriber. */
  invalidTokens?: string[] | undefined;
}

export interface Provider<C extends DeliveryChannel = DeliveryChannel> {
  readonly id: string;
  readonly channel: C;
  /**
   * Whether the provider deduplicates on `idempotencyKey`, so that a send whose outcome is unknown
   * (a worker died mid-call) may be repeated with the same key.
   */
  readonly idempotent: boolean;
  send(message: MessageByChannel[C], context: SendContext): Promise<SendResult>;
  /**
   * Sets the provider's event webhook to post to `webhookUrl` (Novu's auto-configure), with
   * signed events where the provider signs them; answers the integration's new configurations.
   * Only providers whose API can do it have it. A refusal throws a ProviderError.
   */
  configureEventsWebhook?(webhookUrl: string, context: WebhookSetupContext): Promise<EventsWebhookSetup>;
  /** Releases what the provider keeps between sends (pooled connections). */
  close?(): Promise<void>;
}

export interface WebhookSetupContext {
  credentials: ProviderCredentials;
  http: OutboundHttp;
}

/** A configured event webhook: what to tell the caller, and what the integration's configurations take. */
export interface EventsWebhookSetup {
  message: string;
  configurations: { inboundWebhookEnabled: true; inboundWebhookSigningKey: string };
}

/**
 * A failed send. `transient` failures (timeouts, connection errors, 429, 5xx) are retried within
 * the delivery budget; others are final. `detail` is what the provider answered.
 */
export class ProviderError extends Error {
  readonly transient: boolean;
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;
  /** Push tokens the provider reported invalid before the send failed as a whole: removed all the same. */
  readonly invalidTokens: string[] | undefined;
  constructor(
    message: string,
    options: { transient: boolean; retryAfterMs?: number | undefined; status?: number | undefined; invalidTokens?: string[] | undefined; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProviderError";
    this.transient = options.transient;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
    this.invalidTokens = options.invalidTokens;
  }
}

/** A provider cannot send with these settings (a missing field, say): final, and says which. */
export function missingSetting(providerId: string, field: keyof ProviderCredentials | string): ProviderError {
  return new ProviderError(`${providerId}: the integration has no ${field}`, { transient: false });
}
