import type { JsonObject } from "@bufbuild/protobuf";
import type { subscribersV1 } from "@notify/proto";
import type { Clients } from "./clients.js";
import { HttpError, validationError } from "./errors.js";
import { endpointFitsType, typeFitsProvider, type createEndpointBody, type updateEndpointBody } from "./mappers/channel-endpoints.js";
import type { RouteCall } from "./route.js";
import type { z } from "zod";

/**
 * Makes a channel endpoint as Novu does: the integration named (404 when the environment has none
 * of that identifier), the connection named (404), the subscriber (404, or made first when asked),
 * and then the keys of its contexts (`contextKeys`; the API makes those it names on first
 * mention). Departing from Novu, an endpoint notify would never send to is refused (422): one on
 * an integration of another channel, or of a type its provider does not take.
 */
export async function createEndpoint(
  body: z.output<typeof createEndpointBody>,
  contextKeys: () => Promise<string[]>,
  clients: Clients,
  call: RouteCall,
): Promise<subscribersV1.ChannelEndpoint> {
  const { integrations } = await clients.integrations.listIntegrations({}, call);
  const integration = integrations.find((candidate) => candidate.identifier === body.integrationIdentifier && !candidate.deleted);
  if (!integration) throw new HttpError(404, `Integration not found: ${body.integrationIdentifier}`);
  if (integration.channel !== "chat") {
    throw validationError({
      integrationIdentifier: { messages: ["channel endpoints are sent through a chat integration"], value: body.integrationIdentifier },
    });
  }
  if (!typeFitsProvider(body.type, integration.providerId)) {
    throw validationError({ type: { messages: [`a ${integration.providerId} integration does not send to a ${body.type} endpoint`], value: body.type } });
  }
  // The connection a Slack endpoint posts with must exist when named (404, as Novu answers).
  if (body.connectionIdentifier !== undefined) await clients.channelConnections.getChannelConnection({ identifier: body.connectionIdentifier }, call);
  if (body.createSubscriberIfMissing) await clients.subscribers.ensureSubscribers({ subscribers: [{ subscriberId: body.subscriberId }] }, call);
  const keys = await contextKeys();
  return clients.subscribers.createChannelEndpoint(
    {
      identifier: body.identifier ?? "",
      subscriberId: body.subscriberId,
      integrationIdentifier: integration.identifier,
      providerId: integration.providerId,
      channel: integration.channel,
      contextKeys: keys,
      type: body.type,
      endpoint: body.endpoint as JsonObject,
      ...(body.connectionIdentifier !== undefined ? { connectionIdentifier: body.connectionIdentifier } : {}),
    },
    call,
  );
}

/** Replaces an endpoint's data, which must fit its type (400 otherwise, as Novu answers). */
export async function updateEndpoint(
  identifier: string,
  body: z.output<typeof updateEndpointBody>,
  clients: Clients,
  call: RouteCall,
): Promise<subscribersV1.ChannelEndpoint> {
  const existing = await clients.subscribers.getChannelEndpoint({ identifier }, call);
  if (!endpointFitsType(existing.type, body.endpoint)) {
    throw new HttpError(400, `Endpoint must match the required format for type ${existing.type}`);
  }
  return clients.subscribers.updateChannelEndpoint({ identifier, endpoint: body.endpoint as JsonObject }, call);
}
