import { fieldsOf } from "./fields.js";

/**
 * The gateway's request that a worker set up an integration's event webhook (Novu's
 * auto-configure), made over NATS: the worker is the only process that reaches the internet.
 */
export interface WebhookSetupRequest {
  organizationId: string;
  environmentId: string;
  integrationId: string;
  /** Where the provider is to post its events; unset when the gateway does not know its public address. */
  webhookUrl?: string | undefined;
}

/** Whether a decoded request is a WebhookSetupRequest (anything on NATS may publish to the subject). */
export function isWebhookSetupRequest(value: unknown): value is WebhookSetupRequest {
  const request = fieldsOf(value);
  return (
    typeof request.organizationId === "string" &&
    typeof request.environmentId === "string" &&
    typeof request.integrationId === "string" &&
    (request.webhookUrl === undefined || typeof request.webhookUrl === "string")
  );
}

/**
 * The worker's answer: the webhook set up and the integration's configurations written (what to
 * tell the caller; the signing key stays off NATS); refused, by the provider or for want of a
 * setting (the text, credentials redacted, is for the caller); not something the integration's
 * provider offers; or not done, a service being out of reach.
 */
export type WebhookSetupAnswer = { configured: string } | { refused: string } | { unsupported: true } | { unavailable: string };
