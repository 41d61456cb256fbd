import type { connectionsV1, subscribersV1 } from "@notify/proto";
import { z } from "zod";
import { connectionMode, connectionResponse, connectionToJson } from "./channel-connections.js";
import { endpointResponse, endpointToJson } from "./channel-endpoints.js";
import { cursorPageResponse } from "./common.js";

// The Inbox's view of channel connections and endpoints (@novu/js `channelConnections`,
// `channelEndpoints`): what the client's types name, never a grant's tokens or another
// subscriber's id.

/** GET /v1/inbox/channel-connections/{identifier}: which kind of connection is asked for. */
export const inboxConnectionQuery = z.object({ connectionMode: connectionMode.optional() });

export function inboxConnectionToJson(connection: connectionsV1.ChannelConnection) {
  const { identifier, workspace, createdAt } = connectionToJson(connection);
  return { identifier, workspace, createdAt };
}

export const inboxConnectionResponse = connectionResponse.pick({ identifier: true, workspace: true, createdAt: true }).meta({ id: "InboxChannelConnection" });

export const inboxConnectionPageResponse = cursorPageResponse(inboxConnectionResponse);

export function inboxEndpointToJson(endpoint: subscribersV1.ChannelEndpoint) {
  const { identifier, type } = endpointToJson(endpoint);
  return { identifier, type };
}

export const inboxEndpointResponse = endpointResponse.pick({ identifier: true, type: true }).meta({ id: "InboxChannelEndpoint" });

export const inboxEndpointPageResponse = cursorPageResponse(inboxEndpointResponse);
