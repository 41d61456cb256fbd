import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { integrationsV1 } from "@notify/proto";
import type { DeliveryChannel, EventsWebhookSetup, OutboundHttp, Provider, Providers } from "@notify/providers";
import { isWebhookSetupRequest, type WebhookSetupAnswer, type WebhookSetupRequest } from "@notify/providers/events";
import { scopeHeaders, type Logger, type Pool, type Scope } from "@notify/runtime";
import type { NatsConnection } from "nats";
import { answerRequests } from "./requests.js";
import { credentialsOf, redact } from "./send.js";
import * as store from "./store.js";

/** A setup claimed longer ago than this is taken for a dead worker's: far longer than a setup's provider calls take at the default outbound timeout. */
const SETUP_CLAIM_STALE_MS = 10 * 60_000;

export interface WebhookSetupDeps {
  nats: NatsConnection;
  /** The worker's schema: the setups under way. */
  pool: Pool;
  integrations: Pick<Client<typeof integrationsV1.IntegrationService>, "getIntegration" | "updateIntegration">;
  providers: Providers;
  outbound: OutboundHttp;
  log: Logger;
  /** WEBHOOK_SETUP_SUBJECT: where the gateway asks. */
  subject: string;
}

/**
 * Serves the gateway's requests to set up an integration's event webhook (Novu's auto-configure):
 * the integration is read and written here, so neither its credentials nor the signing key the
 * provider answers travel on NATS, and a gateway that stopped waiting does not leave the provider
 * set up and the integration not. The provider is called through the outbound guard. One worker
 * of the queue group answers each request.
 */
export function serveWebhookSetups(deps: WebhookSetupDeps): { stop(): void } {
  async function answer(request: WebhookSetupRequest): Promise<WebhookSetupAnswer> {
    const scope = { organizationId: request.organizationId, environmentId: request.environmentId };
    let integration: integrationsV1.Integration;
    try {
      integration = await deps.integrations.getIntegration({ id: request.integrationId }, { headers: scopeHeaders(scope) });
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) return { refused: `Integration ${request.integrationId} was not found` };
      throw error;
    }
    const provider = deps.providers.get(integration.channel as DeliveryChannel, integration.providerId);
    if (!provider?.configureEventsWebhook) return { unsupported: true };
    const configure = provider.configureEventsWebhook.bind(provider);
    if (!request.webhookUrl) {
      return { refused: "The address providers reach this service at is not known: set GATEWAY_PUBLIC_URL on the gateway" };
    }
    if (!(await store.claimWebhookSetup(deps.pool, integration.id, SETUP_CLAIM_STALE_MS))) {
      return { unavailable: "another setup of this integration is under way" };
    }
    try {
      return await setUp(configure, integration, request.webhookUrl, scope);
    } finally {
      await store.releaseWebhookSetup(deps.pool, integration.id);
    }
  }

  /** Sets the webhook up through the provider's API, then writes what it answered on the integration. */
  async function setUp(
    configure: NonNullable<Provider["configureEventsWebhook"]>,
    integration: integrationsV1.Integration,
    webhookUrl: string,
    scope: Scope,
  ): Promise<WebhookSetupAnswer> {
    const credentials = credentialsOf(integration);
    let setup: EventsWebhookSetup;
    try {
      setup = await configure(webhookUrl, { credentials, http: deps.outbound });
    } catch (error) {
      // Whatever the call came to (an answer refusing it, the guard, no connection) is the provider's refusal.
      const refused = redact(error instanceof Error ? error.message : String(error), credentials);
      deps.log.warn({ environmentId: scope.environmentId, integrationId: integration.id, error: refused }, "event webhook not set up");
      return { refused: `${integration.providerId} could not be configured: ${refused}` };
    }
    // Should this write fail, the caller is told to try again (a 503): a second setup changes nothing at the provider.
    await deps.integrations.updateIntegration({ id: integration.id, configurations: setup.configurations }, { headers: scopeHeaders(scope) });
    deps.log.info({ environmentId: scope.environmentId, integrationId: integration.id, providerId: integration.providerId }, "event webhook set up");
    return { configured: setup.message };
  }

  const answerOrUnavailable = (request: WebhookSetupRequest) =>
    answer(request).catch((failure: unknown): WebhookSetupAnswer => {
      deps.log.warn({ err: failure, integrationId: request.integrationId }, "event webhook setup failed");
      return { unavailable: "a service the setup needs did not answer" };
    });
  return answerRequests(deps.nats, deps.subject, isWebhookSetupRequest, answerOrUnavailable, { refused: "not an event webhook setup request" }, deps.log);
}
