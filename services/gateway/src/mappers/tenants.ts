import type { MessageInitShape } from "@bufbuild/protobuf";
import type { tenantsV1 } from "@notify/proto";
import { z } from "zod";
import { jsonObject, queryInt } from "../validation.js";
import { freeFormResponse, iso, isoDateResponse, offsetPage, offsetPageResponse } from "./common.js";
import { nonBlankText } from "./workflows.js";

type StructInit = MessageInitShape<typeof tenantsV1.CreateTenantRequestSchema>["data"];

const identifier = nonBlankText("identifier");
const name = nonBlankText("name");

export const tenantIdentifierParam = z.object({ identifier: z.string().min(1).max(255) });

/** POST /v1/tenants; unknown fields are ignored. */
export const createTenantBody = z.object({ identifier, name, data: jsonObject.optional() });

/** PATCH /v1/tenants/{identifier}: given fields change; null leaves a field as it is (as Novu). */
export const updateTenantBody = z.object({
  identifier: identifier.nullable().optional(),
  name: name.nullable().optional(),
  data: jsonObject.nullable().optional(),
});

export const listTenantsQuery = z.object({
  page: queryInt(0, 0, 1_000_000),
  limit: queryInt(10, 1, 100),
});

export function createTenantRequestOf(body: z.output<typeof createTenantBody>) {
  return { identifier: body.identifier, name: body.name, ...(body.data ? { data: body.data as StructInit } : {}) };
}

export function updateTenantRequestOf(current: string, body: z.output<typeof updateTenantBody>) {
  return {
    identifier: current,
    ...(body.identifier != null ? { newIdentifier: body.identifier } : {}),
    ...(body.name != null ? { name: body.name } : {}),
    ...(body.data != null ? { data: body.data as StructInit } : {}),
  };
}

export function tenantToJson(tenant: tenantsV1.Tenant) {
  return {
    _id: tenant.id,
    identifier: tenant.identifier,
    ...(tenant.name !== undefined ? { name: tenant.name } : {}),
    ...(tenant.data ? { data: tenant.data } : {}),
    _environmentId: tenant.environmentId,
    _organizationId: tenant.organizationId,
    createdAt: iso(tenant.createdAt),
    updatedAt: iso(tenant.updatedAt),
  };
}

export function tenantPage(reply: tenantsV1.ListTenantsResponse, query: z.output<typeof listTenantsQuery>) {
  return offsetPage(reply.tenants.map(tenantToJson), query.page, query.limit, reply.totalCount, reply.hasMore);
}

/** What tenantToJson answers. */
export const tenantResponse = z
  .object({
    _id: z.string(),
    identifier: z.string(),
    name: z.string().optional(),
    data: freeFormResponse.optional(),
    _environmentId: z.string(),
    _organizationId: z.string(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "Tenant" });

export const tenantPageResponse = offsetPageResponse(tenantResponse);
