import { generateKeyPairSync, randomUUID, sign } from "node:crypto";
import { Novu } from "@novu/api";
import { selfSignedCertificate, startReceiver, type Receiver } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, executionDetails, settledMessage, type Message } from "./delivery-helpers.js";
import { once } from "./sdk3-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Delivery providers post what became of the messages they accepted to
// /v2/inbound-webhooks/delivery-providers/:environmentId/:integrationId (Novu's inbound webhooks):
// no API key, the provider's signature when the integration has a signing key.

/** The certificate SNS signs with, and its key. */
const sns = selfSignedCertificate("sns.amazonaws.com");
const SNS_CERTIFICATE_PATH = "/SimpleNotificationService-0123456789abcdef.pem";
const TOPIC = "arn:aws:sns:us-east-1:123456789012:ses-events";

/** An SNS message as SNS signs it (its documented string to sign), by `key`; `fields` overrides any of it. */
function snsMessage(type: string, message: string, fields: Record<string, string> = {}, key = sns.key) {
  const body: Record<string, string> = {
    Type: type,
    MessageId: `sns-${randomUUID()}`,
    TopicArn: TOPIC,
    Message: message,
    Timestamp: new Date().toISOString(),
    SignatureVersion: "2",
    SigningCertURL: `https://sns.us-east-1.amazonaws.com${SNS_CERTIFICATE_PATH}`,
    ...(type === "Notification"
      ? {}
      : { Token: "token-1", SubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=token-1` }),
    ...fields,
  };
  const signed = (
    type === "Notification"
      ? ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
      : ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
  )
    .filter((name) => body[name] !== undefined)
    .map((name) => `${name}\n${body[name]}\n`)
    .join("");
  body.Signature = sign(body.SignatureVersion === "1" ? "sha1" : "sha256", Buffer.from(signed), key).toString("base64");
  return body;
}

let stack: Stack;
let receiver: Receiver;
let environmentId: string;
let sendgridId: string;
let twilioId: string;
let unsignedId: string;
let mail: Message;
let sms: Message;
const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const sendgridKey = publicKey.export({ format: "der", type: "spki" }).toString("base64");

beforeAll(async () => {
  let sent = 0;
  receiver = await startReceiver((request) => {
    sent++;
    if (request.url === SNS_CERTIFICATE_PATH) return { body: sns.certificate };
    if (request.url.startsWith("/?Action=ConfirmSubscription")) return { body: "<ConfirmSubscriptionResponse/>" };
    if (request.url.startsWith("/ses/")) return { body: { MessageId: `ses-${sent}` } };
    return request.url.startsWith("/sendgrid")
      ? { status: 202, headers: { "x-message-id": `sgid${sent}` } }
      : { status: 201, body: { sid: `SM${sent}`, status: "queued" } };
  });
  // The worker fetches SNS's URLs from the receiver instead of AWS.
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8", workerEnv: { SNS_ENDPOINT_ORIGIN: receiver.url } });
  sendgridId = await createIntegration(stack, {
    providerId: "sendgrid",
    channel: "email",
    credentials: { apiKey: "SG.key", from: "notify@example.com", baseUrl: `${receiver.url}/sendgrid` },
    configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: sendgridKey },
  });
  twilioId = await createIntegration(stack, {
    providerId: "twilio",
    channel: "sms",
    credentials: { accountSid: "AC1", token: "twilio-token", from: "+15550000000", baseUrl: `${receiver.url}/twilio` },
    configurations: { inboundWebhookEnabled: true },
  });
  unsignedId = await createIntegration(stack, { providerId: "postmark", channel: "email", credentials: { apiKey: "pm" }, active: false });
  const integration = await stack.request<Data<{ _environmentId: string }>>("GET", `/v1/integrations`);
  environmentId = (integration.body.data as unknown as { _environmentId: string }[])[0]!._environmentId;
  const workflow = await createWorkflow(stack, "Receipt", [
    { template: { type: "email", subject: "Receipt {{n}}", content: "<p>Paid</p>" } },
    { template: { type: "sms", content: "Receipt {{n}}" } },
  ]);
  const trigger = await stack.request("POST", "/v1/events/trigger", {
    name: workflow,
    to: { subscriberId: "payer", email: "payer@example.com", phone: "+15551234567" },
    payload: { n: 7 },
    transactionId: "receipt-7",
  });
  expect(trigger.status).toBe(201);
  mail = await settledMessage(stack, "receipt-7", "email", delivered);
  sms = await settledMessage(stack, "receipt-7", "sms", delivered);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const path = (integrationId: string, environment = environmentId) => `/v2/inbound-webhooks/delivery-providers/${environment}/${integrationId}`;

/** Posts a provider's webhook as the provider does: no API key, its own body and headers. */
async function post(integrationId: string, body: string, headers: Record<string, string> = {}, environment = environmentId) {
  const response = await fetch(`${stack.url}${path(integrationId, environment)}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as { data?: { id: string; event: Record<string, unknown> }[]; message?: string } };
}

function signedBySendgrid(events: unknown[]) {
  const body = JSON.stringify(events);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign("sha256", Buffer.from(timestamp + body), privateKey).toString("base64");
  return { body, headers: { "x-twilio-email-event-webhook-signature": signature, "x-twilio-email-event-webhook-timestamp": timestamp } };
}

/** A time as the Unix seconds SendGrid writes. */
const at = (iso: string) => Date.parse(iso) / 1000;

const providerIdOf = async (message: Message) => {
  const attempt = (await executionDetails(stack, message, "payer")).find((detail) => detail._messageId === message._id);
  return (JSON.parse(attempt!.raw) as { providerMessageId: string }).providerMessageId;
};

describe("delivery providers' webhooks", () => {
  it("keep a signed SendGrid batch's events as execution details of the message it names, each once", async () => {
    const providerMessageId = await providerIdOf(mail);
    expect(providerMessageId).toMatch(/^sgid\d+$/);
    const events = [
      {
        email: "payer@example.com",
        event: "delivered",
        sg_message_id: `${providerMessageId}.filterdrecv-1.0`,
        sg_event_id: "ev-d",
        timestamp: at("2026-11-27T08:00:00Z"),
        response: "250 2.0.0 OK",
      },
      {
        email: "payer@example.com",
        event: "open",
        sg_message_id: `${providerMessageId}.filterdrecv-1.0`,
        sg_event_id: "ev-o",
        timestamp: at("2026-11-27T08:01:00Z"),
      },
      { email: "someone@example.com", event: "bounce", sg_message_id: "unknown.filterdrecv-1.0", sg_event_id: "ev-x", timestamp: at("2026-11-27T08:00:00Z") },
      { email: "payer@example.com", event: "processed", sg_message_id: `${providerMessageId}.filterdrecv-1.0`, timestamp: at("2026-11-27T08:00:00Z") },
    ];
    const { body, headers } = signedBySendgrid(events);
    const reply = await post(sendgridId, body, headers);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.data).toEqual([
      {
        id: providerMessageId,
        event: { status: "delivered", date: "2026-11-27T08:00:00.000Z", externalId: "ev-d", response: "250 2.0.0 OK", row: JSON.stringify(events[0]) },
      },
      { id: providerMessageId, event: { status: "opened", date: "2026-11-27T08:01:00.000Z", externalId: "ev-o", row: JSON.stringify(events[1]) } },
    ]);
    // SendGrid posting the batch again (it saw no answer) adds nothing.
    const again = signedBySendgrid(events);
    expect((await post(sendgridId, again.body, again.headers)).body.data).toHaveLength(2);

    const details = (await executionDetails(stack, mail, "payer")).filter((detail) => detail._messageId === mail._id);
    expect(details.map((detail) => [detail.providerId, (detail as unknown as { source: string }).source, detail.status, detail.detail])).toEqual([
      ["sendgrid", "Internal", "Success", "Message sent by sendgrid"],
      ["sendgrid", "Webhook", "Success", "Message delivered: 250 2.0.0 OK"],
      ["sendgrid", "Webhook", "Success", "Message opened"],
    ]);
    expect(details[1]).toMatchObject({ _messageId: mail._id, webhookStatus: "delivered", raw: JSON.stringify(events[0]) });
    // The SMS message of the same notification has its own details.
    const smsDetails = await executionDetails(stack, sms, "payer");
    expect(smsDetails.filter((detail) => detail._messageId === sms._id).map((detail) => detail.detail)).toEqual(["Message sent by twilio"]);
  });

  it("refuse what the provider did not sign, and change nothing", async () => {
    const providerMessageId = await providerIdOf(mail);
    const events = [{ event: "bounce", sg_message_id: `${providerMessageId}.x`, timestamp: at("2026-11-27T08:02:00Z"), reason: "forged" }];
    const unsigned = await post(sendgridId, JSON.stringify(events));
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.message).toMatch(/x-twilio-email-event-webhook-signature/);
    const { body, headers } = signedBySendgrid(events);
    const tampered = await post(sendgridId, body.replace("forged", "FORGED"), headers);
    expect(tampered.status).toBe(401);
    const details = await executionDetails(stack, mail, "payer");
    expect(details.filter((detail) => detail.detail.includes("bounced"))).toEqual([]);
  });

  it("@novu/api's activity.track forwards events (a Twilio status callback's fields as JSON)", async () => {
    const novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
    const providerMessageId = await providerIdOf(sms);
    const results = await novu.activity.track(
      { environmentId, integrationId: twilioId, requestBody: { MessageSid: providerMessageId, MessageStatus: "undelivered", ErrorCode: "30003" } },
      once,
    );
    expect(results).toEqual([{ id: providerMessageId, event: expect.objectContaining({ status: "undelivered", response: "30003" }) }]);
    const details = await executionDetails(stack, sms, "payer");
    expect(details.find((detail) => detail.detail === "Message undelivered: 30003")).toMatchObject({ status: "Failed", providerId: "twilio" });
    // The message's own status stays what its send made it, as Novu keeps it.
    expect((await settledMessage(stack, "receipt-7", "sms", delivered)).status).toBe("sent");
    // Twilio's form posts are read too.
    const form = await fetch(`${stack.url}${path(twilioId)}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ MessageSid: providerMessageId, MessageStatus: "delivered" }).toString(),
    });
    expect(form.status).toBe(200);
    expect(((await form.json()) as { data: { event: { status: string } }[] }).data.map((result) => result.event.status)).toEqual(["delivered"]);
  });

  it("answer 4xx for an integration that does not take them, and match nothing in another environment", async () => {
    const event = JSON.stringify({ MessageSid: "SM1", MessageStatus: "delivered" });
    expect((await post(unsignedId, event)).status).toBe(403);
    expect((await post("0123456789abcdef01234567", event)).status).toBe(404);
    expect((await post(twilioId, event, {}, "0123456789abcdef01234567")).status).toBe(404);
    expect((await post("not-an-id", event)).status).toBe(422);
    expect((await post(twilioId, "{broken")).status).toBe(400);
    const mailer = await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      credentials: { host: "127.0.0.1", port: "2525", from: "a@example.com" },
      configurations: { inboundWebhookEnabled: true },
      active: false,
    });
    const unsupported = await post(mailer, event);
    expect(unsupported.status).toBe(404);
    expect(unsupported.body.message).toMatch(/nodemailer/);

    // Another environment's twilio integration names no message of this one.
    const otherKey = await stack.createKey("Production");
    const other = await stack.request<Data<{ _id: string; _environmentId: string }>>(
      "POST",
      "/v1/integrations",
      { providerId: "twilio", channel: "sms", credentials: { accountSid: "AC2", token: "t" }, configurations: { inboundWebhookEnabled: true } },
      { authorization: `ApiKey ${otherKey}` },
    );
    expect(other.status).toBe(201);
    const smsId = await providerIdOf(sms);
    const elsewhere = await post(other.body.data._id, JSON.stringify({ MessageSid: smsId, MessageStatus: "failed" }), {}, other.body.data._environmentId);
    expect(elsewhere).toEqual({ status: 200, body: { data: [] } });
    // Nor does this environment's path reach the other's integration.
    expect((await post(other.body.data._id, event)).status).toBe(404);
  });
});

describe("Amazon SES's events, delivered by SNS", () => {
  let sesId: string;
  let sesMail: Message;
  beforeAll(async () => {
    sesId = await createIntegration(stack, {
      providerId: "ses",
      channel: "email",
      identifier: "ses-events",
      credentials: { region: "us-east-1", apiKey: "AKIAEXAMPLE", secretKey: "ses-secret", from: "notify@example.com", baseUrl: `${receiver.url}/ses` },
      configurations: { inboundWebhookEnabled: true },
    });
    const workflow = await createWorkflow(stack, "SES receipt", [{ template: { type: "email", subject: "Receipt", content: "<p>Paid</p>" } }]);
    const trigger = await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to: { subscriberId: "payer", email: "payer@example.com" },
      overrides: { email: { integrationIdentifier: "ses-events" } },
      transactionId: "ses-receipt",
    });
    expect(trigger.status).toBe(201);
    sesMail = await settledMessage(stack, "ses-receipt", "email", delivered);
  }, 60_000);

  const sesEvent = (eventType: string, messageId: string, details: Record<string, unknown>) =>
    JSON.stringify({ eventType, mail: { timestamp: "2026-11-28T08:00:00.000Z", messageId, destination: ["payer@example.com"] }, ...details });
  const certificateFetches = () => receiver.received.filter((request) => request.url === SNS_CERTIFICATE_PATH).length;

  it("confirm the subscription, then keep the signed events of the messages SES sent", async () => {
    const confirmation = snsMessage("SubscriptionConfirmation", "You have chosen to subscribe to the topic", { SignatureVersion: "1" });
    const confirmed = await post(sesId, JSON.stringify(confirmation), { "content-type": "text/plain; charset=UTF-8" });
    expect(confirmed).toEqual({ status: 200, body: { data: [] } });
    expect(receiver.received.filter((request) => request.url.startsWith("/?Action=ConfirmSubscription")).map((request) => request.url)).toEqual([
      `/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=token-1`,
    ]);

    const providerMessageId = await providerIdOf(sesMail);
    expect(providerMessageId).toMatch(/^ses-\d+$/);
    const delivery = snsMessage(
      "Notification",
      sesEvent("Delivery", providerMessageId, { delivery: { timestamp: "2026-11-28T08:00:02.000Z", smtpResponse: "250 2.6.0 Message received" } }),
    );
    const reply = await post(sesId, JSON.stringify(delivery), { "content-type": "text/plain; charset=UTF-8" });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.data).toEqual([
      {
        id: providerMessageId,
        event: {
          status: "delivered",
          date: "2026-11-28T08:00:02.000Z",
          externalId: delivery.MessageId,
          response: "250 2.6.0 Message received",
          row: delivery.Message,
        },
      },
    ]);
    const bounce = snsMessage(
      "Notification",
      sesEvent("Bounce", providerMessageId, {
        bounce: {
          bounceType: "Transient",
          timestamp: "2026-11-28T08:05:00.000Z",
          bouncedRecipients: [{ emailAddress: "payer@example.com", diagnosticCode: "smtp; 452 mailbox full" }],
        },
      }),
      { Subject: "Amazon SES Email Event Notification" },
    );
    expect((await post(sesId, JSON.stringify(bounce))).body.data?.map((result) => result.event.status)).toEqual(["bounced"]);
    // Event kinds notify does not keep, and messages it did not send, add nothing.
    const unknown = snsMessage("Notification", sesEvent("Delivery", "not-sent-by-notify", { delivery: {} }));
    expect((await post(sesId, JSON.stringify(unknown))).body).toEqual({ data: [] });
    const rendering = snsMessage("Notification", sesEvent("Rendering Failure", providerMessageId, {}));
    expect((await post(sesId, JSON.stringify(rendering))).body).toEqual({ data: [] });

    const details = (await executionDetails(stack, sesMail, "payer")).filter((detail) => detail._messageId === sesMail._id);
    expect(details.map((detail) => [detail.providerId, detail.detail])).toEqual([
      ["ses", "Message sent by ses"],
      ["ses", "Message delivered: 250 2.6.0 Message received"],
      ["ses", "Message bounced: smtp; 452 mailbox full"],
    ]);
    // One certificate, fetched once for every message it signed.
    expect(certificateFetches()).toBe(1);
  });

  it("refuse what SNS did not sign, or a certificate or topic not SNS's own, and change nothing", async () => {
    const providerMessageId = await providerIdOf(sesMail);
    const forged = sesEvent("Complaint", providerMessageId, { complaint: { timestamp: "2026-11-28T09:00:00.000Z", complaintFeedbackType: "abuse" } });
    const fetchesBefore = certificateFetches();
    const requestsBefore = receiver.received.length;
    const refusals = [
      // Signed by another key.
      snsMessage(
        "Notification",
        forged,
        {},
        generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
      ),
      // Changed after signing.
      { ...snsMessage("Notification", sesEvent("Delivery", providerMessageId, { delivery: {} })), Message: forged },
      // A certificate anywhere but SNS's own https hosts: never fetched.
      snsMessage("Notification", forged, { SigningCertURL: `${receiver.url}${SNS_CERTIFICATE_PATH}` }),
      snsMessage("Notification", forged, { SigningCertURL: `http://sns.us-east-1.amazonaws.com${SNS_CERTIFICATE_PATH}` }),
      snsMessage("Notification", forged, { SigningCertURL: `https://sns.us-east-1.amazonaws.com.evil.example${SNS_CERTIFICATE_PATH}` }),
      // A topic in another region than the integration's.
      snsMessage("Notification", forged, { TopicArn: "arn:aws:sns:eu-west-1:123456789012:ses-events" }),
      // A subscription to confirm anywhere but SNS.
      snsMessage("SubscriptionConfirmation", "subscribe", { SubscribeURL: `${receiver.url}/?Action=ConfirmSubscription` }),
    ];
    for (const message of refusals) {
      const reply = await post(sesId, JSON.stringify(message));
      expect(reply.status, JSON.stringify(reply.body)).toBe(401);
      expect(reply.body.message).toMatch(/^ses: /);
    }
    expect(receiver.received.length - requestsBefore).toBe(0);
    expect(certificateFetches()).toBe(fetchesBefore);
    expect((await post(sesId, JSON.stringify({ Type: "Notification", Message: forged }))).status).toBe(400);
    const details = await executionDetails(stack, sesMail, "payer");
    expect(details.filter((detail) => detail.detail.includes("complaint"))).toEqual([]);
  });
});
