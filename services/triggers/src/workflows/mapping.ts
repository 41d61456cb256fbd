import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { workflowsV1 } from "@notify/proto";
import { Severity, severityNamed } from "@notify/runtime";
import { workflowSlug } from "./slug.js";
import type { ActiveWorkflowRow, ChannelSettings, FeedRow, GroupRow, TemplateEngineName, WorkflowRow } from "./store.js";

const { StepSchema } = workflowsV1;

/** Steps are stored as their proto JSON, so every field the contract has is kept as it is. */
export const stepsToJson = (steps: readonly workflowsV1.Step[]): JsonValue[] => steps.map((step) => toJson(StepSchema, step));

/** Rows outlive schema versions: a field a later version dropped is skipped, not an error. */
export const stepsFromJson = (stored: readonly unknown[]): workflowsV1.Step[] =>
  stored.map((step) => fromJson(StepSchema, step as JsonValue, { ignoreUnknownFields: true }));

/** The channels a request sets, named as stored. */
export function givenChannelSettings(given: workflowsV1.ChannelPreferences | undefined): Partial<ChannelSettings> {
  const settings: Partial<ChannelSettings> = {};
  if (given?.email !== undefined) settings.email = given.email;
  if (given?.sms !== undefined) settings.sms = given.sms;
  if (given?.inApp !== undefined) settings.in_app = given.inApp;
  if (given?.chat !== undefined) settings.chat = given.chat;
  if (given?.push !== undefined) settings.push = given.push;
  return settings;
}

/** Channel settings as stored: all five channels, the given ones over the default "enabled". */
export function channelSettings(given: workflowsV1.ChannelPreferences | undefined): ChannelSettings {
  return { email: true, sms: true, in_app: true, chat: true, push: true, ...givenChannelSettings(given) };
}

/** What v2's two preference levels merge to: the user level over the workflow level, a channel not named following its level's `enabled`. */
type ChannelField = "email" | "sms" | "inApp" | "chat" | "push";

/** A level's setting for a channel: the channel's own, else the level's `enabled`; undefined without the level. */
const levelChannel = (level: workflowsV1.PreferenceLevel | undefined, name: ChannelField) => (level ? (level.channels?.[name] ?? level.enabled) : undefined);

/** What v2's two preference levels merge to: the user level over the workflow level. */
export function mergedPreferences(levels: workflowsV1.PreferenceLevels): { critical: boolean; settings: ChannelSettings } {
  const merged = (name: ChannelField) => levelChannel(levels.user, name) ?? levelChannel(levels.workflow, name) ?? true;
  return {
    critical: levels.user?.readOnly ?? levels.workflow?.readOnly ?? false,
    settings: { email: merged("email"), sms: merged("sms"), in_app: merged("inApp"), chat: merged("chat"), push: merged("push") },
  };
}

export const preferenceLevelsToJson = (levels: workflowsV1.PreferenceLevels): Record<string, unknown> =>
  toJson(workflowsV1.PreferenceLevelsSchema, levels) as Record<string, unknown>;

const preferenceLevelsFromJson = (stored: Record<string, unknown>) =>
  fromJson(workflowsV1.PreferenceLevelsSchema, stored as JsonValue, { ignoreUnknownFields: true });

export const channelPreferences = (settings: ChannelSettings) =>
  create(workflowsV1.ChannelPreferencesSchema, {
    email: settings.email,
    sms: settings.sms,
    inApp: settings.in_app,
    chat: settings.chat,
    push: settings.push,
  });

export function groupFromRow(row: GroupRow): workflowsV1.NotificationGroup {
  return create(workflowsV1.NotificationGroupSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    name: row.name,
    ...(row.parent_id === null ? {} : { parentId: row.parent_id }),
  });
}

export function feedFromRow(row: FeedRow): workflowsV1.Feed {
  return create(workflowsV1.FeedSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    name: row.name,
    identifier: row.identifier,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

function preferenceLevelsOf(stored: Record<string, unknown> | null) {
  if (stored === null) return {};
  const levels = preferenceLevelsFromJson(stored);
  return { ...(levels.workflow ? { workflowPreferences: levels.workflow } : {}), ...(levels.user ? { userPreferences: levels.user } : {}) };
}

const { HANDLEBARS, LIQUID } = workflowsV1.TemplateEngine;

export const templateEngineOf = (name: TemplateEngineName) => (name === "liquid" ? LIQUID : HANDLEBARS);

/** The column's value for an engine a create asks for; handlebars when it names none. */
export const templateEngineName = (engine: workflowsV1.TemplateEngine): TemplateEngineName => (engine === LIQUID ? "liquid" : "handlebars");

export function workflowFromRow(row: WorkflowRow): workflowsV1.Workflow {
  return create(workflowsV1.WorkflowSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    creatorId: row.creator_id,
    name: row.name,
    description: row.description,
    active: row.active,
    draft: row.draft,
    critical: row.critical,
    tags: row.tags,
    preferenceSettings: channelPreferences(row.preference_settings),
    steps: stepsFromJson(row.steps),
    identifier: row.trigger_identifier,
    slug: workflowSlug(row.name, row.id),
    variables: row.variables,
    subscriberVariables: row.subscriber_variables,
    environmentVariables: row.environment_variables,
    notificationGroupId: row.notification_group_id,
    notificationGroup: {
      id: row.notification_group_id,
      organizationId: row.group_organization_id,
      environmentId: row.environment_id,
      name: row.group_name,
      ...(row.group_parent_id === null ? {} : { parentId: row.group_parent_id }),
    },
    ...(row.data === null ? {} : { data: row.data as JsonObject }),
    severity: severityNamed(row.severity) ?? Severity.NONE,
    validatePayload: row.validate_payload,
    ...(row.payload_schema === null ? {} : { payloadSchema: row.payload_schema as JsonObject }),
    ...preferenceLevelsOf(row.preference_levels),
    templateEngine: templateEngineOf(row.template_engine),
    deleted: row.deleted,
    ...(row.deleted_at === null ? {} : { deletedAt: timestampFromDate(row.deleted_at) }),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
    ...(row.last_triggered_at === null ? {} : { lastTriggeredAt: timestampFromDate(row.last_triggered_at) }),
  });
}

export function activeWorkflowFromRow(row: ActiveWorkflowRow): workflowsV1.ActiveWorkflow {
  return create(workflowsV1.ActiveWorkflowSchema, {
    id: row.id,
    identifier: row.trigger_identifier,
    name: row.name,
    slug: workflowSlug(row.name, row.id),
    critical: row.critical,
    preferenceSettings: channelPreferences(row.preference_settings),
    channels: row.active_channels,
    updatedAt: timestampFromDate(row.updated_at),
    tags: row.tags,
    severity: severityNamed(row.severity) ?? Severity.NONE,
  });
}
