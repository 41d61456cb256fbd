import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { messagesV1 } from "@notify/proto";
import type { ChannelName, MarkAsName, MessageGroupRow, MessageRow, StatusName } from "./store.js";

const { Channel, MarkAs, MessageStatus, MessageSchema, MessageCtaSchema, EmailBlockSchema, EmailBlocksSchema } = messagesV1;

export const CHANNEL_NAMES: Record<Exclude<messagesV1.Channel, messagesV1.Channel.UNSPECIFIED>, ChannelName> = {
  [Channel.IN_APP]: "in_app",
  [Channel.EMAIL]: "email",
  [Channel.SMS]: "sms",
  [Channel.CHAT]: "chat",
  [Channel.PUSH]: "push",
};

const CHANNELS_BY_NAME = Object.fromEntries(Object.entries(CHANNEL_NAMES).map(([value, name]) => [name, Number(value)])) as Record<
  ChannelName,
  messagesV1.Channel
>;

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

export const channelName = (channel: messagesV1.Channel): ChannelName | undefined =>
  CHANNEL_NAMES[channel as keyof typeof CHANNEL_NAMES];

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

/** What the messages of a group share, as the store writes it (their own ids come apart). */
export function messageGroupRow(message: messagesV1.NewMessage, grp: number): MessageGroupRow {
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
    feed_id: message.feedId ?? null,
    feed_identifier: message.feedIdentifier ?? null,
    status: message.status === MessageStatus.UNSPECIFIED ? "sent" : STATUS_NAMES[message.status as keyof typeof STATUS_NAMES],
    error_id: message.errorId ?? null,
    error_text: message.errorText ?? null,
    delivered_at: message.deliveredAt.map((timestamp) => timestampDate(timestamp)),
    payload: message.payload ?? null,
    overrides: message.overrides ?? null,
  };
}

function optional<K extends string, V>(key: K, value: V | null): { [P in K]?: V } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: V };
}

function optionalTime<K extends string>(key: K, value: Date | null) {
  return (value === null ? {} : { [key]: timestampFromDate(value) }) as { [P in K]?: ReturnType<typeof timestampFromDate> };
}

export function messageFromRow(row: MessageRow): messagesV1.Message {
  return create(MessageSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    notificationId: row.notification_id,
    subscriberId: row.subscriber_id,
    externalSubscriberId: row.external_subscriber_id,
    templateId: row.template_id,
    ...optional("templateIdentifier", row.template_identifier),
    messageTemplateId: row.message_template_id,
    stepId: row.step_id,
    ...optional("jobId", row.job_id),
    transactionId: row.transaction_id,
    channel: CHANNELS_BY_NAME[row.channel],
    content: contentFromJson(row.content),
    ...optional("subject", row.subject),
    ...optional("title", row.title),
    ...optional("email", row.email),
    ...optional("phone", row.phone),
    ...optional("directWebhookUrl", row.direct_webhook_url),
    ...optional("providerId", row.provider_id),
    deviceTokens: row.device_tokens,
    cta: fromJson(MessageCtaSchema, row.cta as JsonObject),
    ...optional("feedId", row.feed_id),
    ...optional("feedIdentifier", row.feed_identifier),
    status: STATUSES_BY_NAME[row.status],
    ...optional("errorId", row.error_id),
    ...optional("errorText", row.error_text),
    read: row.read,
    seen: row.seen,
    ...optionalTime("lastSeenDate", row.last_seen_date),
    ...optionalTime("lastReadDate", row.last_read_date),
    deliveredAt: row.delivered_at.map((date) => timestampFromDate(date)),
    ...optionalTime("snoozedUntil", row.snoozed_until),
    ...(row.payload ? { payload: row.payload as JsonObject } : {}),
    ...(row.overrides ? { overrides: row.overrides as JsonObject } : {}),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}
