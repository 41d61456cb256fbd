import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { commonV1, connectionsV1 } from "@notify/proto";
import {
  alreadyExists,
  checkContextKeys,
  failedPrecondition,
  isUniqueViolation,
  keysetPage,
  keysetRead,
  notFound,
  objectId,
  scopeOf,
  withTransaction,
  type ConnectError,
  type Pool,
} from "@notify/runtime";
import { SECRET_MASK } from "../environment-variables/mapping.js";
import type { SecretBox } from "../secrets.js";
import { Checks } from "../validation.js";
import { connectionFromRow, grantColumns, resolvedFromRow } from "./mapping.js";
import * as store from "./store.js";

/** Counts stop here, as Novu's do. */
export const CONNECTION_COUNT_CAP = 50_000;
/** OAuth tokens are short; a JWT-shaped one is a few KiB at most. */
const MAX_TOKEN = 8192;
const MAX_DATE = 64;

const { ConnectionMode } = connectionsV1;

export interface ChannelConnectionServiceDeps {
  pool: Pool;
  secrets: SecretBox;
}

const connectionNotFound = (identifier: string) => notFound(`Channel connection with identifier '${identifier}' not found`);

/** An identifier for a connection made without one, in Novu's form. */
const generatedIdentifier = () => `chconn_${randomBytes(9).toString("base64url")}`;

/** Context keys as stored: checked, sorted and distinct, so equal sets are equal arrays. */
const contextSet = (keys: readonly string[]) => [...new Set(checkContextKeys(keys))];

/** Checks a workspace and a grant; a token that is the mask would overwrite the real one with it. */
function checkGrant(checks: Checks, workspace: connectionsV1.Workspace | undefined, auth: connectionsV1.ConnectionAuth | undefined): void {
  if (!workspace) checks.fail("workspace", "workspace is required", "");
  else {
    checks.text("workspace.id", workspace.id);
    checks.text("workspace.name", workspace.name);
    checks.text("workspace.botUserId", workspace.botUserId);
  }
  if (!auth) {
    checks.fail("auth", "auth is required", "");
    return;
  }
  for (const [field, token] of [
    ["auth.accessToken", auth.accessToken],
    ["auth.refreshToken", auth.refreshToken],
  ] as const) {
    if (token !== undefined && (token.length === 0 || token.length > MAX_TOKEN))
      checks.fail(field, `${field} must be between 1 and ${MAX_TOKEN} characters`, "");
  }
  for (const [field, date] of [
    ["auth.expiresAt", auth.expiresAt],
    ["auth.refreshTokenExpiresAt", auth.refreshTokenExpiresAt],
  ] as const) {
    if (date !== undefined && (date.length === 0 || date.length > MAX_DATE)) checks.fail(field, `${field} must be between 1 and ${MAX_DATE} characters`, date);
  }
}

function refuseMask(auth: connectionsV1.ConnectionAuth): void {
  if (auth.accessToken === SECRET_MASK || auth.refreshToken === SECRET_MASK) {
    throw failedPrecondition("Submitted token matches the secret mask placeholder; provide the real token.");
  }
}

/**
 * Who holds a new connection, by Novu's rules: shared ones belong to their contexts (a subscriber
 * given is not kept), a subscriber's to the subscriber; without a mode, a subscriber given makes
 * it theirs and contexts alone make it shared.
 */
function holderOf(request: connectionsV1.CreateChannelConnectionRequest, contextKeys: readonly string[]): string | null {
  const subscriberId = request.subscriberId ?? null;
  switch (request.connectionMode) {
    case ConnectionMode.SHARED:
      if (contextKeys.length === 0) throw failedPrecondition("A context is required when connectionMode is 'shared'");
      return null;
    case ConnectionMode.SUBSCRIBER:
      if (subscriberId === null) throw failedPrecondition("subscriberId is required when connectionMode is 'subscriber'");
      return subscriberId;
    default:
      if (subscriberId === null && contextKeys.length === 0) throw failedPrecondition("Either subscriberId or context must be provided");
      return subscriberId;
  }
}

/** The unique-index violations a create can cause, as the 409s Novu answers for them. */
function conflictOf(error: unknown, request: connectionsV1.CreateChannelConnectionRequest, identifier: string): ConnectError | undefined {
  if (!isUniqueViolation(error)) return undefined;
  const { constraint } = error as { constraint?: string };
  if (constraint === "channel_connections_identifier_key") return alreadyExists(`Channel connection with identifier '${identifier}' already exists`);
  if (constraint === "channel_connections_scope_key") {
    return alreadyExists(`A channel connection for integration '${request.integrationIdentifier}' with the same subscriber and context already exists`);
  }
  return undefined;
}

export function createChannelConnectionService({ pool, secrets }: ChannelConnectionServiceDeps): ServiceImpl<typeof connectionsV1.ChannelConnectionService> {
  return {
    async createChannelConnection(request, context) {
      const scope = scopeOf(context);
      const checks = new Checks();
      if (request.identifier !== "") checks.text("identifier", request.identifier);
      checks.text("subscriberId", request.subscriberId);
      checks.text("integrationIdentifier", request.integrationIdentifier);
      checkGrant(checks, request.workspace, request.auth);
      checks.throwIfAny();
      const workspace = request.workspace!;
      const auth = request.auth!;
      const contextKeys = contextSet(request.contextKeys);
      const subscriberId = holderOf(request, contextKeys);
      refuseMask(auth);
      const identifier = request.identifier || generatedIdentifier();
      const id = objectId();
      try {
        const row = await withTransaction(pool, async (tx) => {
          const integration = await store.selectIntegrationByIdentifier(tx, scope.environmentId, request.integrationIdentifier);
          if (!integration) throw notFound(`Integration not found: ${request.integrationIdentifier}`);
          return store.insertConnection(tx, scope.environmentId, {
            id,
            organizationId: scope.organizationId,
            identifier,
            integrationId: integration.id,
            integrationIdentifier: integration.identifier,
            providerId: integration.provider_id,
            channel: integration.channel,
            subscriberId,
            contextKeys,
            ...grantColumns(secrets, id, scope.environmentId, workspace, auth),
          });
        });
        return connectionFromRow(row);
      } catch (error) {
        throw conflictOf(error, request, identifier) ?? error;
      }
    },

    async getChannelConnection(request, context) {
      const row = await store.selectConnection(pool, scopeOf(context).environmentId, request.identifier);
      if (!row) throw connectionNotFound(request.identifier);
      return connectionFromRow(row);
    },

    async listChannelConnections(request, context) {
      const scope = scopeOf(context);
      const read = keysetRead({ ...request, descending: request.direction !== commonV1.SortDirection.ASC });
      const filters: store.ConnectionFilters = {
        subscriberId: request.subscriberId ?? null,
        includeShared: request.includeShared,
        channel: request.channel ?? null,
        providerId: request.providerId ?? null,
        integrationIdentifier: request.integrationIdentifier ?? null,
        contextKeys: request.filterContextKeys ? contextSet(request.contextKeys) : null,
        heldBySubscriber: request.connectionMode === ConnectionMode.UNSPECIFIED ? null : request.connectionMode === ConnectionMode.SUBSCRIBER,
      };
      const [fetched, totalCount] = await Promise.all([
        store.selectConnectionPage(pool, scope.environmentId, filters, { ...read, byUpdatedAt: request.byUpdatedAt }),
        store.countConnections(pool, scope.environmentId, filters, CONNECTION_COUNT_CAP),
      ]);
      const { page, cursors } = keysetPage(fetched, read.limit, request);
      return create(connectionsV1.ListChannelConnectionsResponseSchema, {
        connections: page.map(connectionFromRow),
        ...cursors,
        totalCount,
        totalCountCapped: totalCount >= CONNECTION_COUNT_CAP,
      });
    },

    async updateChannelConnection(request, context) {
      const scope = scopeOf(context);
      const checks = new Checks();
      checkGrant(checks, request.workspace, request.auth);
      checks.throwIfAny();
      refuseMask(request.auth!);
      const existing = await store.selectConnection(pool, scope.environmentId, request.identifier);
      if (!existing) throw connectionNotFound(request.identifier);
      const grant = grantColumns(secrets, existing.id, scope.environmentId, request.workspace!, request.auth!);
      const row = await store.updateConnection(pool, scope.environmentId, existing.id, grant);
      if (!row) throw connectionNotFound(request.identifier);
      return connectionFromRow(row);
    },

    async deleteChannelConnection(request, context) {
      if (!(await store.deleteConnection(pool, scopeOf(context).environmentId, request.identifier))) throw connectionNotFound(request.identifier);
      return create(connectionsV1.DeleteChannelConnectionResponseSchema, {});
    },

    async resolveChannelConnection(request, context) {
      const scope = scopeOf(context);
      const contextKeys = contextSet(request.contextKeys);
      const row = await store.selectConnectionInContexts(pool, scope.environmentId, request.identifier, contextKeys);
      if (!row) {
        const where = contextKeys.length === 0 ? "without context" : `for context keys ${contextKeys.join(", ")}`;
        throw notFound(`Channel connection with identifier '${request.identifier}' not found ${where}`);
      }
      return resolvedFromRow(row, secrets);
    },
  };
}
