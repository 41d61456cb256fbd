import { layoutsV1 } from "@notify/proto";
import { z } from "zod";
import { HttpError } from "../errors.js";
import { queryInt } from "../validation.js";
import { iso, isoDateResponse } from "./common.js";
import { flag, oneOf, templateVariables, templateVariablesInit, templateVariablesResponse, templateVariablesToJson, text } from "./workflows.js";

const { LegacyLayoutOrder } = layoutsV1;

/** A layout's content is bounded by the service, which knows what a trigger can carry. */
const content = z.string({ error: "content must be a string" });

/** POST /v1/layouts (Novu's CreateLayoutRequestDto). */
export const createLegacyLayoutBody = z.object({
  name: text("name", 255),
  identifier: text("identifier", 255),
  description: text("description", 1000).optional(),
  content,
  variables: templateVariables.optional(),
  isDefault: flag("isDefault").optional(),
});

/** PATCH /v1/layouts/{layoutId}: what is given changes; an empty body is refused, as Novu refuses it. */
export const updateLegacyLayoutBody = createLegacyLayoutBody.partial();

/** GET /v1/layouts: Novu's paging, `orderBy` 1 (ascending) or -1; other parameters are ignored, as Novu ignores them. */
export const listLegacyLayoutsQuery = z.object({
  page: queryInt(0, 0, 100_000),
  pageSize: queryInt(10, 1, 1000),
  sortBy: oneOf("sortBy", ["createdAt", "updatedAt", "name", "identifier"]).default("createdAt"),
  orderBy: z.coerce.number({ error: "orderBy must be 1 or -1" }).optional(),
});

export const legacyLayoutIdParam = z.object({ layoutId: text("layoutId", 255) });

const ORDERS = {
  createdAt: LegacyLayoutOrder.CREATED_AT,
  updatedAt: LegacyLayoutOrder.UPDATED_AT,
  name: LegacyLayoutOrder.NAME,
  identifier: LegacyLayoutOrder.IDENTIFIER,
} as const;

export function createLegacyLayoutRequestOf(body: z.output<typeof createLegacyLayoutBody>) {
  return {
    identifier: body.identifier,
    name: body.name,
    description: body.description ?? "",
    content: body.content,
    variables: templateVariablesInit(body.variables ?? []),
    isDefault: body.isDefault ?? false,
  };
}

export function updateLegacyLayoutRequestOf(layoutId: string, body: z.output<typeof updateLegacyLayoutBody>) {
  if (Object.values(body).every((value) => value === undefined)) throw new HttpError(400, "Payload can not be empty");
  return {
    layoutId,
    // Novu changes only what is given and not empty.
    ...(body.identifier ? { identifier: body.identifier } : {}),
    ...(body.name ? { name: body.name } : {}),
    ...(body.description ? { description: body.description } : {}),
    ...(body.content ? { content: body.content } : {}),
    ...(body.variables ? { variables: { variables: templateVariablesInit(body.variables) } } : {}),
    ...(body.isDefault !== undefined ? { isDefault: body.isDefault } : {}),
  };
}

export function listLegacyLayoutsRequestOf(query: z.output<typeof listLegacyLayoutsQuery>) {
  // Novu reads anything but 1 as descending.
  return { page: query.page, pageSize: query.pageSize, orderBy: ORDERS[query.sortBy], ascending: query.orderBy === 1 };
}

/** A layout as Novu's v1 API answers one (its LayoutDto). */
export function legacyLayoutToJson(layout: layoutsV1.LegacyLayout, scope: { organizationId: string; environmentId: string }) {
  return {
    _id: layout.id,
    _organizationId: scope.organizationId,
    _environmentId: scope.environmentId,
    _creatorId: scope.organizationId,
    name: layout.name,
    identifier: layout.identifier,
    description: layout.description,
    channel: "email",
    content: layout.content,
    contentType: "customHtml",
    variables: templateVariablesToJson(layout.variables),
    isDefault: layout.isDefault,
    isDeleted: false,
    createdAt: iso(layout.createdAt),
    updatedAt: iso(layout.updatedAt),
  };
}

export const legacyLayoutResponse = z
  .object({
    _id: z.string(),
    _organizationId: z.string(),
    _environmentId: z.string(),
    _creatorId: z.string(),
    name: z.string(),
    identifier: z.string(),
    description: z.string(),
    channel: z.literal("email"),
    content: z.string(),
    contentType: z.literal("customHtml"),
    variables: templateVariablesResponse,
    isDefault: z.boolean(),
    isDeleted: z.boolean(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "LegacyLayout" });

export const createdLegacyLayoutResponse = z.object({ _id: z.string() }).meta({ id: "CreatedLegacyLayout" });

export const legacyLayoutPageResponse = z
  .object({ data: z.array(legacyLayoutResponse), page: z.number().int(), pageSize: z.number().int(), totalCount: z.number().int() })
  .meta({ id: "LegacyLayoutPage" });
