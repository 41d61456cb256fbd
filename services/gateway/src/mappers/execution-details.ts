import { timestampDate } from "@bufbuild/protobuf/wkt";
import { messagesV1 } from "@notify/proto";
import { PROVIDER_EVENT_STATUSES, type ProviderEventStatus } from "@notify/providers/events";
import { CHANNELS } from "@notify/runtime";
import { z } from "zod";
import { keyString } from "../validation.js";
import { isoDateResponse } from "./common.js";
import { channelNameOf } from "./messages.js";
import { EVENT_DETAIL_STATUS } from "./provider-events.js";

export const executionDetailsQuery = z.object({
  notificationId: keyString("notificationId").regex(/^[0-9a-f]{24}$/, "notificationId must be a notification id (24 hex characters)"),
  subscriberId: keyString("subscriberId"),
});

/** What an execution detail says of a send attempt: Novu's Internal source. */
function attemptDetailOf(attempt: messagesV1.DeliveryAttempt) {
  return {
    providerId: attempt.providerId,
    detail: attempt.detail,
    source: "Internal" as const,
    status: attempt.status === messagesV1.AttemptStatus.SUCCESS ? ("Success" as const) : ("Failed" as const),
    isRetry: attempt.attempt > 1,
    raw: JSON.stringify({
      attempt: attempt.attempt,
      durationMs: attempt.durationMs,
      ...(attempt.startedAt ? { startedAt: timestampDate(attempt.startedAt).toISOString() } : {}),
      ...(attempt.errorId !== undefined ? { errorId: attempt.errorId } : {}),
      ...(attempt.errorText !== undefined ? { errorText: attempt.errorText } : {}),
      ...(attempt.providerMessageId !== undefined ? { providerMessageId: attempt.providerMessageId } : {}),
    }),
  };
}

/** What an execution detail says of an event a provider reported: Novu's Webhook source, the event as the provider wrote it. */
function eventDetailOf(event: messagesV1.ProviderEvent) {
  const status = event.status as ProviderEventStatus;
  return {
    providerId: event.providerId,
    detail: event.response ? `Message ${status}: ${event.response}` : `Message ${status}`,
    source: "Webhook" as const,
    status: EVENT_DETAIL_STATUS[status] ?? "Pending",
    isRetry: false,
    raw: event.raw,
    webhookStatus: status,
  };
}

/** One send attempt, or one event its provider reported, as Novu's ExecutionDetailsResponseDto. */
export function executionDetailToJson(detail: messagesV1.ExecutionDetail) {
  const created = detail.createdAt ? timestampDate(detail.createdAt).toISOString() : undefined;
  return {
    _id: detail.id,
    _organizationId: detail.organizationId,
    _jobId: detail.jobId ?? detail.messageId,
    _environmentId: detail.environmentId,
    _notificationId: detail.notificationId,
    _notificationTemplateId: detail.templateId,
    _subscriberId: detail.subscriberId,
    _messageId: detail.messageId,
    transactionId: detail.transactionId,
    channel: channelNameOf(detail.channel),
    isTest: false,
    ...(detail.event ? eventDetailOf(detail.event) : attemptDetailOf(detail.attempt!)),
    ...(created ? { createdAt: created, updatedAt: created } : {}),
  };
}

/** What executionDetailToJson answers; `raw` is the attempt's record, or the provider's event, as JSON text. */
export const executionDetailResponse = z
  .object({
    _id: z.string(),
    _organizationId: z.string(),
    _jobId: z.string(),
    _environmentId: z.string(),
    _notificationId: z.string(),
    _notificationTemplateId: z.string(),
    _subscriberId: z.string(),
    _messageId: z.string(),
    providerId: z.string(),
    transactionId: z.string(),
    channel: z.enum(CHANNELS),
    detail: z.string(),
    source: z.enum(["Internal", "Webhook"]),
    status: z.enum(["Success", "Failed", "Pending", "Queued"]),
    isTest: z.boolean(),
    isRetry: z.boolean(),
    raw: z.string(),
    webhookStatus: z.enum(PROVIDER_EVENT_STATUSES).optional().describe("What the provider reported (Webhook details only)"),
    createdAt: isoDateResponse.optional(),
    updatedAt: isoDateResponse.optional(),
  })
  .meta({ id: "ExecutionDetail" });
