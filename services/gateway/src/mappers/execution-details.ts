import { timestampDate } from "@bufbuild/protobuf/wkt";
import { messagesV1 } from "@notify/proto";
import { CHANNELS } from "@notify/runtime";
import { z } from "zod";
import { keyString } from "../validation.js";
import { isoDateResponse } from "./common.js";
import { channelNameOf } from "./messages.js";

export const executionDetailsQuery = z.object({
  notificationId: keyString("notificationId").regex(/^[0-9a-f]{24}$/, "notificationId must be a notification id (24 hex characters)"),
  subscriberId: keyString("subscriberId"),
});

/** One send attempt as Novu's ExecutionDetailsResponseDto. */
export function executionDetailToJson(detail: messagesV1.ExecutionDetail) {
  const attempt = detail.attempt!;
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
    providerId: attempt.providerId,
    transactionId: detail.transactionId,
    channel: channelNameOf(detail.channel),
    detail: attempt.detail,
    source: "Internal",
    status: attempt.status === messagesV1.AttemptStatus.SUCCESS ? "Success" : "Failed",
    isTest: false,
    isRetry: attempt.attempt > 1,
    raw: JSON.stringify({
      attempt: attempt.attempt,
      durationMs: attempt.durationMs,
      ...(attempt.startedAt ? { startedAt: timestampDate(attempt.startedAt).toISOString() } : {}),
      ...(attempt.errorId !== undefined ? { errorId: attempt.errorId } : {}),
      ...(attempt.errorText !== undefined ? { errorText: attempt.errorText } : {}),
      ...(attempt.providerMessageId !== undefined ? { providerMessageId: attempt.providerMessageId } : {}),
    }),
    ...(created ? { createdAt: created, updatedAt: created } : {}),
  };
}

/** What executionDetailToJson answers; `raw` is the attempt's record as JSON text. */
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
    source: z.literal("Internal"),
    status: z.enum(["Success", "Failed"]),
    isTest: z.boolean(),
    isRetry: z.boolean(),
    raw: z.string(),
    createdAt: isoDateResponse.optional(),
    updatedAt: isoDateResponse.optional(),
  })
  .meta({ id: "ExecutionDetail" });
