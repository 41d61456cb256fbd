import type { subscribersV1 } from "@notify/proto";
import { z } from "zod";
import { jsonObject, keyString } from "../validation.js";
import {
  channelChoicesResponse,
  channelFlags,
  channelsRequestOf,
  channelsToJson,
  criticality,
  overridesResponse,
  schedule,
  scheduleRequestOf,
  scheduleResponse,
  scheduleToJson,
} from "./preferences.js";

/** Entries of a repeated query parameter, and of a bulk update (Novu's bulk limit). */
const MAX_LISTED = 100;

const SEVERITIES = ["high", "medium", "low", "none"] as const;

/** A query parameter sent repeated (`tags[]=a&tags[]=b`) or once (`severity=high`). */
const repeated = <T extends z.ZodType>(name: string, item: T) =>
  z.preprocess(
    (value) => (typeof value === "string" ? [value] : value),
    z.array(item, { error: `${name} must be an array` }).max(MAX_LISTED, `${name} must contain no more than ${MAX_LISTED} elements`),
  );

const tags = repeated("tags", keyString("tags"));
const severities = repeated("severity", z.enum(SEVERITIES, { error: `severity must be one of the following values: ${SEVERITIES.join(", ")}` }));

/** GET /v1/inbox/preferences: `tags[]`, `severity[]` or `severity`, `criticality` (nonCritical by default). */
export const inboxPreferencesQuery = z
  .object({ tags: tags.optional(), severity: severities.optional(), criticality })
  .transform((query) => ({ criticality: query.criticality, tags: query.tags ?? [], severities: query.severity ?? [] }));

export const inboxWorkflowParam = z.object({ workflowId: keyString("workflowId") });

/** PATCH /v1/inbox/preferences[/:workflowId]: the channel switches themselves, and (global only) a schedule. */
export const inboxPreferenceBody = z.object({ ...channelFlags, schedule: schedule.optional() }, { error: "body must be an object" });

/** PATCH /v1/inbox/preferences/bulk. */
export const inboxBulkPreferencesBody = z.object({
  preferences: z
    .array(
      z.object(
        {
          workflowId: keyString("workflowId"),
          ...channelFlags,
          // An entry of a topic subscription's preferences (@novu/js subscription.bulkUpdatePreferences).
          subscriptionIdentifier: keyString("subscriptionIdentifier").optional(),
          enabled: z.boolean().optional(),
          condition: jsonObject.optional(),
        },
        { error: "each preference must be an object" },
      ),
      {
        error: "preferences must be an array",
      },
    )
    .max(MAX_LISTED, `preferences must contain no more than ${MAX_LISTED} elements`),
});

/** The session whose subscriber's preferences, in its contexts, a call reads or writes. */
type PreferenceOwner = { subscriberId: string; contextKeys: string[] };

export function inboxUpdateRequestOf({ subscriberId, contextKeys }: PreferenceOwner, body: z.output<typeof inboxPreferenceBody>, workflowId?: string) {
  return {
    subscriberId,
    contextKeys,
    ...(workflowId !== undefined ? { workflowId } : {}),
    channels: channelsRequestOf(body),
    ...(body.schedule !== undefined ? { schedule: scheduleRequestOf(body.schedule) } : {}),
  };
}

export function inboxBulkRequestOf({ subscriberId, contextKeys }: PreferenceOwner, body: Pick<z.output<typeof inboxBulkPreferencesBody>, "preferences">) {
  return { subscriberId, contextKeys, updates: body.preferences.map((entry) => ({ workflowId: entry.workflowId, channels: channelsRequestOf(entry) })) };
}

/** The global preference as the Inbox reads it, with the stored schedule. */
export function inboxGlobalToJson(global: subscribersV1.GlobalPreference | undefined) {
  return {
    level: "global" as const,
    enabled: global?.enabled ?? true,
    channels: channelsToJson(global?.channels),
    ...(global?.schedule ? { schedule: scheduleToJson(global.schedule) } : {}),
  };
}

/** A workflow's preference as the Inbox reads it; `workflow.id` is what the client sends back to update it. */
export function inboxWorkflowToJson(preference: subscribersV1.WorkflowPreference) {
  return {
    level: "template" as const,
    enabled: preference.enabled,
    channels: channelsToJson(preference.channels),
    overrides: preference.overrides.map(({ channel, source }) => ({ channel, source })),
    workflow: {
      id: preference.workflow?.id ?? "",
      identifier: preference.workflow?.identifier ?? "",
      name: preference.workflow?.name ?? "",
      critical: preference.workflow?.critical ?? false,
      tags: preference.workflow?.tags ?? [],
      severity: preference.workflow?.severity || "none",
    },
  };
}

/** GET /v1/inbox/preferences: the global preference, then one per listed workflow. */
export function inboxPreferencesToJson(reply: subscribersV1.SubscriberPreferences) {
  return [inboxGlobalToJson(reply.global), ...reply.workflows.map(inboxWorkflowToJson)];
}

/**
 * The preferences of the workflows an update named, in the order it named them. A workflow the
 * answer does not list (an inactive one) has nothing to show and is left out.
 */
export function updatedWorkflowsToJson(reply: subscribersV1.SubscriberPreferences) {
  const byId = new Map(reply.workflows.map((preference) => [preference.workflow?.id, preference]));
  return reply.updatedWorkflowIds.flatMap((id) => {
    const preference = byId.get(id);
    return preference ? [inboxWorkflowToJson(preference)] : [];
  });
}

// Shapes of the replies above, for the API description.

export const inboxGlobalResponse = z
  .object({ level: z.literal("global"), enabled: z.boolean(), channels: channelChoicesResponse, schedule: scheduleResponse.optional() })
  .meta({ id: "InboxGlobalPreference" });

export const inboxWorkflowResponse = z
  .object({
    level: z.literal("template"),
    enabled: z.boolean(),
    channels: channelChoicesResponse,
    overrides: overridesResponse,
    workflow: z.object({ id: z.string(), identifier: z.string(), name: z.string(), critical: z.boolean(), tags: z.array(z.string()), severity: z.string() }),
  })
  .meta({ id: "InboxWorkflowPreference" });

export const inboxPreferencesResponse = z.array(z.union([inboxGlobalResponse, inboxWorkflowResponse]));
export const updatedWorkflowsResponse = z.array(inboxWorkflowResponse);
