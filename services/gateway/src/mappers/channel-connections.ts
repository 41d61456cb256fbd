import type { MessageInitShape } from "@bufbuild/protobuf";
import { connectionsV1 } from "@notify/proto";
import { z } from "zod";
import { keyString } from "../validation.js";
import { channelListQuery, channelListRequestOf } from "./channel-lists.js";
import { cursorPageResponse, iso, isoDateResponse } from "./common.js";
import { contextBody } from "./context-inputs.js";

// Requests (who holds a connection, and whether its integration exists, are the service's rules)

/** OAuth tokens are short; a JWT-shaped one is a few KiB at most. */
const MAX_TOKEN = 8192;

const token = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .min(1, `${name} should not be empty`)
    .max(MAX_TOKEN, `${name} must be shorter than or equal to ${MAX_TOKEN} characters`);

/** An instant as an OAuth grant's expiry is written: an ISO 8601 date, or date and time. */
const expiry = (name: string) => z.union([z.iso.datetime({ offset: true, local: true }), z.iso.date()], { error: `${name} must be an ISO 8601 date` });

/** Novu's WorkspaceDto. */
const workspaceBody = z.object(
  { id: keyString("id"), name: keyString("name").optional(), botUserId: keyString("botUserId").optional() },
  { error: "workspace must be an object" },
);

/** Novu's AuthDto. */
const authBody = z.object(
  {
    accessToken: token("accessToken"),
    refreshToken: token("refreshToken").optional(),
    expiresAt: expiry("expiresAt").optional(),
    refreshTokenExpiresAt: expiry("refreshTokenExpiresAt").optional(),
  },
  { error: "auth must be an object" },
);

/** How a connection is held: by a subscriber, or shared by its contexts' workspace. */
export const connectionMode = z.enum(["subscriber", "shared"], { error: "connectionMode must be one of: subscriber, shared" });
export type ConnectionMode = z.output<typeof connectionMode>;

const MODES = { subscriber: connectionsV1.ConnectionMode.SUBSCRIBER, shared: connectionsV1.ConnectionMode.SHARED } as const;

const modeOf = (mode: ConnectionMode | undefined) => (mode === undefined ? connectionsV1.ConnectionMode.UNSPECIFIED : MODES[mode]);

/** POST /v1/channel-connections (CreateChannelConnectionRequestDto). */
export const createConnectionBody = z.object({
  identifier: keyString("identifier").optional(),
  subscriberId: keyString("subscriberId").optional(),
  context: contextBody.optional(),
  connectionMode: connectionMode.optional(),
  integrationIdentifier: keyString("integrationIdentifier"),
  workspace: workspaceBody,
  auth: authBody,
});

/** PATCH /v1/channel-connections/{identifier} (UpdateChannelConnectionRequestDto): both replaced. */
export const updateConnectionBody = z.object({ workspace: workspaceBody, auth: authBody });

export const connectionIdentifierParam = z.object({ identifier: keyString("identifier") });

/** GET /v1/channel-connections: Novu's cursor paging and filters, and how a connection is held. */
export const listConnectionsQuery = channelListQuery.extend({ connectionMode: connectionMode.optional() });

type Grant = z.output<typeof updateConnectionBody>;

/** The object without its undefined fields: the proto and JSON shapes leave absent ones out. */
function definedOnly<T extends object>(value: T) {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** The workspace and grant as the service takes them. */
const grantOf = ({ workspace, auth }: Grant) => ({ workspace: definedOnly(workspace), auth: definedOnly(auth) });

export function createConnectionRequestOf(body: z.output<typeof createConnectionBody>, contextKeys: string[]) {
  return {
    identifier: body.identifier ?? "",
    contextKeys,
    connectionMode: modeOf(body.connectionMode),
    integrationIdentifier: body.integrationIdentifier,
    ...(body.subscriberId !== undefined ? { subscriberId: body.subscriberId } : {}),
    ...grantOf(body),
  };
}

export const updateConnectionRequestOf = (identifier: string, body: Grant) => ({ identifier, ...grantOf(body) });

export const listConnectionsRequestOf = (
  query: z.output<typeof listConnectionsQuery>,
): MessageInitShape<typeof connectionsV1.ListChannelConnectionsRequestSchema> => ({
  ...channelListRequestOf(query),
  connectionMode: modeOf(query.connectionMode),
});

// Responses

/**
 * A connection as Novu answers one (GetChannelConnectionResponseDto), except its tokens: the
 * service answers them masked, as notify answers every secret.
 */
export function connectionToJson(connection: connectionsV1.ChannelConnection) {
  const { workspace, auth } = connection;
  return {
    identifier: connection.identifier,
    channel: connection.channel,
    providerId: connection.providerId,
    integrationIdentifier: connection.integrationIdentifier,
    subscriberId: connection.subscriberId ?? null,
    contextKeys: connection.contextKeys,
    workspace: definedOnly({ id: workspace?.id ?? "", name: workspace?.name, botUserId: workspace?.botUserId }),
    auth: definedOnly({
      accessToken: auth?.accessToken ?? "",
      refreshToken: auth?.refreshToken,
      expiresAt: auth?.expiresAt,
      refreshTokenExpiresAt: auth?.refreshTokenExpiresAt,
    }),
    createdAt: iso(connection.createdAt),
    updatedAt: iso(connection.updatedAt),
  };
}

export const connectionResponse = z
  .object({
    identifier: z.string(),
    channel: z.string(),
    providerId: z.string(),
    integrationIdentifier: z.string(),
    subscriberId: z.string().nullable(),
    contextKeys: z.array(z.string()),
    workspace: z.object({ id: z.string(), name: z.string().optional(), botUserId: z.string().optional() }),
    auth: z
      .object({
        accessToken: z.string().describe("Always masked"),
        refreshToken: z.string().optional().describe("Always masked"),
        expiresAt: z.string().optional(),
        refreshTokenExpiresAt: z.string().optional(),
      })
      .describe("The OAuth grant; its tokens are never answered, only the mask ••••••••"),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "ChannelConnection" });

export const connectionPageResponse = cursorPageResponse(connectionResponse);
