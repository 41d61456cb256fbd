import { randomBytes } from "node:crypto";
import slugify from "@sindresorhus/slugify";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { integrationsV1 } from "@notify/proto";
import {
  alreadyExists,
  failedPrecondition,
  isUniqueViolation,
  notFound,
  objectId,
  scopeOf,
  withTransaction,
  type ConnectError,
  type Logger,
  type Pool,
  type PoolClient,
  type Scope,
} from "@notify/runtime";
import * as connections from "./channel-connections/store.js";
import { conditionsToJson, credentialColumns, fieldsOf, integrationFromRow } from "./mapping.js";
import { providerName } from "./provider-names.js";
import type { SecretBox } from "./secrets.js";
import * as store from "./store.js";
import { CHANNELS_WITH_PRIMARY, Checks } from "./validation.js";

/** Lists stop here; an environment with more integrations than this is not a real one. */
export const MAX_LISTED = 1000;
const MAX_CONDITIONAL = 100;

/** What Novu gives every environment: the active in-app provider. */
const DEFAULT_IN_APP = { providerId: "novu", channel: "in_app", name: "Novu Inbox" } as const;

export interface IntegrationServiceDeps {
  pool: Pool;
  log: Logger;
  secrets: SecretBox;
}

const integrationNotFound = (id: string) => notFound(`Integration with id ${id} not found`);

/** Novu's identifier shape: `<slug of the name, as Novu slugs it>-<short random id>`. */
const defaultIdentifier = (name: string) => `${slugify(name).slice(0, 200) || "integration"}-${randomBytes(6).toString("base64url")}`;

/** The unique-index violations a client can cause, as the errors Novu answers for them. */
function conflictOf(error: unknown): ConnectError | undefined {
  if (!isUniqueViolation(error)) return undefined;
  const { constraint } = error as { constraint?: string };
  if (constraint === "integrations_identifier_key") return alreadyExists("Integration with identifier already exists");
  if (constraint === "integrations_novu_in_app_key") return failedPrecondition("One environment can only have one In app provider");
  return undefined;
}

async function writing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw conflictOf(error) ?? error;
  }
}

const supportsPrimary = (channel: string) => CHANNELS_WITH_PRIMARY.includes(channel);

/**
 * Primary flag and priority of an integration that becomes active (Novu's order): on a channel
 * without a primary it goes on top, the primary when `mayBecomePrimary` (Novu makes a new
 * integration without conditions the primary there, never one activated later); otherwise it goes
 * right below the primary, which moves up one.
 */
async function placeActive(
  tx: PoolClient,
  environmentId: string,
  channel: string,
  mayBecomePrimary: boolean,
): Promise<Pick<store.IntegrationFields, "is_primary" | "priority">> {
  if (!supportsPrimary(channel)) return { is_primary: false, priority: 0 };
  const primary = await store.selectPrimaryIntegration(tx, environmentId, channel);
  if (primary) {
    await store.updatePriority(tx, environmentId, primary.id, primary.priority + 1);
    return { is_primary: false, priority: primary.priority };
  }
  return { is_primary: mayBecomePrimary, priority: (await store.selectHighestActivePriority(tx, environmentId, channel)) + 1 };
}

export function createIntegrationService({ pool, secrets }: IntegrationServiceDeps): ServiceImpl<typeof integrationsV1.IntegrationService> {
  const toProto = (row: store.IntegrationRow) => integrationFromRow(row, secrets);
  const readyEnvironments = new Set<string>();

  /**
   * The caller's scope, once its environment is set up: environments are created by the gateway,
   * so the default in-app integration is made here, on the environment's first call, exactly once.
   */
  async function ready(context: HandlerContext): Promise<Scope> {
    const scope = scopeOf(context);
    if (readyEnvironments.has(scope.environmentId)) return scope;
    await withTransaction(pool, async (tx) => {
      if (!(await store.insertEnvironmentIfMissing(tx, scope.environmentId, scope.organizationId))) return;
      const id = objectId();
      await store.insertIntegration(tx, scope.environmentId, {
        id,
        organizationId: scope.organizationId,
        providerId: DEFAULT_IN_APP.providerId,
        channel: DEFAULT_IN_APP.channel,
        fields: {
          name: DEFAULT_IN_APP.name,
          identifier: defaultIdentifier(DEFAULT_IN_APP.name),
          ...credentialColumns(id, undefined, undefined, secrets),
          conditions: [],
          active: true,
          is_primary: false,
          priority: 0,
        },
      });
    });
    readyEnvironments.add(scope.environmentId);
    return scope;
  }

  return {
    async createIntegration(request, context) {
      const scope = await ready(context);
      const checks = new Checks();
      checks.text("providerId", request.providerId);
      checks.channel("channel", request.channel);
      checks.text("name", request.name);
      checks.text("identifier", request.identifier);
      checks.throwIfAny();
      const environmentId = scope.environmentId;
      const id = objectId();
      const name = request.name ?? providerName(request.providerId);
      const row = await writing(() =>
        withTransaction(pool, async (tx) => {
          await store.lockEnvironment(tx, environmentId);
          const placement = request.active
            ? await placeActive(tx, environmentId, request.channel, request.conditions.length === 0)
            : { is_primary: false, priority: 0 };
          return store.insertIntegration(tx, environmentId, {
            id,
            organizationId: scope.organizationId,
            providerId: request.providerId,
            channel: request.channel,
            fields: {
              name,
              identifier: request.identifier ?? defaultIdentifier(name),
              ...credentialColumns(id, request.credentials, request.configurations, secrets),
              conditions: conditionsToJson(request.conditions),
              active: request.active,
              ...placement,
            },
          });
        }),
      );
      return toProto(row);
    },

    async getIntegration(request, context) {
      const scope = await ready(context);
      const row = await store.selectIntegration(pool, scope.environmentId, request.id);
      if (!row) throw integrationNotFound(request.id);
      return toProto(row);
    },

    async listIntegrations(request, context) {
      const scope = await ready(context);
      if (request.channel !== undefined) {
        const checks = new Checks();
        checks.channel("channel", request.channel);
        checks.throwIfAny();
      }
      const rows = await store.selectIntegrations(pool, scope.environmentId, { channel: request.channel ?? null, activeOnly: request.activeOnly }, MAX_LISTED);
      return { integrations: rows.map(toProto) };
    },

    async listOrganizationActiveIntegrations(_request, context) {
      const scope = await ready(context);
      const rows = await store.selectOrganizationActiveIntegrations(pool, scope.organizationId, MAX_LISTED);
      // Another environment's secrets stay sealed: the caller's key does not belong to it.
      const integrations = rows.map((row) => integrationFromRow(row, row.environment_id === scope.environmentId ? secrets : undefined));
      return { integrations };
    },

    async updateIntegration(request, context) {
      const scope = await ready(context);
      const checks = new Checks();
      checks.text("name", request.name);
      checks.text("identifier", request.identifier);
      checks.throwIfAny();
      const given = [request.name, request.identifier, request.active, request.credentials, request.conditions, request.configurations];
      if (given.every((value) => value === undefined)) throw failedPrecondition("No properties found for update");
      const environmentId = scope.environmentId;
      const row = await writing(() =>
        withTransaction(pool, async (tx) => {
          await store.lockEnvironment(tx, environmentId);
          const existing = await store.selectIntegration(tx, environmentId, request.id);
          if (!existing) throw integrationNotFound(request.id);
          const current = toProto(existing);
          const fields: store.IntegrationFields = {
            ...fieldsOf(existing),
            name: request.name ?? existing.name,
            identifier: request.identifier ?? existing.identifier,
            ...credentialColumns(existing.id, request.credentials ?? current.credentials, request.configurations ?? current.configurations, secrets),
            conditions: request.conditions ? conditionsToJson(request.conditions.filters) : existing.conditions,
            active: request.active ?? existing.active,
          };
          if (fields.active && !existing.active) {
            Object.assign(fields, await placeActive(tx, environmentId, existing.channel, false));
          }
          if (!fields.active) Object.assign(fields, { is_primary: false, priority: 0 });
          if (fields.conditions.length > 0) fields.is_primary = false;
          const updated = await store.updateIntegration(tx, environmentId, existing.id, fields);
          // Channel connections name their integration by identifier.
          if (fields.identifier !== existing.identifier) await connections.renameIntegrationConnections(tx, environmentId, existing.id, fields.identifier);
          const leftTheTop = (existing.active && !fields.active) || (existing.is_primary && !fields.is_primary);
          if (!supportsPrimary(existing.channel) || !leftTheTop) return updated;
          await store.renumberPriorities(tx, environmentId, existing.channel, null);
          return (await store.selectIntegration(tx, environmentId, existing.id))!;
        }),
      );
      return toProto(row);
    },

    async deleteIntegration(request, context) {
      const scope = await ready(context);
      const environmentId = scope.environmentId;
      const rows = await withTransaction(pool, async (tx) => {
        await store.lockEnvironment(tx, environmentId);
        // API keys carry no user: the environment whose key made the call is who deleted it.
        const deleted = await store.softDeleteIntegration(tx, environmentId, request.id, scope.environmentId);
        if (!deleted) throw integrationNotFound(request.id);
        // Its channel connections go with it: their tokens are of no use without it, and a later
        // integration given the same identifier must not send with them.
        await connections.deleteIntegrationConnections(tx, environmentId, deleted.id);
        if (deleted.active && supportsPrimary(deleted.channel)) await store.renumberPriorities(tx, environmentId, deleted.channel, null);
        return store.selectIntegrations(tx, environmentId, { channel: null, activeOnly: false }, MAX_LISTED);
      });
      return { integrations: rows.map(toProto) };
    },

    async setPrimaryIntegration(request, context) {
      const scope = await ready(context);
      const environmentId = scope.environmentId;
      const row = await withTransaction(pool, async (tx) => {
        await store.lockEnvironment(tx, environmentId);
        const target = await store.selectIntegration(tx, environmentId, request.id);
        if (!target) throw integrationNotFound(request.id);
        if (!supportsPrimary(target.channel)) throw failedPrecondition(`Channel ${target.channel} does not support primary`);
        if (target.is_primary) return target;
        await store.demotePrimaries(tx, environmentId, target.channel);
        await store.updateIntegration(tx, environmentId, target.id, { ...fieldsOf(target), active: true, is_primary: true, conditions: [] });
        await store.renumberPriorities(tx, environmentId, target.channel, target.id);
        return (await store.selectIntegration(tx, environmentId, target.id))!;
      });
      return toProto(row);
    },

    async findActiveIntegration(request, context) {
      const scope = await ready(context);
      const checks = new Checks();
      checks.text("providerId", request.providerId);
      checks.text("identifier", request.identifier);
      checks.throwIfAny();
      const row = await store.selectNewestActiveOfProvider(pool, scope.environmentId, request.providerId, request.identifier ?? null);
      return row ? { integration: toProto(row) } : {};
    },

    async selectIntegration(request, context) {
      const scope = await ready(context);
      const checks = new Checks();
      checks.channel("channel", request.channel);
      checks.text("identifier", request.identifier);
      checks.throwIfAny();
      const identifier = request.identifier ?? null;
      const primaryOnly = identifier === null && supportsPrimary(request.channel);
      const [primary, conditional] = await Promise.all([
        store.selectNewestActiveOfChannel(pool, scope.environmentId, request.channel, { identifier, primaryOnly }),
        identifier === null ? store.selectConditionalIntegrations(pool, scope.environmentId, request.channel, MAX_CONDITIONAL) : [],
      ]);
      // Without a primary, a channel's only active integration delivers it: there is no choice to
      // make. One with conditions serves only the tenants they match, so it is never the default.
      const only = async () => {
        const active = await store.selectIntegrations(pool, scope.environmentId, { channel: request.channel, activeOnly: true }, MAX_CONDITIONAL + 2);
        const unconditional = active.filter((row) => row.conditions.length === 0);
        return unconditional.length === 1 ? unconditional[0] : undefined;
      };
      const row = primary ?? (primaryOnly ? await only() : undefined);
      return { ...(row ? { integration: toProto(row) } : {}), conditional: conditional.map(toProto) };
    },
  };
}
