import { generateKeyPairSync, sign } from "node:crypto";
import { Novu } from "@novu/api";
import { startReceiver, type Receiver } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, executionDetails, settledMessage, type Message } from "./delivery-helpers.js";
import { once } from "./sdk3-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Delivery providers post what became of the messages they accepted to
// /v2/inbound-webhooks/delivery-providers/:environmentId/:integrationId (Novu's inbound webhooks):
// no API key, the provider's signature when the integration has a signing key.

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
    return request.url.startsWith("/sendgrid")
      ? { status: 202, headers: { "x-message-id": `sgid${sent}` } }
      : { status: 201, body: { sid: `SM${sent}`, status: "queued" } };
  });
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
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
