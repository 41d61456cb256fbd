import type { WebhookSetupAnswer, WebhookSetupRequest } from "@notify/providers/events";
import type { NatsConnection, Scope } from "@notify/runtime";
import { HttpError } from "./errors.js";
import { askWorker } from "./worker-requests.js";

/** How long the worker may take: it makes several calls to the provider's API. */
const SETUP_TIMEOUT_MS = 30_000;

/** Sets up an integration's event webhook (Novu's auto-configure), through a worker. */
export type WebhookSetups = (scope: Scope, integrationId: string) => Promise<Exclude<WebhookSetupAnswer, { unavailable: string }>>;

/**
 * Event webhooks set up by a worker over NATS, the worker being the only process that reaches the
 * internet, to post to `publicUrl`'s inbound webhook of the integration. The worker or NATS out of
 * reach is a 503.
 */
export function webhookSetupsOver(nats: () => NatsConnection | undefined, subject: string, publicUrl: string | undefined): WebhookSetups {
  const unavailable = (why: string) => new HttpError(503, `The event webhook could not be set up now (${why}); try again later`);
  return async (scope, integrationId) => {
    const request: WebhookSetupRequest = {
      ...scope,
      integrationId,
      ...(publicUrl ? { webhookUrl: `${publicUrl.replace(/\/+$/, "")}/v2/inbound-webhooks/delivery-providers/${scope.environmentId}/${integrationId}` } : {}),
    };
    const answer = await askWorker<WebhookSetupAnswer>(nats, subject, request, SETUP_TIMEOUT_MS, unavailable);
    if ("unavailable" in answer) throw unavailable(answer.unavailable);
    return answer;
  };
}
