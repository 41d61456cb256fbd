import { Code } from "@connectrpc/connect";
import type { connectionsV1 } from "@notify/proto";
import type { z } from "zod";
import type { Clients } from "./clients.js";
import { HttpError, isCode } from "./errors.js";
import { createConnectionRequestOf, type createConnectionBody } from "./mappers/channel-connections.js";
import type { RouteCall } from "./route.js";

/**
 * Makes a channel connection as Novu does: the subscriber it is for must exist (404) unless the
 * connection is shared (which keeps no subscriber). `contextKeys` gives the keys of its contexts
 * once that check passed (the API makes those its body names, as a trigger's are). The
 * integrations process checks the mode, finds the integration by its identifier (404) and refuses
 * a taken identifier or scope (409).
 */
export async function createConnection(
  body: z.output<typeof createConnectionBody>,
  contextKeys: () => Promise<string[]>,
  clients: Clients,
  call: RouteCall,
): Promise<connectionsV1.ChannelConnection> {
  const { subscriberId } = body;
  if (subscriberId !== undefined && body.connectionMode !== "shared") {
    await clients.batched.getSubscriber(subscriberId, call).catch((error: unknown) => {
      throw isCode(error, Code.NotFound) ? new HttpError(404, `Subscriber not found: ${subscriberId}`) : error;
    });
  }
  return clients.channelConnections.createChannelConnection(createConnectionRequestOf(body, await contextKeys()), call);
}
