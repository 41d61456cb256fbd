import { registeredProviders } from "@notify/providers";
import { readProviderEvents, readsWebhooksOf, WebhookRefused, type ProviderEvent } from "@notify/providers/events";
import type { z } from "zod";
import { HttpError } from "./errors.js";
import { integrationToJson, refuseForProvider, type integrationIdParam } from "./mappers/integrations.js";
import { providerEventMessageOf, webhookResultToJson, type inboundWebhookParams } from "./mappers/provider-events.js";
import type { PublicRouteInput, RawRequest, RouteInput } from "./route.js";

/** Events recorded per call: a provider's batch may hold more than the messages service takes at once. */
const EVENTS_PER_CALL = 500;

const REFUSAL_STATUS = { unsupported: 404, signature: 401, body: 400 } as const;

/**
 * A delivery provider's webhook (Novu's inbound webhooks): the provider posts what became of the
 * messages it accepted, to a URL naming the environment and the integration. No API key: the
 * integration must have inbound webhooks enabled, and the provider's signature must hold when the
 * integration has a signing key (always, for SNS's deliveries of SES events). Events are kept as
 * their messages' execution details; those naming no message this integration's provider sent in
 * the environment are left out.
 */
export async function receiveProviderEvents({
  params,
  body,
  accounts,
  clients,
  callAs,
}: PublicRouteInput<z.output<typeof inboundWebhookParams>, unknown, RawRequest>) {
  const environment = await accounts.environments.byId(params.environmentId);
  if (!environment) throw new HttpError(404, `Environment not found: ${params.environmentId}`);
  const call = callAs({ organizationId: environment.organizationId, environmentId: environment.id });
  const integration = await clients.integrations.getIntegration({ id: params.integrationId }, call);
  const { inboundWebhookEnabled, inboundWebhookSigningKey } = integration.configurations ?? {};
  if (inboundWebhookEnabled !== true)
    throw new HttpError(403, `Inbound webhooks are not enabled for integration ${params.integrationId}: set configurations.inboundWebhookEnabled`);
  let events: ProviderEvent[];
  try {
    events = await readProviderEvents(integration.providerId, body, {
      signingKey: inboundWebhookSigningKey,
      region: integration.credentials?.region,
      sns: clients.sns,
    });
  } catch (error) {
    if (error instanceof WebhookRefused) throw new HttpError(REFUSAL_STATUS[error.reason], error.message);
    throw error;
  }
  const kept: ProviderEvent[] = [];
  for (let start = 0; start < events.length; start += EVENTS_PER_CALL) {
    const part = events.slice(start, start + EVENTS_PER_CALL);
    const { matched } = await clients.messages.recordProviderEvents({ providerId: integration.providerId, events: part.map(providerEventMessageOf) }, call);
    for (const position of matched) kept.push(part[position]!);
  }
  return kept.map(webhookResultToJson);
}

/** Channels whose providers may report events; Novu answers 400 for the others. */
const REPORTING_CHANNELS = new Set(["email", "sms"]);

/**
 * Whether an integration's provider reports events that notify reads (@novu/node's
 * getWebhookProviderStatus): the integration named by its id, or the environment's first one of
 * that provider with credentials, as Novu finds it.
 */
export async function webhookSupport({ params, clients, call }: RouteInput<{ providerOrIntegrationId: string }, unknown, unknown>): Promise<boolean> {
  const key = params.providerOrIntegrationId;
  const { integrations } = await clients.integrations.listIntegrations({}, call);
  const hasCredentials = (integration: (typeof integrations)[number]) =>
    Object.entries(integration.credentials ?? {}).some(([name, value]) => name !== "$typeName" && value !== undefined && value !== "");
  const integration =
    integrations.find((candidate) => candidate.id === key) ?? integrations.find((candidate) => candidate.providerId === key && hasCredentials(candidate));
  if (!integration) throw new HttpError(404, `Integration for ${key} was not found`);
  if (!hasCredentials(integration)) throw new HttpError(400, `Integration ${integration.id} doesn't have credentials set up`);
  if (!REPORTING_CHANNELS.has(integration.channel))
    throw new HttpError(400, `Webhook for ${integration.providerId}-${integration.channel} is not supported yet`);
  return readsWebhooksOf(integration.providerId);
}

/** The providers that can set up their own event webhook, by channel and id. */
const autoConfigurable = new Set(
  registeredProviders()
    .filter((provider) => provider.configuresEventsWebhook)
    .map((provider) => `${provider.channel}/${provider.id}`),
);

/**
 * Novu's auto-configure: a worker sets the integration's provider up to post its events to this
 * gateway's inbound webhook of the integration (GATEWAY_PUBLIC_URL), signed where the provider
 * signs them, and the integration takes the webhook's configurations. A provider whose API cannot
 * do it is refused as Novu refuses it; one that turns it down answers success false, and the
 * integration is left as it was.
 */
export async function autoConfigure({ params, scope, clients, call }: RouteInput<z.infer<typeof integrationIdParam>, unknown, unknown>) {
  const integration = await clients.integrations.getIntegration({ id: params.integrationId }, call);
  // Known here, so a provider that cannot do it is refused whether or not a worker answers.
  if (!autoConfigurable.has(`${integration.channel}/${integration.providerId}`)) refuseForProvider(integration, "Auto-configuration of inbound webhooks");
  const answer = await clients.webhookSetups(scope, integration.id);
  if ("unsupported" in answer) refuseForProvider(integration, "Auto-configuration of inbound webhooks");
  if ("refused" in answer) return { success: false, message: answer.refused };
  // As Novu answers it: the integration as the worker left it, its credentials left out.
  const configured = await clients.integrations.getIntegration({ id: integration.id }, call);
  return { success: true, message: answer.configured, integration: { ...integrationToJson(configured), credentials: {} } };
}
