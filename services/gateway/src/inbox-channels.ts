import type { connectionsV1, subscribersV1 } from "@notify/proto";
import { contextKeysOf } from "@notify/runtime";
import type { z } from "zod";
import { createConnection } from "./channel-connections.js";
import { createEndpoint } from "./channel-endpoints.js";
import type { Clients } from "./clients.js";
import { HttpError } from "./errors.js";
import { listConnectionsRequestOf, type ConnectionMode, type createConnectionBody, type listConnectionsQuery } from "./mappers/channel-connections.js";
import { listEndpointsRequestOf, type createEndpointBody, type listEndpointsQuery } from "./mappers/channel-endpoints.js";
import { cursorPage } from "./mappers/common.js";
import { contextInputsOf, type ContextBody } from "./mappers/context-inputs.js";
import { inboxConnectionToJson, inboxEndpointToJson } from "./mappers/inbox-channels.js";
import type { RouteCall } from "./route.js";
import type { SubscriberSession } from "./sessions.js";

// An Inbox reads and changes the chat connections and endpoints its session stands for: its
// subscriber's own, and the shared (workspace) connections, in exactly the session's contexts, as
// its notifications and topic subscriptions are. Anything else answers as if it did not exist.

const sameKeys = (some: readonly string[], others: readonly string[]) => [...some].sort().join("\n") === [...others].sort().join("\n");

/**
 * 403 when a call names another subscriber or other contexts than its session's: an Inbox acts for
 * one subscriber in one set of contexts, and a call asking for more is refused rather than
 * answered quietly for less.
 */
function checkSessionNames(session: SubscriberSession, named: { subscriberId?: string | undefined; contextKeys?: readonly string[] | undefined }) {
  if (named.subscriberId !== undefined && named.subscriberId !== session.subscriberId) {
    throw new HttpError(403, `An Inbox session acts for its own subscriber only, not ${named.subscriberId}`);
  }
  if (named.contextKeys !== undefined && !sameKeys(named.contextKeys, session.contextKeys)) {
    throw new HttpError(403, "An Inbox session acts in its own contexts only");
  }
}

const bodyContextKeys = (context: ContextBody | undefined) => (context === undefined ? undefined : contextKeysOf(contextInputsOf(context)));

/** The connection, when the session may see it (and it is held as `mode` asks, when given); 404 otherwise. */
async function sessionConnection(
  session: SubscriberSession,
  identifier: string,
  mode: ConnectionMode | undefined,
  clients: Clients,
  call: RouteCall,
): Promise<connectionsV1.ChannelConnection> {
  const connection = await clients.channelConnections.getChannelConnection({ identifier }, call);
  const heldBy = connection.subscriberId;
  const visible = (heldBy === undefined || heldBy === session.subscriberId) && sameKeys(connection.contextKeys, session.contextKeys);
  const modeFits = mode === undefined || (mode === "shared") === (heldBy === undefined);
  if (!visible || !modeFits) throw new HttpError(404, `Channel connection with identifier '${identifier}' not found`);
  return connection;
}

async function sessionEndpoint(session: SubscriberSession, identifier: string, clients: Clients, call: RouteCall): Promise<subscribersV1.ChannelEndpoint> {
  const endpoint = await clients.subscribers.getChannelEndpoint({ identifier }, call);
  if (endpoint.subscriberId !== session.subscriberId || !sameKeys(endpoint.contextKeys, session.contextKeys)) {
    throw new HttpError(404, `Channel endpoint with identifier '${identifier}' not found`);
  }
  return endpoint;
}

export async function listInboxConnections(session: SubscriberSession, query: z.output<typeof listConnectionsQuery>, clients: Clients, call: RouteCall) {
  checkSessionNames(session, query);
  const request = listConnectionsRequestOf({ ...query, subscriberId: session.subscriberId, contextKeys: session.contextKeys });
  const reply = await clients.channelConnections.listChannelConnections({ ...request, includeShared: true }, call);
  return cursorPage(reply.connections.map(inboxConnectionToJson), reply);
}

export async function getInboxConnection(session: SubscriberSession, identifier: string, mode: ConnectionMode | undefined, clients: Clients, call: RouteCall) {
  return inboxConnectionToJson(await sessionConnection(session, identifier, mode, clients, call));
}

/** A connection made from an Inbox is its subscriber's, in its session's contexts. */
export async function createInboxConnection(session: SubscriberSession, body: z.output<typeof createConnectionBody>, clients: Clients, call: RouteCall) {
  checkSessionNames(session, { subscriberId: body.subscriberId, contextKeys: bodyContextKeys(body.context) });
  if (body.connectionMode === "shared") throw new HttpError(403, "An Inbox session makes its subscriber's own connections only");
  const owned = { ...body, subscriberId: session.subscriberId, connectionMode: "subscriber" as const };
  return inboxConnectionToJson(await createConnection(owned, async () => session.contextKeys, clients, call));
}

export async function deleteInboxConnection(session: SubscriberSession, identifier: string, clients: Clients, call: RouteCall) {
  await sessionConnection(session, identifier, undefined, clients, call);
  await clients.channelConnections.deleteChannelConnection({ identifier }, call);
}

export async function listInboxEndpoints(session: SubscriberSession, query: z.output<typeof listEndpointsQuery>, clients: Clients, call: RouteCall) {
  checkSessionNames(session, query);
  const reply = await clients.subscribers.listChannelEndpoints(
    listEndpointsRequestOf({ ...query, subscriberId: session.subscriberId, contextKeys: session.contextKeys }),
    call,
  );
  return cursorPage(reply.endpoints.map(inboxEndpointToJson), reply);
}

export async function getInboxEndpoint(session: SubscriberSession, identifier: string, clients: Clients, call: RouteCall) {
  return inboxEndpointToJson(await sessionEndpoint(session, identifier, clients, call));
}

/** An endpoint made from an Inbox is its subscriber's, in its session's contexts, through a connection the session may see. */
export async function createInboxEndpoint(session: SubscriberSession, body: z.output<typeof createEndpointBody>, clients: Clients, call: RouteCall) {
  checkSessionNames(session, { subscriberId: body.subscriberId, contextKeys: bodyContextKeys(body.context) });
  if (body.connectionIdentifier !== undefined) await sessionConnection(session, body.connectionIdentifier, undefined, clients, call);
  return inboxEndpointToJson(await createEndpoint(body, async () => session.contextKeys, clients, call));
}

export async function deleteInboxEndpoint(session: SubscriberSession, identifier: string, clients: Clients, call: RouteCall) {
  await sessionEndpoint(session, identifier, clients, call);
  await clients.subscribers.deleteChannelEndpoint({ identifier }, call);
}
