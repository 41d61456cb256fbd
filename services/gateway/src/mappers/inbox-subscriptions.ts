import { z } from "zod";
import { jsonObject, keyString } from "../validation.js";
import { stringList } from "./messages.js";
import { channelFlags } from "./preferences.js";
import { preferenceWorkflowResponse, subscriptionPreferencesBody } from "./subscription-preferences.js";

/** GET /v1/inbox/topics/{topicKey}/subscriptions/{identifier}: preferences to show for these workflows too, stored or not. */
export const inboxSubscriptionQuery = z.object({ workflowIds: stringList("workflowIds").optional(), tags: stringList("tags").optional() });

/**
 * POST /v1/inbox/topics/{topicKey}/subscriptions: the session's subscriber subscribes, in the
 * session's contexts; an empty identifier takes the derived one, and `topic.name` names the topic.
 */
export const inboxCreateSubscriptionBody = z.object({
  identifier: z.string({ error: "identifier must be a string" }).max(255, "identifier must be shorter than or equal to 255 characters").optional(),
  name: keyString("name").optional(),
  topic: z.object({ name: keyString("topic.name").optional() }).optional(),
  preferences: subscriptionPreferencesBody.optional(),
});

/** PATCH /v1/inbox/topics/{topicKey}/subscriptions/{identifier}: preferences, when given, replace the subscription's. */
export const inboxUpdateSubscriptionBody = z.object({ name: keyString("name").optional(), preferences: subscriptionPreferencesBody.optional() });

export const inboxSubscriptionPreferenceParams = z.object({ subscriptionIdentifier: keyString("subscriptionIdentifier"), workflowId: keyString("workflowId") });

/**
 * PATCH /v1/inbox/subscriptions/{subscriptionIdentifier}/preferences/{workflowId}: the Inbox sends
 * `enabled` with every channel switch set alike, or a `condition`. A subscription's preference
 * decides whether the workflow reaches the subscriber at all, so the channel switches are not kept.
 */
export const inboxSubscriptionPreferenceBody = z.object({
  enabled: z.boolean().optional(),
  condition: jsonObject.optional(),
  ...channelFlags,
});

/** What the per-workflow update answers (the Inbox reads enabled, condition, workflow and subscriptionId). */
export const inboxSubscriptionPreferenceResponse = z.object({
  level: z.literal("template"),
  subscriptionId: z.string(),
  enabled: z.boolean(),
  condition: z.record(z.string(), z.unknown()).optional(),
  workflow: preferenceWorkflowResponse,
});

export const deletedSubscriptionResponse = z.object({ success: z.literal(true) });
