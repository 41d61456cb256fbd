import { eventFrom, fieldsOf, statusIn } from "./fields.js";
import { verifyTelnyx, verifyTwilio } from "./signatures.js";
import type { EventReader, ProviderEventStatus } from "./types.js";

const SMS_STATUSES: Readonly<Record<string, ProviderEventStatus>> = {
  accepted: "accepted",
  queued: "queued",
  sending: "sending",
  sent: "sent",
  delivered: "delivered",
  undelivered: "undelivered",
  failed: "failed",
  rejected: "rejected",
  read: "opened",
};

/** Twilio's status callbacks: a form post with MessageSid, the sid its send answered. */
const twilio: EventReader = {
  providerId: "twilio",
  verify: verifyTwilio,
  read: (body) => {
    const event = fieldsOf(body);
    return eventFrom(event, {
      providerMessageId: event.MessageSid ?? event.SmsSid,
      status: statusIn(SMS_STATUSES, event.MessageStatus ?? event.SmsStatus),
      response: event.ErrorMessage ?? event.ErrorCode,
    });
  },
};

/** Plivo's message status callbacks (form or JSON): MessageUUID, the first uuid its send answered. */
const plivo: EventReader = {
  providerId: "plivo",
  read: (body) => {
    const event = fieldsOf(body);
    return eventFrom(event, {
      providerMessageId: event.MessageUUID ?? event.messageUuid,
      status: statusIn(SMS_STATUSES, event.Status ?? event.status),
      response: event.ErrorCode,
    });
  },
};

/** Telnyx's message webhooks: the message under `data.payload`, its status per recipient. */
const telnyx: EventReader = {
  providerId: "telnyx",
  verify: (webhook, _body, key) => verifyTelnyx(webhook, key),
  read: (body) => {
    const data = fieldsOf(fieldsOf(body).data);
    const payload = fieldsOf(data.payload);
    const recipient = fieldsOf(Array.isArray(payload.to) ? payload.to[0] : undefined);
    const errors = Array.isArray(payload.errors) ? payload.errors.map((error) => fieldsOf(error).detail ?? fieldsOf(error).title).filter(Boolean) : [];
    return eventFrom(data, {
      providerMessageId: payload.id,
      status: statusIn(
        {
          queued: "queued",
          sending: "sending",
          sent: "sent",
          delivered: "delivered",
          sending_failed: "failed",
          delivery_failed: "failed",
          delivery_unconfirmed: "undelivered",
        },
        recipient.status,
      ),
      occurredAt: data.occurred_at,
      externalId: data.id,
      response: errors.join("; ") || undefined,
    });
  },
};

export const smsEventReaders: readonly EventReader[] = [twilio, plivo, telnyx];
