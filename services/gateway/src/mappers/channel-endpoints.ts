import type { MessageInitShape } from "@bufbuild/protobuf";
import type { subscribersV1 } from "@notify/proto";
import { z } from "zod";
import { keyString, outboundUrl } from "../validation.js";
import { channelListQuery, channelListRequestOf } from "./channel-lists.js";
import { cursorPageResponse, iso, isoDateResponse } from "./common.js";
import { contextBody } from "./context-inputs.js";
import { flag } from "./workflows.js";

/**
 * The endpoint data of each type notify sends to, as Novu checks it: exactly these string fields.
 * A webhook's URL is vetted against the outbound policy when written, as every destination is.
 */
const ENDPOINT_SHAPES = {
  slack_channel: z.strictObject({ channelId: keyString("channelId") }),
  slack_user: z.strictObject({ userId: keyString("userId") }),
  ms_teams_channel: z.strictObject({ teamId: keyString("teamId"), channelId: keyString("channelId") }),
  ms_teams_user: z.strictObject({ userId: keyString("userId") }),
  webhook: z.strictObject({ url: outboundUrl("url"), channel: keyString("channel").optional() }),
  phone: z.strictObject({ phoneNumber: keyString("phoneNumber") }),
};

export type EndpointType = keyof typeof ENDPOINT_SHAPES;

/**
 * Which providers send to each type: Slack's and Teams' bot APIs for their channels and users,
 * WhatsApp to a phone, any other chat provider to a webhook.
 */
export function typeFitsProvider(type: EndpointType, providerId: string): boolean {
  if (type === "slack_channel" || type === "slack_user") return providerId === "slack";
  if (type === "ms_teams_channel" || type === "ms_teams_user") return providerId === "msteams";
  if (type === "phone") return providerId === "whatsapp-business";
  return providerId !== "whatsapp-business";
}

const common = {
  identifier: keyString("identifier").optional(),
  subscriberId: keyString("subscriberId"),
  createSubscriberIfMissing: flag("createSubscriberIfMissing").optional(),
  context: contextBody.optional(),
  integrationIdentifier: keyString("integrationIdentifier"),
  connectionIdentifier: keyString("connectionIdentifier").optional(),
};

/** POST /v1/channel-endpoints: the type decides the endpoint's shape. */
export const createEndpointBody = z.discriminatedUnion(
  "type",
  [
    z.object({ ...common, type: z.literal("slack_channel"), endpoint: ENDPOINT_SHAPES.slack_channel }),
    z.object({ ...common, type: z.literal("slack_user"), endpoint: ENDPOINT_SHAPES.slack_user }),
    z.object({ ...common, type: z.literal("ms_teams_channel"), endpoint: ENDPOINT_SHAPES.ms_teams_channel }),
    z.object({ ...common, type: z.literal("ms_teams_user"), endpoint: ENDPOINT_SHAPES.ms_teams_user }),
    z.object({ ...common, type: z.literal("webhook"), endpoint: ENDPOINT_SHAPES.webhook }),
    z.object({ ...common, type: z.literal("phone"), endpoint: ENDPOINT_SHAPES.phone }),
  ],
  { error: `type must be one of ${Object.keys(ENDPOINT_SHAPES).join(", ")}` },
);

/** PATCH /v1/channel-endpoints/{identifier}: new data of the endpoint's own type (checked once the type is known). */
export const updateEndpointBody = z.object({ endpoint: z.union(Object.values(ENDPOINT_SHAPES), { error: "endpoint must be an object" }) });

/** The data's shape for an existing endpoint's type, as a 400 names it when it does not fit (as Novu answers). */
export function endpointFitsType(type: string, endpoint: unknown): boolean {
  const shape = ENDPOINT_SHAPES[type as EndpointType];
  return shape?.safeParse(endpoint).success === true;
}

export const endpointIdentifierParam = z.object({ identifier: keyString("identifier") });

/** GET /v1/channel-endpoints: Novu's cursor paging and filters, and the connection an endpoint names. */
export const listEndpointsQuery = channelListQuery.extend({ connectionIdentifier: keyString("connectionIdentifier").optional() });

export const listEndpointsRequestOf = (
  query: z.output<typeof listEndpointsQuery>,
): MessageInitShape<typeof subscribersV1.ListChannelEndpointsRequestSchema> => ({
  ...channelListRequestOf(query),
  ...(query.connectionIdentifier ? { connectionIdentifier: query.connectionIdentifier } : {}),
});

// Responses

/** An endpoint as Novu answers one (GetChannelEndpointResponseDto). */
export function endpointToJson(endpoint: subscribersV1.ChannelEndpoint) {
  return {
    identifier: endpoint.identifier,
    channel: endpoint.channel,
    providerId: endpoint.providerId,
    integrationIdentifier: endpoint.integrationIdentifier,
    connectionIdentifier: endpoint.connectionIdentifier ?? null,
    subscriberId: endpoint.subscriberId,
    contextKeys: endpoint.contextKeys,
    type: endpoint.type,
    endpoint: endpoint.endpoint ?? {},
    createdAt: iso(endpoint.createdAt),
    updatedAt: iso(endpoint.updatedAt),
  };
}

export const endpointResponse = z
  .object({
    identifier: z.string(),
    channel: z.string(),
    providerId: z.string(),
    integrationIdentifier: z.string(),
    connectionIdentifier: z.string().nullable(),
    subscriberId: z.string(),
    contextKeys: z.array(z.string()),
    type: z.enum(Object.keys(ENDPOINT_SHAPES) as [EndpointType, ...EndpointType[]]),
    endpoint: z.record(z.string(), z.string()),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "ChannelEndpoint" });

export const endpointPageResponse = cursorPageResponse(endpointResponse);
