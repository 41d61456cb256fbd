import type { workflowsV1 } from "@notify/proto";
import { z } from "zod";
import { iso, isoDateResponse } from "./common.js";
import { nonBlankText } from "./workflows.js";

export const feedIdParam = z.object({ feedId: z.string().min(1).max(255) });

/** POST /v1/feeds: the name is also the identifier. */
export const createFeedBody = z.object({ name: nonBlankText("name") });

export function feedResourceToJson(feed: workflowsV1.Feed) {
  return {
    _id: feed.id,
    name: feed.name,
    identifier: feed.identifier,
    _environmentId: feed.environmentId,
    _organizationId: feed.organizationId,
    deleted: false,
    createdAt: iso(feed.createdAt),
    updatedAt: iso(feed.updatedAt),
  };
}

export const feedsToJson = (reply: workflowsV1.ListFeedsResponse) => reply.feeds.map(feedResourceToJson);

/** What feedResourceToJson answers. */
export const feedResponse = z
  .object({
    _id: z.string(),
    name: z.string(),
    identifier: z.string(),
    _environmentId: z.string(),
    _organizationId: z.string(),
    deleted: z.literal(false),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "Feed" });

export const feedsResponse = z.array(feedResponse);
