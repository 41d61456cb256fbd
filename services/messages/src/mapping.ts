import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { messagesV1 } from "@notify/proto";
import { channelName, channelNamed, Severity, severityName, severityNamed } from "@notify/runtime";
import type {
  ActivityDayRow,
  AttemptRow,
  ExecutionDetailRow,
  ProviderEventRow,
  InboxBulkChangeName,
  InboxChangeName,
  MarkAsName,
  MessageGroupRow,
  MessageRow,
  NotificationRow,
  NotificationTraitsRow,
  StatusName,
  StepJobGroupRow,
  StepJobRecord,
  StepJobStatus,
} from "./store.js";

const { MarkAs, MessageStatus, MessageSchema, MessageCtaSchema, EmailBlockSchema, EmailBlocksSchema } = messagesV1;

export const STATUS_NAMES: Record<Exclude<messagesV1.MessageStatus, messagesV1.MessageStatus.UNSPECIFIED>, StatusName> = {
  [MessageStatus.SENT]: "sent",
  [MessageStatus.ERROR]: "error",
  [MessageStatus.WARNING]: "warning",
};

const STATUSES_BY_NAME = Object.fromEntries(Object.entries(STATUS_NAMES).map(([value, name]) => [name, Number(value)])) as Record<
  StatusName,
  messagesV1.MessageStatus
>;

const MARK_AS_NAMES: Record<Exclude<messagesV1.MarkAs, messagesV1.MarkAs.UNSPECIFIED>, MarkAsName> = {
  [MarkAs.READ]: "read",
  [MarkAs.SEEN]: "seen",
  [MarkAs.UNREAD]: "unread",
  [MarkAs.UNSEEN]: "unseen",
};

const INBOX_CHANGE_NAMES: Record<Exclude<messagesV1.InboxChange, messagesV1.InboxChange.UNSPECIFIED>, InboxChangeName> = {
  [messagesV1.InboxChange.READ]: "read",
  [messagesV1.InboxChange.UNREAD]: "unread",
  [messagesV1.InboxChange.SEEN]: "seen",
  [messagesV1.InboxChange.ARCHIVE]: "archive",
  [messagesV1.InboxChange.UNARCHIVE]: "unarchive",
  [messagesV1.InboxChange.SNOOZE]: "snooze",
  [messagesV1.InboxChange.UNSNOOZE]: "unsnooze",
  [messagesV1.InboxChange.COMPLETE]: "complete",
  [messagesV1.InboxChange.REVERT]: "revert",
};

export const inboxChangeOf = (change: messagesV1.InboxChange): InboxChangeName | undefined => INBOX_CHANGE_NAMES[change as keyof typeof INBOX_CHANGE_NAMES];

const INBOX_BULK_CHANGE_NAMES: Record<Exclude<messagesV1.InboxBulkChange, messagesV1.InboxBulkChange.UNSPECIFIED>, InboxBulkChangeName | "delete"> = {
  [messagesV1.InboxBulkChange.SEEN]: "seen",
  [messagesV1.InboxBulkChange.READ]: "read",
  [messagesV1.InboxBulkChange.ARCHIVE]: "archive",
  [messagesV1.InboxBulkChange.ARCHIVE_READ]: "archive_read",
  [messagesV1.InboxBulkChange.DELETE]: "delete",
};

export const inboxBulkChangeOf = (change: messagesV1.InboxBulkChange): InboxBulkChangeName | "delete" | undefined =>
  INBOX_BULK_CHANGE_NAMES[change as keyof typeof INBOX_BULK_CHANGE_NAMES];

const ACTION_TYPE_NAMES: Record<Exclude<messagesV1.InboxActionType, messagesV1.InboxActionType.UNSPECIFIED>, "primary" | "secondary"> = {
  [messagesV1.InboxActionType.PRIMARY]: "primary",
  [messagesV1.InboxActionType.SECONDARY]: "secondary",
};

export const actionTypeName = (type: messagesV1.InboxActionType): "primary" | "secondary" | undefined =>
  ACTION_TYPE_NAMES[type as keyof typeof ACTION_TYPE_NAMES];

export const markAsName = (markAs: messagesV1.MarkAs): MarkAsName | undefined => MARK_AS_NAMES[markAs as keyof typeof MARK_AS_NAMES];

// Calls to action and email blocks are stored as their proto JSON; the gateway renders the public shape.

function contentToJson(content: messagesV1.NewMessage["content"]): string | JsonValue[] | null {
  if (content.case === "text") return content.value;
  if (content.case === "blocks") return content.value.blocks.map((block) => toJson(EmailBlockSchema, block));
  return null;
}

function contentFromJson(content: MessageRow["content"]): messagesV1.Message["content"] {
  if (typeof content === "string") return { case: "text", value: content };
  if (Array.isArray(content)) {
    return { case: "blocks", value: create(EmailBlocksSchema, { blocks: content.map((block) => fromJson(EmailBlockSchema, block as JsonValue)) }) };
  }
  return { case: undefined };
}

/**
 * What a notification keeps, as the store writes it; without traits (a caller of an older build),
 * `fallback`'s severity and tags: its first message's, which are its workflow's.
 */
function notificationTraitsRow(
  traits: messagesV1.NotificationTraits | undefined,
  fallback: Pick<NotificationTraitsRow, "severity" | "tags"> = { severity: "none", tags: [] },
): NotificationTraitsRow {
  if (!traits) return { ...fallback, critical: false, topics: null };
  return {
    severity: severityName(traits.severity) ?? "none",
    critical: traits.critical,
    tags: traits.tags,
    topics: traits.topics.length > 0 ? traits.topics.map((topic) => ({ topicId: topic.topicId, topicKey: topic.topicKey })) : null,
  };
}

/** What the messages of a group share, as the store writes it (their own ids come apart). */
export function messageGroupRow(message: messagesV1.NewMessage, grp: number): MessageGroupRow {
  const severity = severityName(message.severity) ?? "none";
  return {
    grp,
    template_id: message.templateId,
    template_identifier: message.templateIdentifier ?? null,
    message_template_id: message.messageTemplateId,
    step_id: message.stepId,
    job_id: message.jobId ?? null,
    transaction_id: message.transactionId,
    channel: channelName(message.channel)!,
    content: contentToJson(message.content),
    subject: message.subject ?? null,
    title: message.title ?? null,
    email: message.email ?? null,
    phone: message.phone ?? null,
    direct_webhook_url: message.directWebhookUrl ?? null,
    provider_id: message.providerId ?? null,
    device_tokens: message.deviceTokens,
    cta: message.cta ? (toJson(MessageCtaSchema, message.cta) as JsonObject) : {},
    avatar: message.avatar ?? null,
    actor: message.actor ? { type: message.actor.type, ...(message.actor.data !== undefined ? { data: message.actor.data } : {}) } : null,
    feed_id: message.feedId ?? null,
    feed_identifier: message.feedIdentifier ?? null,
    status: message.status === MessageStatus.UNSPECIFIED ? "sent" : STATUS_NAMES[message.status as keyof typeof STATUS_NAMES],
    error_id: message.errorId ?? null,
    error_text: message.errorText ?? null,
    delivered_at: message.deliveredAt.map((timestamp) => timestampDate(timestamp)),
    payload: message.payload ?? null,
    overrides: message.overrides ?? null,
    severity,
    tags: message.tags,
    data: message.data ?? null,
    context_keys: message.contextKeys,
    destination: message.destination,
    notification: notificationTraitsRow(message.notification, { severity, tags: message.tags }),
  };
}

/**
 * A stored message as its proto. The fields every message has go through `create`; the optional
 * ones are set only when present, by assignment: an object spread per optional field made this
 * cost more than encoding the message.
 */
export function messageFromRow(row: MessageRow): messagesV1.Message {
  const message = create(MessageSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    notificationId: row.notification_id,
    subscriberId: row.subscriber_id,
    externalSubscriberId: row.external_subscriber_id,
    templateId: row.template_id,
    messageTemplateId: row.message_template_id,
    stepId: row.step_id,
    transactionId: row.transaction_id,
    channel: channelNamed(row.channel)!,
    content: contentFromJson(row.content),
    deviceTokens: row.device_tokens,
    cta: fromJson(MessageCtaSchema, row.cta as JsonObject),
    status: STATUSES_BY_NAME[row.status],
    read: row.read,
    seen: row.seen,
    deliveredAt: row.delivered_at.map((date) => timestampFromDate(date)),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
    archived: row.archived,
    severity: severityNamed(row.severity) ?? Severity.NONE,
    tags: row.tags,
    contextKeys: row.context_keys,
  });
  if (row.template_identifier !== null) message.templateIdentifier = row.template_identifier;
  if (row.job_id !== null) message.jobId = row.job_id;
  if (row.subject !== null) message.subject = row.subject;
  if (row.title !== null) message.title = row.title;
  if (row.email !== null) message.email = row.email;
  if (row.phone !== null) message.phone = row.phone;
  if (row.direct_webhook_url !== null) message.directWebhookUrl = row.direct_webhook_url;
  if (row.provider_id !== null) message.providerId = row.provider_id;
  if (row.avatar !== null) message.avatar = row.avatar;
  if (row.actor !== null) message.actor = create(messagesV1.MessageActorSchema, row.actor);
  if (row.feed_id !== null) message.feedId = row.feed_id;
  if (row.feed_identifier !== null) message.feedIdentifier = row.feed_identifier;
  if (row.error_id !== null) message.errorId = row.error_id;
  if (row.error_text !== null) message.errorText = row.error_text;
  if (row.last_seen_date !== null) message.lastSeenDate = timestampFromDate(row.last_seen_date);
  if (row.last_read_date !== null) message.lastReadDate = timestampFromDate(row.last_read_date);
  if (row.snoozed_until !== null) message.snoozedUntil = timestampFromDate(row.snoozed_until);
  if (row.payload !== null) message.payloadJson = row.payload;
  if (row.overrides !== null) message.overridesJson = row.overrides;
  if (row.archived_at !== null) message.archivedAt = timestampFromDate(row.archived_at);
  if (row.first_seen_date !== null) message.firstSeenDate = timestampFromDate(row.first_seen_date);
  if (row.data !== null) message.data = row.data as JsonObject;
  return message;
}

const ATTEMPT_STATUS_NAMES: Record<Exclude<messagesV1.AttemptStatus, messagesV1.AttemptStatus.UNSPECIFIED>, AttemptRow["status"]> = {
  [messagesV1.AttemptStatus.SUCCESS]: "success",
  [messagesV1.AttemptStatus.FAILED]: "failed",
};

export const attemptStatusName = (status: messagesV1.AttemptStatus): AttemptRow["status"] | undefined =>
  ATTEMPT_STATUS_NAMES[status as keyof typeof ATTEMPT_STATUS_NAMES];

/** A checked attempt as its row; `id` is the new row's id. */
export function attemptRow(attempt: messagesV1.DeliveryAttempt, status: AttemptRow["status"], id: string): AttemptRow {
  return {
    id,
    message_id: attempt.messageId,
    attempt: attempt.attempt,
    provider_id: attempt.providerId,
    status,
    error_id: attempt.errorId ?? null,
    error_text: attempt.errorText ?? null,
    provider_message_id: attempt.providerMessageId ?? null,
    detail: attempt.detail,
    started_at: attempt.startedAt ? timestampDate(attempt.startedAt) : new Date(),
    duration_ms: attempt.durationMs,
  };
}

export function providerEventRow(event: messagesV1.ProviderEvent, id: string): ProviderEventRow {
  return {
    id,
    provider_message_id: event.providerMessageId,
    status: event.status,
    occurred_at: event.occurredAt ? timestampDate(event.occurredAt) : new Date(),
    external_id: event.externalId ?? null,
    attempts: event.attempts ?? null,
    response: event.response ?? null,
    raw: event.raw,
  };
}

/** A send attempt, or the event its provider reported (only one of `attempt` and `event` is set). */
function executionDetailKindOf(row: ExecutionDetailRow): { attempt: messagesV1.DeliveryAttempt } | { event: messagesV1.ProviderEvent } {
  if (row.kind === "event") {
    return {
      event: create(messagesV1.ProviderEventSchema, {
        providerId: row.provider_id,
        providerMessageId: row.provider_message_id,
        status: row.status,
        occurredAt: timestampFromDate(row.occurred_at),
        ...(row.external_id !== null ? { externalId: row.external_id } : {}),
        ...(row.attempts !== null ? { attempts: row.attempts } : {}),
        ...(row.response !== null ? { response: row.response } : {}),
        raw: row.raw,
      }),
    };
  }
  return {
    attempt: create(messagesV1.DeliveryAttemptSchema, {
      messageId: row.message_id,
      attempt: row.attempt,
      providerId: row.provider_id,
      status: row.status === "success" ? messagesV1.AttemptStatus.SUCCESS : messagesV1.AttemptStatus.FAILED,
      ...(row.error_id !== null ? { errorId: row.error_id } : {}),
      ...(row.error_text !== null ? { errorText: row.error_text } : {}),
      ...(row.provider_message_id !== null ? { providerMessageId: row.provider_message_id } : {}),
      startedAt: timestampFromDate(row.started_at),
      durationMs: row.duration_ms,
      detail: row.detail,
    }),
  };
}

function executionDetailFromRow(row: ExecutionDetailRow): messagesV1.ExecutionDetail {
  return create(messagesV1.ExecutionDetailSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    notificationId: row.notification_id,
    templateId: row.template_id,
    subscriberId: row.subscriber_id,
    messageId: row.message_id,
    ...(row.job_id !== null ? { jobId: row.job_id } : {}),
    transactionId: row.transaction_id,
    channel: channelNamed(row.channel)!,
    ...executionDetailKindOf(row),
    createdAt: timestampFromDate(row.created_at),
  });
}

/** A step's job group as stored: the details it adds are stamped `at` now when they name no time. */
export function stepJobGroupRow(group: messagesV1.StepJobGroup, grp: number, status: StepJobStatus, now: Date): StepJobGroupRow {
  return {
    grp,
    transaction_id: group.transactionId,
    template_id: group.templateId,
    template_identifier: group.templateIdentifier ?? null,
    payload: group.payload ?? null,
    step_id: group.stepId,
    message_template_id: group.messageTemplateId,
    type: group.type,
    status,
    digest: group.digest ?? null,
    later:
      group.later.length > 0
        ? group.later.map((step) => ({ stepId: step.stepId, type: step.type, ...(step.providerId !== undefined ? { providerId: step.providerId } : {}) }))
        : null,
    provider_id: group.providerId ?? null,
    notification: notificationTraitsRow(group.notification),
    details: group.details.map((detail) => ({
      detail: detail.detail,
      status: detail.status,
      ...(detail.raw !== undefined ? { raw: detail.raw } : {}),
      at: (detail.createdAt ? timestampDate(detail.createdAt) : now).toISOString(),
    })),
  };
}

function stepJobFromRow(row: StepJobRecord): messagesV1.StepJob {
  return create(messagesV1.StepJobSchema, {
    id: row.id,
    stepId: row.step_id,
    messageTemplateId: row.message_template_id,
    type: row.type,
    status: row.status,
    ...(row.digest_json !== null ? { digestJson: row.digest_json } : {}),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
    later: row.later ?? [],
    ...(row.provider_id !== null ? { providerId: row.provider_id } : {}),
  });
}

/** What a step job went through, as execution details of its notification. */
function stepJobDetailsFromRow(row: StepJobRecord): messagesV1.ExecutionDetail[] {
  return row.details.map((detail) =>
    create(messagesV1.ExecutionDetailSchema, {
      id: detail.id,
      organizationId: row.organization_id,
      environmentId: row.environment_id,
      notificationId: row.notification_id,
      templateId: row.template_id,
      subscriberId: row.subscriber_id,
      messageId: "",
      jobId: row.id,
      transactionId: row.transaction_id,
      stepDetail: { detail: detail.detail, status: detail.status, ...(detail.raw !== undefined ? { raw: detail.raw } : {}), id: detail.id },
      stepType: row.type,
      createdAt: timestampFromDate(new Date(detail.at)),
    }),
  );
}

/** Execution details of sends and of step jobs together, oldest first. */
export function executionDetailsOf(details: readonly ExecutionDetailRow[], stepJobs: readonly StepJobRecord[]): messagesV1.ExecutionDetail[] {
  const all = [...details.map(executionDetailFromRow), ...stepJobs.flatMap(stepJobDetailsFromRow)];
  const at = (detail: messagesV1.ExecutionDetail) => (detail.createdAt ? timestampDate(detail.createdAt).getTime() : 0);
  return stepJobs.length === 0 ? all : all.sort((a, b) => at(a) - at(b));
}

export function notificationFromRow(
  row: NotificationRow,
  messages: readonly MessageRow[],
  details: readonly ExecutionDetailRow[],
  stepJobs: readonly StepJobRecord[],
): messagesV1.Notification {
  return create(messagesV1.NotificationSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    transactionId: row.transaction_id,
    subscriberId: row.subscriber_id,
    externalSubscriberId: row.external_subscriber_id,
    templateId: row.template_id,
    ...(row.template_identifier !== null ? { templateIdentifier: row.template_identifier } : {}),
    ...(row.payload !== null ? { payloadJson: row.payload } : {}),
    createdAt: timestampFromDate(row.created_at),
    messages: messages.map(messageFromRow),
    executionDetails: executionDetailsOf(details, stepJobs),
    stepJobs: stepJobs.map(stepJobFromRow),
    traits: {
      severity: severityNamed(row.severity) ?? Severity.NONE,
      critical: row.critical,
      tags: row.tags,
      topics: (row.topics ?? []).map((topic) => ({ topicId: topic.topicId, topicKey: topic.topicKey })),
    },
  });
}

export function activityDayFromRow(row: ActivityDayRow): messagesV1.ActivityDay {
  return create(messagesV1.ActivityDaySchema, {
    date: row.date,
    count: row.count,
    templateIds: row.template_ids,
    channels: row.channels.map((channel) => channelNamed(channel)!),
  });
}
