import { eventFrom, eventsOf, type Fields, fieldsOf, statusIn } from "./fields.js";
import { verifyMailgun, verifySendgrid, verifySvix } from "./signatures.js";
import type { SnsMessage } from "./sns.js";
import { type EventReader, type ProviderEventStatus, WebhookRefused } from "./types.js";

/** SendGrid's event webhook: a batch of events; the X-Message-Id its send answered begins each sg_message_id. */
const sendgrid: EventReader = {
  providerId: "sendgrid",
  verify: (webhook, _body, key) => verifySendgrid(webhook, key),
  read: (body) =>
    eventsOf(body).flatMap((event) =>
      eventFrom(event, {
        providerMessageId: typeof event.sg_message_id === "string" ? event.sg_message_id.split(".")[0] : undefined,
        status: statusIn(
          {
            delivered: "delivered",
            open: "opened",
            click: "clicked",
            bounce: "bounced",
            blocked: "blocked",
            dropped: "dropped",
            deferred: "deferred",
            spamreport: "spam",
            unsubscribe: "unsubscribed",
            group_unsubscribe: "unsubscribed",
          },
          event.event,
        ),
        occurredAt: event.timestamp,
        externalId: event.sg_event_id,
        attempts: event.attempt,
        response: event.response ?? event.reason,
      }),
    ),
};

/** Mailgun's webhooks: one event under `event-data`; its send answered the Message-Id in angle brackets. */
const mailgun: EventReader = {
  providerId: "mailgun",
  verify: (_webhook, body, key) => verifyMailgun(body, key),
  read: (body) => {
    const event = fieldsOf(fieldsOf(body)["event-data"]);
    const messageId = fieldsOf(fieldsOf(fieldsOf(event.message).headers))["message-id"];
    const delivery = fieldsOf(event["delivery-status"]);
    const failed = event.severity === "temporary" ? "deferred" : "rejected";
    return eventFrom(event, {
      providerMessageId: typeof messageId === "string" ? `<${messageId}>` : undefined,
      status: statusIn(
        {
          accepted: "accepted",
          delivered: "delivered",
          opened: "opened",
          clicked: "clicked",
          unsubscribed: "unsubscribed",
          complained: "complaint",
          failed,
          rejected: "rejected",
        },
        event.event,
      ),
      occurredAt: event.timestamp,
      externalId: event.id,
      attempts: delivery["attempt-no"],
      response: delivery.description || delivery.message || event.reason,
    });
  },
};

/** Postmark's webhooks: one record each, MessageID as its send answered. Postmark does not sign them. */
const postmark: EventReader = {
  providerId: "postmark",
  read: (body) =>
    eventsOf(body).flatMap((event) =>
      eventFrom(event, {
        providerMessageId: event.MessageID,
        status: statusIn(
          { Delivery: "delivered", Bounce: "bounced", SpamComplaint: "spam", Open: "opened", Click: "clicked", SubscriptionChange: "unsubscribed" },
          event.RecordType,
        ),
        occurredAt: event.DeliveredAt ?? event.BouncedAt ?? event.ReceivedAt ?? event.ChangedAt,
        externalId: event.ID,
        response: event.Details ?? event.Description,
      }),
    ),
};

/** Resend's webhooks (signed by Svix): the email's id under `data`. */
const resend: EventReader = {
  providerId: "resend",
  verify: (webhook, _body, key) => verifySvix("resend", webhook, key),
  read: (body) => {
    const event = fieldsOf(body);
    const data = fieldsOf(event.data);
    return eventFrom(event, {
      providerMessageId: data.email_id,
      status: statusIn(
        {
          "email.sent": "sent",
          "email.delivered": "delivered",
          "email.delivery_delayed": "delayed",
          "email.bounced": "bounced",
          "email.complained": "complaint",
          "email.opened": "opened",
          "email.clicked": "clicked",
          "email.failed": "rejected",
        },
        event.type,
      ),
      occurredAt: event.created_at,
      response: fieldsOf(data.bounce).message ?? fieldsOf(data.failed).reason,
    });
  },
};

/** Brevo's transactional webhooks: `message-id` as its send answered, in angle brackets. Brevo does not sign them. */
function brevoAs(providerId: string): EventReader {
  return {
    providerId,
    read: (body) =>
      eventsOf(body).flatMap((event) =>
        eventFrom(event, {
          providerMessageId: event["message-id"],
          status: statusIn(
            {
              request: "sent",
              delivered: "delivered",
              deferred: "deferred",
              soft_bounce: "bounced",
              softBounce: "bounced",
              hard_bounce: "bounced",
              hardBounce: "bounced",
              blocked: "blocked",
              spam: "spam",
              complaint: "complaint",
              unsubscribed: "unsubscribed",
              opened: "opened",
              unique_opened: "opened",
              uniqueOpened: "opened",
              proxy_open: "opened",
              click: "clicked",
              invalid_email: "dropped",
              error: "dropped",
            },
            event.event,
          ),
          occurredAt: event.ts_event ?? event.date,
          externalId: event.id,
          response: event.reason,
        }),
      ),
  };
}

/**
 * Mailjet's event API: an event or a batch of them, MessageID as its send answered. Mailjet does
 * not sign them. The id's digits are read from mj_message_id where the event has it: the number
 * itself is larger than a double holds exactly.
 */
const mailjet: EventReader = {
  providerId: "mailjet",
  read: (body) =>
    eventsOf(body).flatMap((event) =>
      eventFrom(event, {
        providerMessageId: event.mj_message_id || event.MessageID,
        status: statusIn(
          { sent: "sent", open: "opened", click: "clicked", bounce: "bounced", blocked: "blocked", spam: "spam", unsub: "unsubscribed" },
          event.event,
        ),
        occurredAt: event.time,
        response: event.error ?? event.comment,
      }),
    ),
};

/** Each SES event type notify keeps, and the field of the event that holds its details. */
const SES_EVENTS: Readonly<Record<string, { status: ProviderEventStatus; details: string }>> = {
  Send: { status: "sent", details: "send" },
  Delivery: { status: "delivered", details: "delivery" },
  Bounce: { status: "bounced", details: "bounce" },
  Complaint: { status: "complaint", details: "complaint" },
  Reject: { status: "rejected", details: "reject" },
  Open: { status: "opened", details: "open" },
  Click: { status: "clicked", details: "click" },
  DeliveryDelay: { status: "delayed", details: "deliveryDelay" },
};

/**
 * Amazon SES's events, each in the Message of an SNS notification (readProviderEvents checks its
 * signature first): a configuration set's events (`eventType`) or an identity's notifications
 * (`notificationType`), naming the MessageId its send answered as `mail.messageId`.
 */
const ses: EventReader = {
  providerId: "ses",
  viaSns: true,
  read: (notification) => {
    const { Message, MessageId } = notification as SnsMessage;
    let event: Fields;
    try {
      event = fieldsOf(JSON.parse(Message));
    } catch {
      throw new WebhookRefused("body", "ses: the SNS notification's Message is not JSON");
    }
    const kind = SES_EVENTS[String(event.eventType ?? event.notificationType)];
    if (!kind) return [];
    const details = fieldsOf(event[kind.details]);
    const recipient = fieldsOf([details.bouncedRecipients, details.delayedRecipients].flatMap((list) => (Array.isArray(list) ? list : []))[0]);
    return eventFrom(event, {
      providerMessageId: fieldsOf(event.mail).messageId,
      status: kind.status,
      occurredAt: details.timestamp ?? fieldsOf(event.mail).timestamp,
      externalId: MessageId,
      response: recipient.diagnosticCode ?? details.smtpResponse ?? details.reason ?? details.bounceType ?? details.complaintFeedbackType,
    });
  },
};

export const emailEventReaders: readonly EventReader[] = [sendgrid, mailgun, postmark, resend, brevoAs("brevo"), brevoAs("sendinblue"), mailjet, ses];
