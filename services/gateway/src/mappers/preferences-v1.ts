import type { subscribersV1 } from "@notify/proto";
import { CHANNELS, type ChannelName } from "@notify/runtime";
import { z } from "zod";
import { queryBool } from "../validation.js";
import { channelChoicesResponse, channelsRequestOf, channelsToJson, overridesResponse } from "./preferences.js";

/**
 * Novu's v1 preferences (GET/PATCH /v1/subscribers/{id}/preferences…, which @novu/node calls),
 * answered from the same store and rules as the v2 API.
 */

export const preferencesV1Query = z.object({ includeInactiveChannels: queryBool.default(true) });

/**
 * GET /v1/subscribers/{subscriberId}/preferences/{parameter}, the level (global or template), and
 * PATCH …/{parameter}, the workflow: one name for both, as Novu has it, since one path cannot name
 * its last segment twice (OpenAPI holds such paths the same).
 */
export const preferenceLevelParams = z.object({
  subscriberId: z.string().min(1),
  parameter: z.enum(["global", "template"], { error: "the level must be global or template" }),
});

export const workflowPreferenceParams = z.object({ subscriberId: z.string().min(1), parameter: z.string().min(1) });

const channelType = z.enum(CHANNELS, { error: `type must be one of ${CHANNELS.join(", ")}` });
const enabled = z.boolean({ error: "enabled must be a boolean value" });

/**
 * A workflow's preference is kept per channel only (its `enabled` is always true), so turning a
 * whole preference off is refused rather than stored as something it is not.
 */
const onlyTrue = enabled.optional().refine((value) => value !== false, "enabled: false is not supported; turn the channels off instead");

/** PATCH /v1/subscribers/{subscriberId}/preferences/{templateId} */
export const workflowPreferenceV1Body = z.object({ channel: z.object({ type: channelType, enabled }).optional(), enabled: onlyTrue });

/** PATCH /v1/subscribers/{subscriberId}/preferences */
export const globalPreferenceV1Body = z.object({
  preferences: z
    .array(z.object({ type: channelType, enabled }), { error: "preferences must be an array" })
    .max(CHANNELS.length * 2, "preferences must contain no more than 10 elements")
    .optional(),
  enabled: onlyTrue,
});

type ChannelChoice = { type: ChannelName; enabled: boolean };

/** The proto channel switches of a list of `{type, enabled}` choices (the last one of a channel wins). */
export function channelChoicesOf(choices: readonly ChannelChoice[]) {
  return channelsRequestOf(Object.fromEntries(choices.map((choice) => [choice.type, choice.enabled])));
}

/** `{preference: {enabled, channels}}`, the global preference. */
export function globalPreferenceV1ToJson(global: subscribersV1.GlobalPreference | undefined) {
  return { preference: { enabled: global?.enabled ?? true, channels: channelsToJson(global?.channels) } };
}

/** `{template, preference}`, one workflow's preference. */
export function workflowPreferenceV1ToJson(preference: subscribersV1.WorkflowPreference) {
  const workflow = preference.workflow;
  return {
    template: {
      _id: workflow?.id ?? "",
      name: workflow?.name ?? "",
      critical: workflow?.critical ?? false,
      tags: workflow?.tags ?? [],
      triggers: [{ type: "event", identifier: workflow?.identifier ?? "", variables: [] }],
    },
    preference: {
      enabled: preference.enabled,
      channels: channelsToJson(preference.channels),
      overrides: preference.overrides.map(({ channel, source }) => ({ channel, source })),
    },
  };
}

// Shapes of the replies above, for the API description.

export const globalPreferenceV1Response = z.object({ preference: z.object({ enabled: z.boolean(), channels: channelChoicesResponse }) });

export const workflowPreferenceV1Response = z
  .object({
    template: z.object({
      _id: z.string(),
      name: z.string(),
      critical: z.boolean(),
      tags: z.array(z.string()),
      triggers: z.array(z.object({ type: z.literal("event"), identifier: z.string(), variables: z.array(z.never()) })),
    }),
    preference: z.object({ enabled: z.boolean(), channels: channelChoicesResponse, overrides: overridesResponse }),
  })
  .meta({ id: "WorkflowPreferenceV1" });

export const workflowPreferencesV1Response = z.array(workflowPreferenceV1Response);

/** GET …/preferences/{parameter}: the global preference alone for `global`, else every workflow's. */
export const preferencesByLevelV1Response = z.union([z.tuple([globalPreferenceV1Response]), workflowPreferencesV1Response]);
