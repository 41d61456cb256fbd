import type { workflowsV1 } from "@notify/proto";
import { z } from "zod";
import { keyString, queryInt } from "../validation.js";
import { iso, isoDateResponse } from "./common.js";
import { channelPreferencesResponse, channelPreferencesToJson, flag, preferenceSettings, preferencesInit } from "./workflows.js";

// Novu's workflow overrides (@novu/node's workflowOverrides): a tenant's settings for one workflow.

export const overrideIdParam = z.object({ overrideId: keyString("overrideId") });

/** A workflow by its _id, trigger identifier or slug; a tenant by its _id or identifier. */
export const workflowTenantParams = z.object({ workflowId: keyString("workflowId"), tenantId: keyString("tenantId") });

const changes = { active: flag("active").optional(), preferenceSettings: preferenceSettings.optional() };

/** POST /v1/workflow-overrides; unknown fields are ignored. */
export const createWorkflowOverrideBody = z.object({ workflowId: keyString("workflowId"), tenantId: keyString("tenantId"), ...changes });

/** PUT /v1/workflow-overrides/…: active when given, the channels given over those stored. */
export const updateWorkflowOverrideBody = z.object(changes);

export const listWorkflowOverridesQuery = z.object({ page: queryInt(0, 0, 1_000_000), limit: queryInt(10, 1, 100) });

const changesOf = (body: z.output<typeof updateWorkflowOverrideBody>) => ({
  ...(body.active !== undefined ? { active: body.active } : {}),
  ...(body.preferenceSettings ? { preferenceSettings: preferencesInit(body.preferenceSettings) } : {}),
});

export function createWorkflowOverrideRequestOf(body: z.output<typeof createWorkflowOverrideBody>) {
  return { pair: { workflowId: body.workflowId, tenantId: body.tenantId }, ...changesOf(body) };
}

export function updateWorkflowOverrideRequestOf(
  key: { id: string } | z.output<typeof workflowTenantParams>,
  body: z.output<typeof updateWorkflowOverrideBody>,
) {
  return { key: { key: "id" in key ? { case: "id" as const, value: key.id } : { case: "pair" as const, value: key } }, ...changesOf(body) };
}

export function workflowOverrideToJson(override: workflowsV1.WorkflowOverride) {
  return {
    _id: override.id,
    _organizationId: override.organizationId,
    _environmentId: override.environmentId,
    _workflowId: override.workflowId,
    _tenantId: override.tenantId,
    active: override.active,
    preferenceSettings: channelPreferencesToJson(override.preferenceSettings),
    deleted: false,
    createdAt: iso(override.createdAt),
    updatedAt: iso(override.updatedAt),
  };
}

/** Novu's page of overrides: no total count. */
export function workflowOverridePage(reply: workflowsV1.ListWorkflowOverridesResponse, query: z.output<typeof listWorkflowOverridesQuery>) {
  return { data: reply.overrides.map(workflowOverrideToJson), page: query.page, pageSize: query.limit, hasMore: reply.hasMore };
}

/** What workflowOverrideToJson answers. */
export const workflowOverrideResponse = z
  .object({
    _id: z.string(),
    _organizationId: z.string(),
    _environmentId: z.string(),
    _workflowId: z.string(),
    _tenantId: z.string(),
    active: z.boolean(),
    preferenceSettings: channelPreferencesResponse,
    deleted: z.boolean(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "WorkflowOverride" });

export const workflowOverridePageResponse = z.object({
  data: z.array(workflowOverrideResponse),
  page: z.int(),
  pageSize: z.int(),
  hasMore: z.boolean(),
});
