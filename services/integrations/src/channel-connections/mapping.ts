import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { connectionsV1 } from "@notify/proto";
import { SECRET_MASK } from "../environment-variables/mapping.js";
import type { SecretBox } from "../secrets.js";
import type { ConnectionGrant, ConnectionRow } from "./store.js";

/** A connection's tokens are sealed with it, so they open in that row only. */
const sealContext = (connectionId: string, environmentId: string) => `channel-connection/${connectionId}/${environmentId}`;

/** The tokens of a grant, as sealed. */
interface SealedTokens {
  accessToken: string;
  refreshToken?: string;
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** The columns of a workspace and a grant, the tokens sealed to the connection's row. */
export function grantColumns(
  secrets: SecretBox,
  connectionId: string,
  environmentId: string,
  workspace: connectionsV1.Workspace,
  auth: connectionsV1.ConnectionAuth,
): ConnectionGrant {
  const tokens: SealedTokens = { accessToken: auth.accessToken, ...(auth.refreshToken !== undefined ? { refreshToken: auth.refreshToken } : {}) };
  return {
    workspace: {
      id: workspace.id,
      ...(workspace.name !== undefined ? { name: workspace.name } : {}),
      ...(workspace.botUserId !== undefined ? { botUserId: workspace.botUserId } : {}),
    },
    auth: {
      ...(auth.expiresAt !== undefined ? { expiresAt: auth.expiresAt } : {}),
      ...(auth.refreshTokenExpiresAt !== undefined ? { refreshTokenExpiresAt: auth.refreshTokenExpiresAt } : {}),
    },
    authSecrets: secrets.seal(tokens as unknown as JsonObject, sealContext(connectionId, environmentId)),
    hasRefreshToken: auth.refreshToken !== undefined,
  };
}

/** The access token of a connection's row, opened. */
function openAccessToken(secrets: SecretBox, row: ConnectionRow): string {
  return text(secrets.open(row.auth_secrets, sealContext(row.id, row.environment_id)).accessToken) ?? "";
}

function workspaceOf(json: JsonObject): connectionsV1.Workspace {
  const name = text(json.name);
  const botUserId = text(json.botUserId);
  return create(connectionsV1.WorkspaceSchema, {
    id: text(json.id) ?? "",
    ...(name !== undefined ? { name } : {}),
    ...(botUserId !== undefined ? { botUserId } : {}),
  });
}

/** A connection as every answer shows it: its tokens masked, never opened. */
export function connectionFromRow(row: ConnectionRow): connectionsV1.ChannelConnection {
  const expiresAt = text(row.auth.expiresAt);
  const refreshTokenExpiresAt = text(row.auth.refreshTokenExpiresAt);
  return create(connectionsV1.ChannelConnectionSchema, {
    id: row.id,
    identifier: row.identifier,
    integrationIdentifier: row.integration_identifier,
    providerId: row.provider_id,
    channel: row.channel,
    ...(row.subscriber_id !== null ? { subscriberId: row.subscriber_id } : {}),
    contextKeys: row.context_keys,
    workspace: workspaceOf(row.workspace),
    auth: {
      accessToken: SECRET_MASK,
      ...(row.has_refresh_token ? { refreshToken: SECRET_MASK } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(refreshTokenExpiresAt !== undefined ? { refreshTokenExpiresAt } : {}),
    },
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

/** What the worker sends with: the access token opened. */
export function resolvedFromRow(row: ConnectionRow, secrets: SecretBox): connectionsV1.ResolvedChannelConnection {
  return create(connectionsV1.ResolvedChannelConnectionSchema, {
    identifier: row.identifier,
    integrationIdentifier: row.integration_identifier,
    providerId: row.provider_id,
    workspaceId: text(row.workspace.id) ?? "",
    accessToken: openAccessToken(secrets, row),
  });
}
