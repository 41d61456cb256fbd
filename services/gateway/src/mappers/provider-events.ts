import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { messagesV1 } from "@notify/proto";
import { PROVIDER_EVENT_STATUSES, type ProviderEvent, type ProviderEventStatus } from "@notify/providers/events";
import { z } from "zod";
import { objectIdString } from "../validation.js";
import { isoDateResponse } from "./common.js";

export const inboundWebhookParams = z.object({
  environmentId: objectIdString("environmentId"),
  integrationId: objectIdString("integrationId"),
});

export function providerEventMessageOf(event: ProviderEvent): messagesV1.ProviderEvent {
  return create(messagesV1.ProviderEventSchema, {
    providerMessageId: event.providerMessageId,
    status: event.status,
    occurredAt: timestampFromDate(event.occurredAt),
    ...(event.externalId !== undefined ? { externalId: event.externalId } : {}),
    ...(event.attempts !== undefined ? { attempts: event.attempts } : {}),
    ...(event.response !== undefined ? { response: event.response } : {}),
    raw: event.raw,
  });
}

/** An event kept, as Novu's WebhookResultDto: `id` is the provider's id of the message. */
export function webhookResultToJson(event: ProviderEvent) {
  return {
    id: event.providerMessageId,
    event: {
      status: event.status,
      date: event.occurredAt.toISOString(),
      ...(event.externalId !== undefined ? { externalId: event.externalId } : {}),
      ...(event.attempts !== undefined ? { attempts: event.attempts } : {}),
      ...(event.response !== undefined ? { response: event.response } : {}),
      row: event.raw,
    },
  };
}

export const webhookResultResponse = z
  .object({
    id: z.string(),
    event: z.object({
      status: z.enum(PROVIDER_EVENT_STATUSES),
      date: isoDateResponse,
      externalId: z.string().optional(),
      attempts: z.number().int().optional(),
      response: z.string().optional(),
      row: z.string().describe("The provider's event as JSON text"),
    }),
  })
  .meta({ id: "WebhookResult" });

/** How an execution detail rates what a provider reported, as Novu's webhook handler does. */
export const EVENT_DETAIL_STATUS: Readonly<Record<ProviderEventStatus, "Success" | "Failed" | "Pending" | "Queued">> = {
  opened: "Success",
  sent: "Success",
  delivered: "Success",
  clicked: "Success",
  accepted: "Success",
  dismissed: "Success",
  rejected: "Failed",
  bounced: "Failed",
  dropped: "Failed",
  blocked: "Failed",
  spam: "Failed",
  unsubscribed: "Failed",
  complaint: "Failed",
  failed: "Failed",
  undelivered: "Failed",
  deferred: "Pending",
  delayed: "Pending",
  created: "Pending",
  sending: "Pending",
  queued: "Queued",
};
