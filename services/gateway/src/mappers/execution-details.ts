import { timestampDate } from "@bufbuild/protobuf/wkt";
import { messagesV1 } from "@notify/proto";
import { PROVIDER_EVENT_STATUSES, type ProviderEventStatus } from "@notify/providers/events";
import { CHANNELS } from "@notify/runtime";
import { z } from "zod";
import { keyString } from "../validation.js";
import { isoDateResponse } from "./common.js";
import { channelNameOf } from "./messages.js";
import { EVENT_DETAIL_STATUS } from "./provider-events.js";

/** The types of the jobs the activity shows: a channel step's, or a delay's or a digest's. */
export const STEP_JOB_TYPES = [...CHANNELS, "delay", "digest"] as const;

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

/** What a step job went through (a delay, a digest, a step its conditions skipped): Novu's Internal details of its job, without a provider. */
function stepDetailOf(detail: messagesV1.StepJobDetail) {
  return {
    detail: detail.detail,
    source: "Internal" as const,
    status: detail.status as "Success" | "Pending" | "Failed",
    isRetry: false,
    ...(detail.raw !== undefined ? { raw: detail.raw } : {}),
  };
}

/** One send attempt, one event its provider reported, or one step job's detail, as Novu's ExecutionDetailsResponseDto. */
export function executionDetailToJson(detail: messagesV1.ExecutionDetail) {
  const created = detail.createdAt ? timestampDate(detail.createdAt).toISOString() : undefined;
  const kind = detail.stepDetail ? stepDetailOf(detail.stepDetail) : detail.event ? eventDetailOf(detail.event) : attemptDetailOf(detail.attempt!);
  return {
    _id: detail.id,
    _organizationId: detail.organizationId,
    _jobId: detail.jobId ?? detail.messageId,
    _environmentId: detail.environmentId,
    _notificationId: detail.notificationId,
    _notificationTemplateId: detail.templateId,
    _subscriberId: detail.subscriberId,
    ...(detail.messageId ? { _messageId: detail.messageId } : {}),
    transactionId: detail.transactionId,
    channel: detail.stepType ?? channelNameOf(detail.channel),
    isTest: false,
    ...kind,
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
    _messageId: z.string().optional().describe("The message sent (absent for a delay's, a digest's or a skipped step's job)"),
    providerId: z.string().optional().describe("Absent for a delay's, a digest's or a skipped step's job"),
    transactionId: z.string(),
    channel: z.enum(STEP_JOB_TYPES).describe("The step's type: a channel, or delay or digest"),
    detail: z.string(),
    source: z.enum(["Internal", "Webhook"]),
    status: z.enum(["Success", "Failed", "Pending", "Queued"]),
    isTest: z.boolean(),
    isRetry: z.boolean(),
    raw: z.string().optional(),
    webhookStatus: z.enum(PROVIDER_EVENT_STATUSES).optional().describe("What the provider reported (Webhook details only)"),
    createdAt: isoDateResponse.optional(),
    updatedAt: isoDateResponse.optional(),
  })
  .meta({ id: "ExecutionDetail" });
