import type { ServiceImpl } from "@connectrpc/connect";
import type { workflowsV1 } from "@notify/proto";
import {
  alreadyExists,
  invalidField,
  isForeignKeyViolation,
  isObjectId,
  notFound,
  objectId,
  PUBLIC_PAGE,
  pageLimit,
  scopeOf,
  type Queryable,
} from "@notify/runtime";
import type { ServiceDeps } from "../routes.js";
import * as tenantStore from "../tenants/store.js";
import { channelSettings, givenChannelSettings } from "../workflows/mapping.js";
import { workflowKeyOf } from "../workflows/slug.js";
import * as workflowStore from "../workflows/store.js";
import { workflowOverrideFromRow } from "./mapping.js";
import * as store from "./store.js";

// Novu's words for each thing not found, which its reads and its updates word apart.
const workflowNotFound = (workflowId: string) => notFound(`Workflow with id ${workflowId} is not found`);
const tenantNotFound = (tenantId: string) => notFound(`Tenant with id ${tenantId} is not found`);
const overrideNotFound = (id: string, update: boolean) => notFound(`Workflow ${update ? "override" : "Override"} with id ${id} not found`);
const pairNotFound = ({ workflowId, tenantId }: workflowsV1.WorkflowTenant, update: boolean) =>
  notFound(
    update
      ? `Workflow override with workflow id ${workflowId} and tenant id ${tenantId} was not found`
      : `Workflow Override with workflow id ${workflowId}, tenant id ${tenantId} not found`,
  );

function pairOf(pair: workflowsV1.WorkflowTenant | undefined): workflowsV1.WorkflowTenant {
  if (!pair?.workflowId) throw invalidField("workflowId", "workflowId must be a string", pair?.workflowId);
  if (!pair.tenantId) throw invalidField("tenantId", "tenantId must be a string", pair.tenantId);
  return pair;
}

/** The internal ids of the pair's live workflow (its _id, trigger identifier or slug) and tenant (its _id or identifier). */
async function resolvePair(db: Queryable, environmentId: string, pair: workflowsV1.WorkflowTenant) {
  const [workflow, tenant] = await Promise.all([
    workflowStore.selectWorkflowByKey(db, environmentId, workflowKeyOf(pair.workflowId)),
    tenantStore.selectTenantByKey(db, environmentId, { id: isObjectId(pair.tenantId) ? pair.tenantId : undefined, identifier: pair.tenantId }),
  ]);
  return { workflowId: workflow?.id, tenantId: tenant?.id };
}

export function createWorkflowOverrideService({ pool }: ServiceDeps): ServiceImpl<typeof workflowsV1.WorkflowOverrideService> {
  /**
   * The override a key names: by its id, or by its workflow and tenant; NOT_FOUND as Novu words
   * each, an update naming first a tenant or workflow that does not exist.
   */
  async function find(environmentId: string, key: workflowsV1.WorkflowOverrideKey | undefined, update: boolean): Promise<store.WorkflowOverrideRow> {
    switch (key?.key.case) {
      case "id": {
        const row = isObjectId(key.key.value) ? await store.selectWorkflowOverride(pool, environmentId, key.key.value) : undefined;
        if (!row) throw overrideNotFound(key.key.value, update);
        return row;
      }
      case "pair": {
        const pair = pairOf(key.key.value);
        const { workflowId, tenantId } = await resolvePair(pool, environmentId, pair);
        if (update && !tenantId) throw tenantNotFound(pair.tenantId);
        if (update && !workflowId) throw workflowNotFound(pair.workflowId);
        const row = workflowId && tenantId ? await store.selectWorkflowOverrideOf(pool, environmentId, workflowId, tenantId) : undefined;
        if (!row) throw pairNotFound(pair, update);
        return row;
      }
      default:
        throw invalidField("overrideId", "an override id, or a workflow and a tenant, is required");
    }
  }

  return {
    async createWorkflowOverride(request, context) {
      const scope = scopeOf(context);
      const pair = pairOf(request.pair);
      const { workflowId, tenantId } = await resolvePair(pool, scope.environmentId, pair);
      if (!tenantId) throw tenantNotFound(pair.tenantId);
      if (!workflowId) throw workflowNotFound(pair.workflowId);
      let row: store.WorkflowOverrideRow | undefined;
      try {
        row = await store.insertWorkflowOverride(pool, scope.environmentId, {
          id: objectId(),
          organizationId: scope.organizationId,
          workflowId,
          tenantId,
          active: request.active ?? false,
          preferenceSettings: channelSettings(request.preferenceSettings),
        });
      } catch (error) {
        // The tenant was deleted since it was read.
        if (isForeignKeyViolation(error)) throw tenantNotFound(pair.tenantId);
        throw error;
      }
      if (!row) throw alreadyExists(`Workflow override with workflow id ${pair.workflowId} and tenant id ${pair.tenantId} already exists`);
      return workflowOverrideFromRow(row);
    },

    async getWorkflowOverride(request, context) {
      return workflowOverrideFromRow(await find(scopeOf(context).environmentId, request.key, false));
    },

    async listWorkflowOverrides(request, context) {
      const scope = scopeOf(context);
      if (request.page < 0) throw invalidField("page", "page must not be negative", request.page);
      // Novu's page sizes of this list: those of its public lists.
      const limit = pageLimit(request.limit, PUBLIC_PAGE);
      const rows = await store.selectWorkflowOverridePage(pool, scope.environmentId, request.page * limit, limit);
      return { overrides: rows.slice(0, limit).map(workflowOverrideFromRow), hasMore: rows.length > limit };
    },

    async updateWorkflowOverride(request, context) {
      const scope = scopeOf(context);
      const current = await find(scope.environmentId, request.key, true);
      const row = await store.updateWorkflowOverride(pool, scope.environmentId, current.id, {
        active: request.active,
        preferenceSettings: givenChannelSettings(request.preferenceSettings),
      });
      if (!row) throw overrideNotFound(current.id, true);
      return workflowOverrideFromRow(row);
    },

    async deleteWorkflowOverride(request, context) {
      const scope = scopeOf(context);
      if (!(isObjectId(request.id) && (await store.deleteWorkflowOverride(pool, scope.environmentId, request.id)))) throw overrideNotFound(request.id, false);
      return {};
    },
  };
}
