import type { MessageInitShape } from "@bufbuild/protobuf";
import { severityName, WEEKDAYS, type FieldErrors } from "@notify/runtime";
import { subscribersV1, type workflowsV1 } from "@notify/proto";
import { PREFERENCE_CHANNELS, type PerChannel, type PreferenceChannel, type PreferenceRow } from "./store.js";

type ChannelPreferencesInit = MessageInitShape<typeof subscribersV1.ChannelPreferencesSchema>;
type WorkflowPreferenceInit = MessageInitShape<typeof subscribersV1.WorkflowPreferenceSchema>;

/** The channels a subscriber has set at one layer; absent keys are not set there. */
export type ChannelChoices = Partial<Record<PreferenceChannel, boolean>>;

/** What resolution needs of a workflow. */
export interface WorkflowFacts {
  id: string;
  critical: boolean;
  /** The workflow's preference settings (its layer over the default "enabled"). */
  settings: ChannelChoices;
}

const isChannel = (value: string): value is PreferenceChannel => (PREFERENCE_CHANNELS as readonly string[]).includes(value);

/** Proto field names differ from the public channel names only for in_app. */
const FIELD_OF = { in_app: "inApp", email: "email", sms: "sms", chat: "chat", push: "push" } as const;

/** The set channels of a proto ChannelPreferences (subscribers' or workflows', which share the shape). */
export function choicesOf(preferences: subscribersV1.ChannelPreferences | workflowsV1.ChannelPreferences | undefined): ChannelChoices {
  const choices: ChannelChoices = {};
  for (const channel of PREFERENCE_CHANNELS) {
    const value = preferences?.[FIELD_OF[channel]];
    if (value !== undefined) choices[channel] = value;
  }
  return choices;
}

export function choicesOfRow(row: PreferenceRow | undefined): ChannelChoices {
  const choices: ChannelChoices = {};
  if (!row) return choices;
  for (const channel of PREFERENCE_CHANNELS) {
    const value = row[channel];
    if (value !== null) choices[channel] = value;
  }
  return choices;
}

/** Choices as the store writes them: null where not given. */
export const perChannel = <T>(choices: Partial<Record<PreferenceChannel, T>>): PerChannel<T> =>
  Object.fromEntries(PREFERENCE_CHANNELS.map((channel) => [channel, choices[channel] ?? null])) as PerChannel<T>;

export const toChannelPreferences = (choices: ChannelChoices): ChannelPreferencesInit =>
  Object.fromEntries(Object.entries(choices).map(([channel, value]) => [FIELD_OF[channel as PreferenceChannel], value]));

export interface Resolved {
  enabled: boolean;
  /** "subscriber" when a subscriber layer decided, "template" when the workflow did. */
  source: "subscriber" | "template";
}

/**
 * One channel of one workflow: enabled by default, then the workflow's settings, then the
 * subscriber's global choice, then the subscriber's choice for the workflow. Critical workflows
 * stop after their own settings.
 */
export function resolveChannel(workflow: WorkflowFacts, global: ChannelChoices, own: ChannelChoices, channel: PreferenceChannel): Resolved {
  if (!workflow.critical) {
    const chosen = own[channel] ?? global[channel];
    if (chosen !== undefined) return { enabled: chosen, source: "subscriber" };
  }
  return { enabled: workflow.settings[channel] ?? true, source: "template" };
}

/** All five channels of a workflow for one subscriber (what the worker asks). */
export function resolveAll(workflow: WorkflowFacts, global: ChannelChoices, own: ChannelChoices): ChannelChoices {
  return Object.fromEntries(PREFERENCE_CHANNELS.map((channel) => [channel, resolveChannel(workflow, global, own, channel).enabled]));
}

export function workflowFactsOf(workflow: { id: string; critical: boolean; preferenceSettings?: workflowsV1.ChannelPreferences | undefined }): WorkflowFacts {
  return { id: workflow.id, critical: workflow.critical, settings: choicesOf(workflow.preferenceSettings) };
}

/** A workflow's severity by name ("none" when it has none). */
const severityOf = (workflow: workflowsV1.ActiveWorkflow) => severityName(workflow.severity) ?? "none";

/** Which workflows a listing shows: by criticality, and by any of the tags and severities when given. */
export function workflowFilter(request: { criticality: subscribersV1.Criticality; tags: readonly string[]; severities: readonly string[] }) {
  const critical = criticalityFilter(request.criticality);
  const tags = new Set(request.tags);
  const severities = new Set(request.severities);
  return (workflow: workflowsV1.ActiveWorkflow) =>
    critical(workflow.critical) &&
    (severities.size === 0 || severities.has(severityOf(workflow))) &&
    (tags.size === 0 || workflow.tags.some((tag) => tags.has(tag)));
}

function criticalityFilter(criticality: subscribersV1.Criticality): (critical: boolean) => boolean {
  switch (criticality) {
    case subscribersV1.Criticality.CRITICAL:
      return (critical) => critical;
    case subscribersV1.Criticality.ALL:
      return () => true;
    default:
      return (critical) => !critical;
  }
}

/**
 * A subscriber's preferences over the active workflows: per workflow the channels of its active
 * steps with the layer that decided each; globally the subscriber's global choices over
 * "enabled", for the channels of the non-critical workflows. With `everyChannel`, all five
 * channels in both.
 */
export function subscriberPreferences(
  workflows: readonly workflowsV1.ActiveWorkflow[],
  rows: readonly PreferenceRow[],
  listed: (workflow: workflowsV1.ActiveWorkflow) => boolean,
  everyChannel = false,
): { global: { enabled: boolean; channels: ChannelPreferencesInit }; workflows: WorkflowPreferenceInit[] } {
  const global = choicesOfRow(rows.find((row) => row.workflow_id === null));
  const ownById = new Map(rows.filter((row) => row.workflow_id !== null).map((row) => [row.workflow_id, choicesOfRow(row)]));
  const globalChannels = new Set<PreferenceChannel>();
  const listedWorkflows: WorkflowPreferenceInit[] = [];
  for (const workflow of workflows) {
    const channels = workflow.channels.filter(isChannel);
    if (!workflow.critical) for (const channel of channels) globalChannels.add(channel);
    if (!listed(workflow)) continue;
    const facts = workflowFactsOf(workflow);
    const own = ownById.get(workflow.id) ?? {};
    const resolved = (everyChannel ? PREFERENCE_CHANNELS : channels).map((channel) => ({ channel, ...resolveChannel(facts, global, own, channel) }));
    listedWorkflows.push({
      enabled: true,
      channels: toChannelPreferences(Object.fromEntries(resolved.map(({ channel, enabled }) => [channel, enabled]))),
      overrides: resolved.map(({ channel, source }) => ({ channel, source })),
      workflow: {
        id: workflow.id,
        slug: workflow.slug,
        identifier: workflow.identifier,
        name: workflow.name,
        ...(workflow.updatedAt ? { updatedAt: workflow.updatedAt } : {}),
        critical: workflow.critical,
        tags: workflow.tags,
        severity: severityOf(workflow),
      },
    });
  }
  const globalChoices = Object.fromEntries(
    PREFERENCE_CHANNELS.filter((channel) => everyChannel || globalChannels.has(channel)).map((channel) => [channel, global[channel] ?? true]),
  );
  return { global: { enabled: true, channels: toChannelPreferences(globalChoices) }, workflows: listedWorkflows };
}

const MAX_RANGES_PER_DAY = 24;
const TIME_24H = /^([01]\d|2[0-3]):[0-5]\d$/;
const TIME_12H = /^(0?[1-9]|1[0-2]):[0-5]\d ?[AaPp][Mm]$/;

export const isScheduleTime = (value: string) => TIME_24H.test(value) || TIME_12H.test(value);

/** The value rules of a schedule, by public field path (e.g. schedule.weeklySchedule.monday.hours[0].start). */
export function scheduleErrors(schedule: subscribersV1.Schedule): FieldErrors {
  const errors: FieldErrors = {};
  for (const day of WEEKDAYS) {
    const hours = schedule.weeklySchedule?.[day]?.hours ?? [];
    const path = `schedule.weeklySchedule.${day}.hours`;
    if (hours.length > MAX_RANGES_PER_DAY) {
      errors[path] = { messages: [`hours must contain no more than ${MAX_RANGES_PER_DAY} elements`] };
      continue;
    }
    hours.forEach((range, index) => {
      for (const end of ["start", "end"] as const) {
        if (!isScheduleTime(range[end])) {
          errors[`${path}[${index}].${end}`] = { messages: [`${end} must be a time as HH:MM or hh:mm AM/PM`], value: range[end] };
        }
      }
    });
  }
  return errors;
}
