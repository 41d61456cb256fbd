import type { JsonObject } from "@bufbuild/protobuf";
import type { contextsV1 } from "@notify/proto";
import { z } from "zod";
import { queryBool, queryInt } from "../validation.js";
import { cursorPageResponse, freeFormResponse, iso, isoDateResponse } from "./common.js";
import { contextData, contextName } from "./context-inputs.js";

export const contextKeyParam = z.object({ type: contextName("type"), id: contextName("id") });

/** POST /v2/contexts; unknown fields are ignored (`bridgeUrl` among them: Novu's agent bridge is not served). */
export const createContextBody = z.object({ type: contextName("type"), id: contextName("id"), data: contextData.optional() });

/** PATCH /v2/contexts/{type}/{id}: the data replaces the context's. */
export const updateContextBody = z.object({ data: contextData });

/** GET /v2/contexts: Novu's cursor paging, in creation order only. */
export const listContextsQuery = z.object({
  limit: queryInt(10, 1, 100),
  after: z.string().max(255).optional(),
  before: z.string().max(255).optional(),
  orderDirection: z.enum(["ASC", "DESC"], { error: "orderDirection must be ASC or DESC" }).default("DESC"),
  orderBy: z.literal("createdAt", { error: "orderBy must be createdAt" }).optional(),
  includeCursor: queryBool.default(false),
  id: z.string().max(255).optional(),
  search: z.string().max(255).optional(),
});

export function createContextRequestOf(body: z.output<typeof createContextBody>) {
  return { type: body.type, id: body.id, ...(body.data ? { data: body.data as JsonObject } : {}) };
}

export function listContextsRequestOf(query: z.output<typeof listContextsQuery>) {
  return {
    limit: query.limit,
    descending: query.orderDirection === "DESC",
    includeCursor: query.includeCursor,
    ...(query.after ? { after: query.after } : {}),
    ...(query.before ? { before: query.before } : {}),
    ...(query.id ? { id: query.id } : {}),
    ...(query.search ? { search: query.search } : {}),
  };
}

export function contextToJson(context: contextsV1.Context) {
  return { type: context.type, id: context.id, data: context.data ?? {}, createdAt: iso(context.createdAt), updatedAt: iso(context.updatedAt) };
}

/** What contextToJson answers. */
export const contextResponse = z
  .object({ type: z.string(), id: z.string(), data: freeFormResponse, createdAt: isoDateResponse, updatedAt: isoDateResponse })
  .meta({ id: "Context" });

export const contextPageResponse = cursorPageResponse(contextResponse);
