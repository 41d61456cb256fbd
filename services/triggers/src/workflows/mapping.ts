import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { workflowsV1 } from "@notify/proto";
import { workflowSlug } from "./slug.js";
import type { ActiveWorkflowRow, ChannelSettings, FeedRow, GroupRow, WorkflowRow } from "./store.js";

const { StepSchema } = workflowsV1;

/** Steps are stored as their proto JSON, so every field the contract has is kept as it is. */
export const stepsToJson = (steps: readonly workflowsV1.Step[]): JsonValue[] => steps.map((step) => toJson(StepSchema, step));

/** Rows outlive schema versions: a field a later version dropped is skipped, not an error. */
export const stepsFromJson = (stored: readonly unknown[]): workflowsV1.Step[] =>
  stored.map((step) => fromJson(StepSchema, step as JsonValue, { ignoreUnknownFields: true }));

/** Channel settings as stored: all five channels, the given ones over the default "enabled". */
export function channelSettings(given: workflowsV1.ChannelPreferences | undefined): ChannelSettings {
  return {
    email: given?.email ?? true,
    sms: given?.sms ?? true,
    in_app: given?.inApp ?? true,
    chat: given?.chat ?? true,
    push: given?.push ?? true,
  };
}

const channelPreferences = (settings: ChannelSettings) =>
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
    notificationGroupId: row.notification_group_id,
    notificationGroup: {
      id: row.notification_group_id,
      organizationId: row.group_organization_id,
      environmentId: row.environment_id,
      name: row.group_name,
      ...(row.group_parent_id === null ? {} : { parentId: row.group_parent_id }),
    },
    ...(row.data === null ? {} : { data: row.data as JsonObject }),
    deleted: row.deleted,
    ...(row.deleted_at === null ? {} : { deletedAt: timestampFromDate(row.deleted_at) }),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
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
  });
}
