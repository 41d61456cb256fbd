import type { WebhookSetupAnswer, WebhookSetupRequest } from "@notify/providers/events";
import type { NatsConnection, Scope } from "@notify/runtime";
import { JSONCodec } from "nats";
import { HttpError } from "./errors.js";

/** How long the worker may take: it makes several calls to the provider's API. */
const SETUP_TIMEOUT_MS = 30_000;

const codec = JSONCodec<unknown>();

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
    const connection = nats();
    if (!connection) throw unavailable("no NATS connection");
    const request: WebhookSetupRequest = {
      ...scope,
      integrationId,
      ...(publicUrl ? { webhookUrl: `${publicUrl.replace(/\/+$/, "")}/v2/inbound-webhooks/delivery-providers/${scope.environmentId}/${integrationId}` } : {}),
    };
    let answer: WebhookSetupAnswer;
    try {
      answer = codec.decode((await connection.request(subject, codec.encode(request), { timeout: SETUP_TIMEOUT_MS })).data) as WebhookSetupAnswer;
    } catch (error) {
      throw unavailable(error instanceof Error ? error.message : String(error));
    }
    if ("unavailable" in answer) throw unavailable(answer.unavailable);
    return answer;
  };
}
