import { commonV1 } from "@notify/proto";
import { z } from "zod";
import { keyString, queryBool, queryInt } from "../validation.js";
import { contextKeyList } from "./messages.js";

/** Novu's cursor paging and filters, as its channel connections and endpoints lists take them. */
export const channelListQuery = z.object({
  limit: queryInt(10, 1, 100),
  after: z.string().max(255).optional(),
  before: z.string().max(255).optional(),
  orderDirection: z.enum(["ASC", "DESC"], { error: "orderDirection must be ASC or DESC" }).default("DESC"),
  orderBy: z.enum(["createdAt", "updatedAt"], { error: "orderBy must be createdAt or updatedAt" }).default("createdAt"),
  includeCursor: queryBool.default(false),
  subscriberId: keyString("subscriberId").optional(),
  channel: keyString("channel").optional(),
  providerId: keyString("providerId").optional(),
  integrationIdentifier: keyString("integrationIdentifier").optional(),
  contextKeys: contextKeyList.optional(),
});

/** The list request either service takes for such a query: given contextKeys (even none) filter by exactly those. */
export function channelListRequestOf(query: z.output<typeof channelListQuery>) {
  return {
    limit: query.limit,
    direction: query.orderDirection === "ASC" ? commonV1.SortDirection.ASC : commonV1.SortDirection.DESC,
    byUpdatedAt: query.orderBy === "updatedAt",
    includeCursor: query.includeCursor,
    ...(query.after ? { after: query.after } : {}),
    ...(query.before ? { before: query.before } : {}),
    ...(query.subscriberId ? { subscriberId: query.subscriberId } : {}),
    ...(query.channel ? { channel: query.channel } : {}),
    ...(query.providerId ? { providerId: query.providerId } : {}),
    ...(query.integrationIdentifier ? { integrationIdentifier: query.integrationIdentifier } : {}),
    ...(query.contextKeys ? { contextKeys: query.contextKeys, filterContextKeys: true } : {}),
  };
}
