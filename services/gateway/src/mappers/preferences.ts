import { subscribersV1 } from "@notify/proto";
import { perChannel, WEEKDAYS, type WeekdayName } from "@notify/runtime";
import { z } from "zod";
import { iso, isoDateResponse } from "./common.js";
import { contextBody } from "./context-inputs.js";
import { contextKeyList } from "./messages.js";

const channelFlag = (name: string) => z.boolean({ error: `${name} must be a boolean value` }).optional();

/** The five channel switches, each optional; other keys are dropped. */
export const channelFlags = perChannel(channelFlag);

const channels = z.object(channelFlags, { error: "channels must be an object" });

const text = (name: string) => z.string({ error: `${name} must be a string` });

const daySchedule = z.object({
  isEnabled: z.boolean({ error: "isEnabled must be a boolean value" }),
  hours: z.array(z.object({ start: text("start"), end: text("end") }), { error: "hours must be an array" }).optional(),
});

/** The spec's Schedule; day keys are a closed set, time formats are checked by the service. */
export const schedule = z.object({
  isEnabled: z.boolean({ error: "isEnabled must be a boolean value" }),
  weeklySchedule: z
    .strictObject(Object.fromEntries(WEEKDAYS.map((day) => [day, daySchedule.optional()])) as Record<WeekdayName, z.ZodOptional<typeof daySchedule>>, {
      error: (issue) =>
        issue.code === "unrecognized_keys" ? `weeklySchedule keys must be days of the week (${WEEKDAYS.join(", ")})` : "weeklySchedule must be an object",
    })
    .optional(),
});

/** PATCH /v2/subscribers/{subscriberId}/preferences. `channels` may be left out only when a schedule is sent (as the later SDK does). */
export const updatePreferencesBody = z
  .object({
    channels: channels.optional(),
    // An empty workflowId names no workflow: the global preference changes, as in Novu.
    workflowId: z
      .string({ error: "workflowId must be a string" })
      .transform((id) => id || undefined)
      .optional(),
    schedule: schedule.optional(),
    /** The contexts whose preferences these are (none: those without contexts). */
    context: contextBody.optional(),
  })
  .refine((body) => body.channels !== undefined || body.schedule !== undefined, {
    path: ["channels"],
    message: "channels should not be null or undefined",
  });

/** Novu's cap on PATCH /v2/subscribers/{subscriberId}/preferences/bulk. */
const MAX_BULK_PREFERENCES = 100;

/** PATCH /v2/subscribers/{subscriberId}/preferences/bulk */
export const bulkPreferencesBody = z.object({
  preferences: z
    .array(z.object({ workflowId: z.string({ error: "workflowId must be a string" }).min(1, "workflowId should not be empty"), channels }), {
      error: "preferences must be an array",
    })
    .max(MAX_BULK_PREFERENCES, `preferences must contain no more than ${MAX_BULK_PREFERENCES} elements`),
  context: contextBody.optional(),
});

export const bulkPreferencesRequestOf = (subscriberId: string, body: z.infer<typeof bulkPreferencesBody>) => ({
  subscriberId,
  updates: body.preferences.map((entry) => ({ workflowId: entry.workflowId, channels: channelsRequestOf(entry.channels) })),
});

const CRITICALITY = {
  critical: subscribersV1.Criticality.CRITICAL,
  nonCritical: subscribersV1.Criticality.NON_CRITICAL,
  all: subscribersV1.Criticality.ALL,
} as const;

/** Which workflows a preferences listing shows, nonCritical by default. */
export const criticality = z
  .enum(Object.keys(CRITICALITY) as [keyof typeof CRITICALITY], { error: "criticality must be one of the following values: critical, nonCritical, all" })
  .default("nonCritical")
  .transform((value) => CRITICALITY[value]);

/** GET /v2/subscribers/{subscriberId}/preferences: the preferences of the contexts `contextKeys` names (none: those without contexts). */
export const preferencesQuery = z.object({ criticality, contextKeys: contextKeyList.optional() });

type UpdateBody = z.infer<typeof updatePreferencesBody>;

export function updatePreferencesRequestOf(subscriberId: string, body: UpdateBody) {
  return {
    subscriberId,
    ...(body.workflowId !== undefined ? { workflowId: body.workflowId } : {}),
    channels: channelsRequestOf(body.channels ?? {}),
    ...(body.schedule !== undefined ? { schedule: scheduleRequestOf(body.schedule) } : {}),
  };
}

/** Public channel switches as the proto ChannelPreferences. */
export function channelsRequestOf(given: Partial<Record<keyof typeof channelFlags, boolean | undefined>>) {
  return {
    ...(given.email !== undefined ? { email: given.email } : {}),
    ...(given.sms !== undefined ? { sms: given.sms } : {}),
    ...(given.in_app !== undefined ? { inApp: given.in_app } : {}),
    ...(given.chat !== undefined ? { chat: given.chat } : {}),
    ...(given.push !== undefined ? { push: given.push } : {}),
  };
}

export function scheduleRequestOf(given: z.infer<typeof schedule>) {
  const weekly = given.weeklySchedule;
  return {
    isEnabled: given.isEnabled,
    ...(weekly
      ? {
          weeklySchedule: Object.fromEntries(
            WEEKDAYS.flatMap((day) => (weekly[day] ? [[day, { isEnabled: weekly[day].isEnabled, hours: weekly[day].hours ?? [] }]] : [])),
          ),
        }
      : {}),
  };
}

export function channelsToJson(preferences: subscribersV1.ChannelPreferences | undefined) {
  return {
    ...(preferences?.email !== undefined ? { email: preferences.email } : {}),
    ...(preferences?.sms !== undefined ? { sms: preferences.sms } : {}),
    ...(preferences?.inApp !== undefined ? { in_app: preferences.inApp } : {}),
    ...(preferences?.chat !== undefined ? { chat: preferences.chat } : {}),
    ...(preferences?.push !== undefined ? { push: preferences.push } : {}),
  };
}

export function scheduleToJson(stored: subscribersV1.Schedule) {
  const weekly = stored.weeklySchedule;
  return {
    isEnabled: stored.isEnabled,
    ...(weekly
      ? {
          weeklySchedule: Object.fromEntries(
            WEEKDAYS.flatMap((day) => {
              const entry = weekly[day];
              return entry ? [[day, { isEnabled: entry.isEnabled, hours: entry.hours.map(({ start, end }) => ({ start, end })) }]] : [];
            }),
          ),
        }
      : {}),
  };
}

/**
 * `{global, workflows}`. GET shows the stored schedule; the PATCH answer leaves it out, as the
 * spec's update response describes GlobalPreference without schedule.
 */
export function preferencesToJson(reply: subscribersV1.SubscriberPreferences, options: { schedule: boolean }) {
  const global = reply.global;
  return {
    global: {
      enabled: global?.enabled ?? true,
      channels: channelsToJson(global?.channels),
      ...(options.schedule && global?.schedule ? { schedule: scheduleToJson(global.schedule) } : {}),
    },
    workflows: reply.workflows.map((preference) => ({
      enabled: preference.enabled,
      channels: channelsToJson(preference.channels),
      overrides: preference.overrides.map(({ channel, source }) => ({ channel, source })),
      workflow: {
        slug: preference.workflow?.slug ?? "",
        identifier: preference.workflow?.identifier ?? "",
        name: preference.workflow?.name ?? "",
        ...(preference.workflow?.updatedAt ? { updatedAt: iso(preference.workflow.updatedAt) } : {}),
      },
    })),
  };
}

// Shapes of the replies above, for the API description.

export const channelChoicesResponse = z
  .object({
    email: z.boolean().optional(),
    sms: z.boolean().optional(),
    in_app: z.boolean().optional(),
    chat: z.boolean().optional(),
    push: z.boolean().optional(),
  })
  .meta({ id: "ChannelPreferences" });

const dayResponse = z.object({ isEnabled: z.boolean(), hours: z.array(z.object({ start: z.string(), end: z.string() })) });

/** What scheduleToJson answers. */
export const scheduleResponse = z.object({ isEnabled: z.boolean(), weeklySchedule: z.partialRecord(z.enum(WEEKDAYS), dayResponse).optional() });

export const overridesResponse = z.array(z.object({ channel: z.string(), source: z.string() }));

/** What preferencesToJson answers; `schedule` only on GET. */
export const preferencesResponse = z.object({
  global: z.object({
    enabled: z.boolean(),
    channels: channelChoicesResponse,
    schedule: scheduleResponse.optional(),
  }),
  workflows: z.array(
    z.object({
      enabled: z.boolean(),
      channels: channelChoicesResponse,
      overrides: overridesResponse,
      workflow: z.object({ slug: z.string(), identifier: z.string(), name: z.string(), updatedAt: isoDateResponse.optional() }),
    }),
  ),
});
