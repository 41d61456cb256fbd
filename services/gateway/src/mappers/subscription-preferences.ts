import { create, type JsonObject } from "@bufbuild/protobuf";
import { topicsV1, type workflowsV1 } from "@notify/proto";
import { z } from "zod";
import { jsonObject, keyString } from "../validation.js";
import { workflowSummaryToJson } from "./inbox.js";

/** A JSON Logic rule, decided at trigger time over payload, subscriber, actor and context. */
const condition = jsonObject.meta({ description: 'JSON Logic, e.g. {"==": [{"var": "payload.tier"}, "gold"]}' });

const refs = (name: string) => z.array(keyString(name), { error: `${name} must be an array` }).max(100, `${name} must contain no more than 100 elements`);

/**
 * One entry of a subscription's `preferences` (@novu/api's WorkflowPreferenceRequestDto,
 * GroupPreferenceFilterDto, or a bare workflow id or identifier).
 */
const preferenceEntry = z.union(
  [
    keyString("preferences"),
    z.object({ workflowId: keyString("workflowId"), enabled: z.boolean().optional(), condition: condition.optional() }),
    z.object({
      filter: z.object({ workflowIds: refs("workflowIds").optional(), tags: refs("tags").optional() }),
      enabled: z.boolean().optional(),
      condition: condition.optional(),
    }),
  ],
  { error: "each of preferences must be a workflow id, {workflowId, enabled?, condition?} or {filter: {workflowIds?, tags?}, enabled?, condition?}" },
);

/** A preference entry as a group filter: the workflows it names (by id or identifier) or tags, and what it sets. */
export interface PreferenceFilter {
  workflowIds: string[];
  tags: string[];
  enabled: boolean | undefined;
  condition: Record<string, unknown> | undefined;
}

/** `preferences` of a subscription create or update, each entry as the group filter it stands for. */
export const subscriptionPreferencesBody = z
  .array(preferenceEntry, { error: "preferences must be an array" })
  .max(100, "preferences must contain no more than 100 elements")
  .transform((entries) =>
    entries.map((entry): PreferenceFilter => {
      if (typeof entry === "string") return { workflowIds: [entry], tags: [], enabled: undefined, condition: undefined };
      const named =
        "workflowId" in entry ? { workflowIds: [entry.workflowId], tags: [] } : { workflowIds: entry.filter.workflowIds ?? [], tags: entry.filter.tags ?? [] };
      return { ...named, enabled: entry.enabled, condition: entry.condition };
    }),
  );

/**
 * The preferences some filters make, over the environment's active workflows: each workflow takes
 * the first filter that names it (by tag when the filter has tags, else by id or identifier).
 * Names that match no workflow make nothing, as in Novu; a workflow created later is not covered.
 */
export function preferencesOf(filters: readonly PreferenceFilter[], workflows: readonly workflowsV1.ActiveWorkflow[]): topicsV1.SubscriptionPreference[] {
  return workflows.flatMap((workflow) => {
    const filter = filters.find((candidate) =>
      candidate.tags.length > 0
        ? candidate.tags.some((tag) => workflow.tags.includes(tag))
        : candidate.workflowIds.includes(workflow.id) || candidate.workflowIds.includes(workflow.identifier),
    );
    if (!filter) return [];
    return [
      create(topicsV1.SubscriptionPreferenceSchema, {
        workflowId: workflow.id,
        enabled: filter.enabled ?? true,
        ...(filter.condition ? { condition: filter.condition as JsonObject } : {}),
      }),
    ];
  });
}

/** The workflow of a preference as Novu shows it (SubscriptionPreferenceDto.workflow): a notification's summary, with its data. */
export const preferenceWorkflowToJson = (workflow: workflowsV1.Workflow) => ({
  ...workflowSummaryToJson(workflow),
  ...(workflow.data ? { data: workflow.data } : {}),
});

/**
 * A subscription's preferences as Novu shows them (SubscriptionPreferenceDto), those of deleted
 * workflows left out; the key is absent when none is left, as in Novu.
 */
export function subscriptionPreferencesToJson(subscription: topicsV1.Subscription, workflows: ReadonlyMap<string, workflowsV1.Workflow>) {
  const preferences = subscription.preferences.flatMap((preference) => {
    const workflow = workflows.get(preference.workflowId);
    if (!workflow) return [];
    return [
      {
        subscriptionId: subscription.identifier,
        workflow: preferenceWorkflowToJson(workflow),
        enabled: preference.enabled,
        ...(preference.condition ? { condition: preference.condition } : {}),
      },
    ];
  });
  return preferences.length > 0 ? { preferences } : {};
}

/** The workflow ids some subscriptions' preferences name, each once. */
export const preferenceWorkflowIds = (subscriptions: readonly topicsV1.Subscription[]) => [
  ...new Set(subscriptions.flatMap((subscription) => subscription.preferences.map((preference) => preference.workflowId))),
];

// Shapes of the replies above, for the API description.

export const preferenceWorkflowResponse = z.object({
  id: z.string(),
  identifier: z.string(),
  name: z.string(),
  critical: z.boolean(),
  tags: z.array(z.string()),
  data: z.record(z.string(), z.unknown()).optional(),
  severity: z.string(),
});

export const subscriptionPreferenceResponse = z
  .object({
    subscriptionId: z.string(),
    workflow: preferenceWorkflowResponse.optional(),
    enabled: z.boolean(),
    condition: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: "SubscriptionPreference" });
