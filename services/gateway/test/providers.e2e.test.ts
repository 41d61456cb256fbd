import { createHmac, generateKeyPairSync, verify, type KeyObject } from "node:crypto";
import { registeredProviders } from "@notify/providers";
import {
  parseMail,
  startHttp2Receiver,
  startReceiver,
  startSmtpSink,
  verifySigV4,
  type Answer,
  type Received,
  type Receiver,
  type SmtpSink,
} from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, executionDetails, settledMessage, type Message } from "./delivery-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

/**
 * Every provider notify registers, end to end: an integration pointing at a local stand-in of the
 * vendor, a one-step workflow, a trigger; then what the vendor received (path, authentication,
 * body format and fields), the message `sent` with its delivery time, and one execution detail.
 */

type Channel = "email" | "sms" | "chat" | "push";

/** What a case's check sees of its send. */
interface Delivery {
  /** The requests the HTTP stand-in received under the case's path prefix, prefix kept. */
  requests: Received[];
  message: Message;
  subscriberId: string;
}

interface Case {
  providerId: string;
  channel: Channel;
  /** The integration's credentials, pointing at the local receivers. */
  credentials: () => Record<string, unknown>;
  /** The integration's configurations, when the case needs some. */
  configurations?: Record<string, unknown>;
  /** Chat and push: the subscriber's channel credentials (written with PUT /credentials unless `inTrigger`). */
  subscriberChannel?: { credentials: () => Record<string, unknown>; inTrigger?: boolean };
  /** The stand-in vendor's answer to a request under `/<providerId>/` (default: 200 with `{}`). */
  answer?: (request: Received) => Answer;
  check: (delivery: Delivery) => void | Promise<void>;
}

const FROM = "notify@example.com";
const SENDER = "Notify";
const PHONE = "+15555550100";
const SMS_FROM = "+15555550199";

const SUBJECT = "Invoice for Ada";
const HTML = "Hello <b>Ada</b>, your total is 42 €.";
const TEXT = "Hello Ada, your total is 42 €.";
const SMS_TEXT = "Code 1234 for Ada";
const CHAT_TEXT = "Deploy 2.0 finished";
const PUSH_TITLE = "Order 42";
const PUSH_TEXT = "Your order 42 has shipped";

let stack: Stack;
/** One HTTP stand-in for every vendor: each case's base URL is `<api>/<providerId>`. */
let api: Receiver;
let apnsReceiver: Receiver;
let sink: SmtpSink;
const workflows: Partial<Record<Channel, string>> = {};

const answers = new Map<string, (request: Received) => Answer>();

const json = (request: Received) => JSON.parse(request.body) as Record<string, unknown>;
const form = (request: Received) => Object.fromEntries(new URLSearchParams(request.body));
const multipart = (request: Received) => new Response(request.raw, { headers: { "content-type": String(request.headers["content-type"]) } }).formData();
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const pathOf = (request: Received) => request.url;

/** A compact JWT's header and claims once its signature checks out against the key. */
function verifiedJwt(token: string, key: KeyObject, algorithm: "RS256" | "ES256") {
  const [header = "", claims = "", signature = ""] = token.split(".");
  const signed = Buffer.from(`${header}.${claims}`);
  const valid = verify("sha256", signed, algorithm === "ES256" ? { key, dsaEncoding: "ieee-p1363" } : key, Buffer.from(signature, "base64url"));
  expect(valid, "JWT signature").toBe(true);
  const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
  return { header: decode(header), claims: decode(claims) };
}

// Keys of the push vendors, made once per run.
const fcmKeys = generateKeyPairSync("rsa", { modulusLength: 2048 });
const apnsKeys = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const FCM_ACCESS_TOKEN = "ya29.stand-in-access-token";
const FCM_CLIENT = "notify@notify-test.iam.gserviceaccount.com";

// ---------------------------------------------------------------------------------------------
// Email: the rendered subject, HTML and its text alternative, from the integration's sender.

/** The case of an HTTP email API at `<api>/<id>`. */
const emailApi = (
  providerId: string,
  credentials: Record<string, unknown>,
  check: Case["check"],
  answer?: Case["answer"],
  configurations?: Case["configurations"],
): Case => ({
  providerId,
  channel: "email",
  credentials: () => ({ from: FROM, senderName: SENDER, baseUrl: `${api.url}/${providerId}`, ...credentials }),
  ...(answer ? { answer } : {}),
  ...(configurations ? { configurations } : {}),
  check,
});

const brevoCase = (providerId: string) =>
  emailApi(
    providerId,
    { apiKey: "xkeysib-brevo" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe(`/${providerId}/v3/smtp/email`);
      expect(request!.headers["api-key"]).toBe("xkeysib-brevo");
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!)).toMatchObject({
        sender: { email: FROM, name: SENDER },
        to: [{ email: `${providerId}@example.com` }],
        subject: SUBJECT,
        htmlContent: expect.stringContaining(HTML),
        textContent: TEXT,
      });
    },
    () => ({ status: 201, body: { messageId: "<brevo-1@smtp-relay>" } }),
  );

const emailCases: Case[] = [
  {
    providerId: "nodemailer",
    channel: "email",
    credentials: () => ({ host: "127.0.0.1", port: String(sink.port), secure: false, ignoreTls: true, from: FROM, senderName: SENDER }),
    check: () => {
      const mails = sink.received.filter((mail) => mail.envelope.to.includes("nodemailer@example.com"));
      expect(mails).toHaveLength(1);
      const [{ envelope, mail }] = mails as [(typeof mails)[number]];
      expect(envelope).toEqual({ from: FROM, to: ["nodemailer@example.com"] });
      expect(mail.from?.value).toEqual([{ address: FROM, name: SENDER }]);
      expect(mail.subject).toBe(SUBJECT);
      expect(mail.html).toContain(HTML);
      expect(mail.text?.trim()).toBe(TEXT);
    },
  },
  emailApi(
    "sendgrid",
    { apiKey: "SG.sendgrid-key" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/sendgrid/v3/mail/send");
      expect(request!.headers.authorization).toBe("Bearer SG.sendgrid-key");
      expect(request!.headers["content-type"]).toBe("application/json");
      const body = json(request!);
      expect(body).toMatchObject({ personalizations: [{ to: [{ email: "sendgrid@example.com" }] }], from: { email: FROM, name: SENDER }, subject: SUBJECT });
      expect(body.content).toEqual([
        { type: "text/plain", value: TEXT },
        { type: "text/html", value: expect.stringContaining(HTML) },
      ]);
    },
    () => ({ status: 202, headers: { "x-message-id": "sendgrid-1" } }),
  ),
  emailApi(
    "mailgun",
    { apiKey: "mailgun-key", domain: "mg.example.com" },
    async ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/mailgun/v3/mg.example.com/messages");
      expect(request!.headers.authorization).toBe(basic("api", "mailgun-key"));
      expect(request!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
      const fields = await multipart(request!);
      expect(fields.get("from")).toBe(`"${SENDER}" <${FROM}>`);
      expect(fields.getAll("to")).toEqual(["mailgun@example.com"]);
      expect(fields.get("subject")).toBe(SUBJECT);
      expect(fields.get("html")).toContain(HTML);
      expect(fields.get("text")).toBe(TEXT);
    },
    () => ({ body: { id: "<mailgun-1@mg.example.com>", message: "Queued. Thank you." } }),
  ),
  emailApi(
    "postmark",
    { apiKey: "postmark-server-token" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/postmark/email");
      expect(request!.headers["x-postmark-server-token"]).toBe("postmark-server-token");
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!)).toMatchObject({
        From: `"${SENDER}" <${FROM}>`,
        To: "postmark@example.com",
        Subject: SUBJECT,
        HtmlBody: expect.stringContaining(HTML),
        TextBody: TEXT,
      });
    },
    () => ({ body: { ErrorCode: 0, Message: "OK", MessageID: "postmark-1" } }),
  ),
  emailApi(
    "resend",
    { apiKey: "re_resend_key" },
    ({ requests: [request], message }) => {
      expect(pathOf(request!)).toBe("/resend/emails");
      expect(request!.headers.authorization).toBe("Bearer re_resend_key");
      expect(request!.headers["content-type"]).toBe("application/json");
      // The same key on every attempt at this message: Resend answers a repeat with the first email.
      expect(request!.headers["idempotency-key"]).toBe(message._id);
      expect(json(request!)).toMatchObject({
        from: `"${SENDER}" <${FROM}>`,
        to: ["resend@example.com"],
        subject: SUBJECT,
        html: expect.stringContaining(HTML),
        text: TEXT,
      });
    },
    () => ({ body: { id: "resend-1" } }),
  ),
  emailApi(
    "ses",
    { apiKey: "AKIDSTANDIN", secretKey: "ses-secret", region: "eu-west-1" },
    async ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/ses/v2/email/outbound-emails");
      // Signed over what arrived (Host with the port, the exact body), as AWS checks it.
      expect(verifySigV4(request!, "ses-secret")).toMatchObject({ accessKeyId: "AKIDSTANDIN", region: "eu-west-1", service: "ses" });
      expect(request!.headers["x-amz-date"]).toMatch(/^\d{8}T\d{6}Z$/);
      const body = json(request!);
      expect(body).toMatchObject({ FromEmailAddress: FROM, Destination: { ToAddresses: ["ses@example.com"] }, ConfigurationSetName: "notify-events" });
      const raw = (body.Content as { Raw: { Data: string } }).Raw.Data;
      const mail = await parseMail(Buffer.from(raw, "base64"));
      expect(mail.from?.value).toEqual([{ address: FROM, name: SENDER }]);
      expect(mail.subject).toBe(SUBJECT);
      expect(mail.html).toContain(HTML);
      expect(mail.text?.trim()).toBe(TEXT);
    },
    () => ({ body: { MessageId: "ses-1" } }),
    { configurationSetName: "notify-events" },
  ),
  brevoCase("brevo"),
  // Novu's former name of Brevo, registered so integrations made through Novu's API keep sending.
  brevoCase("sendinblue"),
  emailApi(
    "mailjet",
    { apiKey: "mailjet-key", secretKey: "mailjet-secret" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/mailjet/v3.1/send");
      expect(request!.headers.authorization).toBe(basic("mailjet-key", "mailjet-secret"));
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!).Messages).toEqual([
        expect.objectContaining({
          From: { Email: FROM, Name: SENDER },
          To: [{ Email: "mailjet@example.com" }],
          Subject: SUBJECT,
          HTMLPart: expect.stringContaining(HTML),
          TextPart: TEXT,
        }),
      ]);
    },
    () => ({ body: { Messages: [{ Status: "success", To: [{ Email: "mailjet@example.com", MessageID: 1152921504 }] }] } }),
  ),
];

// ---------------------------------------------------------------------------------------------
// SMS: the rendered text to the subscriber's phone, from the integration's number.

const smsApi = (providerId: string, credentials: Record<string, unknown>, check: Case["check"], answer?: Case["answer"]): Case => ({
  providerId,
  channel: "sms",
  credentials: () => ({ from: SMS_FROM, baseUrl: `${api.url}/${providerId}`, ...credentials }),
  ...(answer ? { answer } : {}),
  check,
});

const vonageCase = (providerId: string) =>
  smsApi(
    providerId,
    { apiKey: "vonage-key", secretKey: "vonage-secret" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe(`/${providerId}/sms/json`);
      expect(request!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      // Vonage authenticates by the form's api_key and api_secret.
      expect(form(request!)).toEqual({ api_key: "vonage-key", api_secret: "vonage-secret", from: SMS_FROM, to: PHONE, text: SMS_TEXT });
    },
    () => ({ body: { "message-count": "1", messages: [{ to: PHONE, "message-id": "vonage-1", status: "0" }] } }),
  );

const smsCases: Case[] = [
  smsApi(
    "twilio",
    { accountSid: "AC0123456789", token: "twilio-token" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/twilio/2010-04-01/Accounts/AC0123456789/Messages.json");
      expect(request!.headers.authorization).toBe(basic("AC0123456789", "twilio-token"));
      expect(request!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      expect(form(request!)).toEqual({ To: PHONE, From: SMS_FROM, Body: SMS_TEXT });
    },
    () => ({ status: 201, body: { sid: "SM0123", status: "queued" } }),
  ),
  vonageCase("vonage"),
  // Novu's former name of Vonage.
  vonageCase("nexmo"),
  smsApi(
    "plivo",
    { accountSid: "MAPLIVO0001", token: "plivo-token" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/plivo/v1/Account/MAPLIVO0001/Message/");
      expect(request!.headers.authorization).toBe(basic("MAPLIVO0001", "plivo-token"));
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!)).toEqual({ src: SMS_FROM, dst: PHONE, text: SMS_TEXT });
    },
    () => ({ status: 202, body: { message: "message(s) queued", message_uuid: ["plivo-1"], api_id: "api-1" } }),
  ),
  smsApi(
    "sns",
    { apiKey: "AKIDSNS", secretKey: "sns-secret", region: "us-east-1" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/sns/");
      expect(verifySigV4(request!, "sns-secret")).toMatchObject({ accessKeyId: "AKIDSNS", region: "us-east-1", service: "sns" });
      expect(request!.headers["content-type"]).toBe("application/x-www-form-urlencoded; charset=utf-8");
      expect(form(request!)).toEqual({ Action: "Publish", Version: "2010-03-31", PhoneNumber: PHONE, Message: SMS_TEXT });
    },
    () => ({
      headers: { "content-type": "text/xml" },
      body: "<PublishResponse><PublishResult><MessageId>sns-1</MessageId></PublishResult></PublishResponse>",
    }),
  ),
  smsApi(
    "telnyx",
    { apiKey: "KEYTELNYX" },
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/telnyx/v2/messages");
      expect(request!.headers.authorization).toBe("Bearer KEYTELNYX");
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!)).toEqual({ to: PHONE, text: SMS_TEXT, from: SMS_FROM });
    },
    () => ({ body: { data: { id: "telnyx-1", record_type: "message" } } }),
  ),
  {
    providerId: "generic-sms",
    channel: "sms",
    credentials: () => ({
      from: SMS_FROM,
      baseUrl: `${api.url}/generic-sms/send`,
      apiKey: "generic-key",
      apiKeyRequestHeader: "x-api-key",
      secretKey: "generic-secret",
      secretKeyRequestHeader: "x-api-secret",
      idPath: "data.id",
    }),
    answer: () => ({ body: { data: { id: "generic-1" } } }),
    check: ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/generic-sms/send");
      expect(request!.headers["x-api-key"]).toBe("generic-key");
      expect(request!.headers["x-api-secret"]).toBe("generic-secret");
      expect(request!.headers["content-type"]).toBe("application/json");
      // As Novu posts it: with its message id and the trigger's customData (none here).
      expect(json(request!)).toEqual({
        to: PHONE,
        content: SMS_TEXT,
        from: SMS_FROM,
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        customData: {},
        sender: SMS_FROM,
      });
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Chat: the subscriber's channel (its webhook) and the integration's settings.

/** A chat case whose subscriber channel posts to `<api>/<id>/hook`. */
const chatHook = (providerId: string, check: Case["check"], extra: Partial<Case> = {}): Case => ({
  providerId,
  channel: "chat",
  credentials: () => ({}),
  subscriberChannel: { credentials: () => ({ webhookUrl: `${api.url}/${providerId}/hook` }) },
  check,
  ...extra,
});

const chatCases: Case[] = [
  chatHook(
    "slack",
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/slack/hook");
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!)).toEqual({ text: CHAT_TEXT });
    },
    { answer: () => ({ headers: { "x-slack-req-id": "slack-1" }, body: "ok" }) },
  ),
  chatHook(
    "discord",
    ({ requests: [request] }) => {
      // wait=true: Discord answers the created message.
      expect(pathOf(request!)).toBe("/discord/hook?wait=true");
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!)).toEqual({ content: CHAT_TEXT });
    },
    { answer: () => ({ body: { id: "discord-1", content: CHAT_TEXT } }) },
  ),
  chatHook(
    "msteams",
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/msteams/hook");
      expect(request!.headers["content-type"]).toBe("application/json");
      const body = json(request!);
      expect(body.type).toBe("message");
      expect(body.attachments).toEqual([
        expect.objectContaining({
          contentType: "application/vnd.microsoft.card.adaptive",
          content: expect.objectContaining({ type: "AdaptiveCard", body: [expect.objectContaining({ type: "TextBlock", text: CHAT_TEXT })] }),
        }),
      ]);
    },
    { answer: () => ({ body: "1" }) },
  ),
  chatHook(
    "mattermost",
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/mattermost/hook");
      expect(json(request!)).toEqual({ text: CHAT_TEXT, channel: "town-square" });
    },
    { subscriberChannel: { credentials: () => ({ webhookUrl: `${api.url}/mattermost/hook`, channel: "town-square" }) }, answer: () => ({ body: "ok" }) },
  ),
  {
    providerId: "rocket-chat",
    channel: "chat",
    credentials: () => ({ token: "rocket-token", user: "rocket-user-id" }),
    // Rocket.Chat's channel is the server's base URL and the room.
    subscriberChannel: { credentials: () => ({ webhookUrl: `${api.url}/rocket-chat`, channel: "GENERAL" }) },
    answer: () => ({ body: { success: true, message: { _id: "rocket-1", rid: "GENERAL" } } }),
    check: ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/rocket-chat/api/v1/chat.sendMessage");
      expect(request!.headers["x-auth-token"]).toBe("rocket-token");
      expect(request!.headers["x-user-id"]).toBe("rocket-user-id");
      expect(json(request!)).toEqual({ message: { rid: "GENERAL", msg: CHAT_TEXT } });
    },
  },
  chatHook(
    "zulip",
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/zulip/hook");
      expect(json(request!)).toEqual({ text: CHAT_TEXT });
    },
    { answer: () => ({ body: { result: "success", msg: "" } }) },
  ),
  chatHook(
    "grafana-on-call",
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/grafana-on-call/hook");
      expect(json(request!)).toEqual({
        alert_uid: "alert-7",
        title: "Deploys",
        image_url: "https://example.com/deploy.png",
        state: "alerting",
        link_to_upstream_details: "https://example.com/deploys/7",
        message: CHAT_TEXT,
      });
    },
    {
      credentials: () => ({
        alertUid: "alert-7",
        title: "Deploys",
        imageUrl: "https://example.com/deploy.png",
        state: "alerting",
        externalLink: "https://example.com/deploys/7",
      }),
      answer: () => ({ body: "Ok." }),
    },
  ),
  chatHook("ryver", ({ requests: [request] }) => {
    expect(pathOf(request!)).toBe("/ryver/hook");
    expect(json(request!)).toEqual({ content: CHAT_TEXT });
  }),
  chatHook(
    "getstream",
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/getstream/hook");
      expect(request!.headers["x-api-key"]).toBe("getstream-key");
      expect(json(request!)).toEqual({ text: CHAT_TEXT });
    },
    { credentials: () => ({ apiKey: "getstream-key" }) },
  ),
  {
    providerId: "whatsapp-business",
    channel: "chat",
    credentials: () => ({ apiToken: "whatsapp-token", phoneNumberIdentification: "1098765432", baseUrl: `${api.url}/whatsapp-business` }),
    // WhatsApp sends to the subscriber's phone; the channel only binds the integration.
    subscriberChannel: { credentials: () => ({}) },
    answer: () => ({ body: { messaging_product: "whatsapp", contacts: [{ input: PHONE, wa_id: "15555550100" }], messages: [{ id: "wamid.1" }] } }),
    check: ({ requests: [request] }) => {
      expect(pathOf(request!)).toMatch(/^\/whatsapp-business\/v\d+\.\d+\/1098765432\/messages$/);
      expect(request!.headers.authorization).toBe("Bearer whatsapp-token");
      expect(json(request!)).toEqual({
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: PHONE,
        type: "text",
        text: { body: CHAT_TEXT, preview_url: false },
      });
    },
  },
  chatHook(
    "chat-webhook",
    ({ requests: [request], message }) => {
      expect(pathOf(request!)).toBe("/chat-webhook/hook");
      expect(request!.headers["x-novu-signature"]).toBe(createHmac("sha256", "chat-webhook-secret").update(request!.raw).digest("hex"));
      expect(request!.headers["idempotency-key"]).toBe(message._id);
      expect(json(request!)).toEqual({ content: CHAT_TEXT, webhookUrl: `${api.url}/chat-webhook/hook` });
    },
    {
      credentials: () => ({ secretKey: "chat-webhook-secret" }),
      // This channel travels in the trigger's recipient object rather than a credentials write.
      subscriberChannel: { credentials: () => ({ webhookUrl: `${api.url}/chat-webhook/hook` }), inTrigger: true },
      answer: () => ({ body: { id: "chat-webhook-1" } }),
    },
  ),
];

// ---------------------------------------------------------------------------------------------
// Push: the subscriber's device tokens, the rendered title and content, the payload.

const pushCase = (providerId: string, credentials: () => Record<string, unknown>, check: Case["check"], answer?: Case["answer"]): Case => ({
  providerId,
  channel: "push",
  credentials,
  subscriberChannel: { credentials: () => ({ deviceTokens: [`${providerId}-device-1`] }) },
  ...(answer ? { answer } : {}),
  check,
});

const pushCases: Case[] = [
  pushCase(
    "fcm",
    () => ({
      baseUrl: `${api.url}/fcm`,
      serviceAccount: JSON.stringify({
        type: "service_account",
        project_id: "notify-test",
        client_email: FCM_CLIENT,
        private_key: fcmKeys.privateKey.export({ type: "pkcs8", format: "pem" }),
        token_uri: `${api.url}/fcm/oauth2/token`,
      }),
    }),
    ({ requests: [token, send], message }) => {
      // The service account's assertion, exchanged at its own token endpoint.
      expect(pathOf(token!)).toBe("/fcm/oauth2/token");
      expect(token!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      const grant = form(token!);
      expect(grant.grant_type).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
      const { header, claims } = verifiedJwt(grant.assertion ?? "", fcmKeys.publicKey, "RS256");
      expect(header.alg).toBe("RS256");
      expect(claims).toMatchObject({ iss: FCM_CLIENT, aud: `${api.url}/fcm/oauth2/token`, scope: "https://www.googleapis.com/auth/firebase.messaging" });
      // Then the HTTP v1 send with the access token.
      expect(pathOf(send!)).toBe("/fcm/v1/projects/notify-test/messages:send");
      expect(send!.headers.authorization).toBe(`Bearer ${FCM_ACCESS_TOKEN}`);
      expect(json(send!)).toEqual({
        message: { token: "fcm-device-1", notification: { title: PUSH_TITLE, body: PUSH_TEXT }, data: { __nvMessageId: message._id } },
      });
    },
    (request) =>
      request.url === "/fcm/oauth2/token"
        ? { body: { access_token: FCM_ACCESS_TOKEN, expires_in: 3599, token_type: "Bearer" } }
        : { body: { name: "projects/notify-test/messages/0:1" } },
  ),
  pushCase(
    "apns",
    () => ({
      secretKey: apnsKeys.privateKey.export({ type: "pkcs8", format: "pem" }),
      apiKey: "KEYID12345",
      projectName: "TEAMID1234",
      applicationId: "com.example.app",
      baseUrl: apnsReceiver.url,
    }),
    ({ message }) => {
      // APNs speaks HTTP/2 only: its stand-in is the h2c receiver.
      expect(apnsReceiver.received).toHaveLength(1);
      const [request] = apnsReceiver.received;
      expect([request!.method, pathOf(request!)]).toEqual(["POST", "/3/device/apns-device-1"]);
      expect(request!.headers).toMatchObject({ "apns-topic": "com.example.app", "apns-push-type": "alert", "content-type": "application/json" });
      const { header, claims } = verifiedJwt(String(request!.headers.authorization).replace(/^bearer /, ""), apnsKeys.publicKey, "ES256");
      expect(header).toMatchObject({ alg: "ES256", kid: "KEYID12345" });
      expect(claims.iss).toBe("TEAMID1234");
      // As Novu hands every push provider the payload: with the message's id in it.
      expect(json(request!)).toEqual({ orderId: "42", __nvMessageId: message._id, aps: { alert: { title: PUSH_TITLE, body: PUSH_TEXT } } });
    },
  ),
  pushCase(
    "expo",
    () => ({ apiKey: "expo-access-token", baseUrl: `${api.url}/expo` }),
    ({ requests: [request], message }) => {
      expect(pathOf(request!)).toBe("/expo/--/api/v2/push/send");
      expect(request!.headers.authorization).toBe("Bearer expo-access-token");
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(json(request!)).toEqual([{ to: "expo-device-1", title: PUSH_TITLE, body: PUSH_TEXT, data: { orderId: "42", __nvMessageId: message._id } }]);
    },
    () => ({ body: { data: [{ status: "ok", id: "expo-ticket-1" }] } }),
  ),
  pushCase(
    "one-signal",
    () => ({ apiKey: "os_v2_app_standin", applicationId: "b2f7f966-d8cc-11e4-bed1-df8f05be55ba", baseUrl: `${api.url}/one-signal` }),
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/one-signal/notifications");
      expect(request!.headers.authorization).toBe("Key os_v2_app_standin");
      expect(json(request!)).toMatchObject({
        app_id: "b2f7f966-d8cc-11e4-bed1-df8f05be55ba",
        include_player_ids: ["one-signal-device-1"],
        headings: { en: PUSH_TITLE },
        contents: { en: PUSH_TEXT },
        data: { orderId: "42" },
        idempotency_key: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      });
    },
    () => ({ body: { id: "onesignal-1" } }),
  ),
  pushCase(
    "pushpad",
    () => ({ apiKey: "pushpad-token", applicationId: "5123", baseUrl: `${api.url}/pushpad` }),
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/pushpad/api/v1/projects/5123/notifications");
      expect(request!.headers.authorization).toBe("Bearer pushpad-token");
      expect(json(request!)).toEqual({ title: PUSH_TITLE, body: PUSH_TEXT, uids: ["pushpad-device-1"] });
    },
    () => ({ status: 201, body: { id: 197123, scheduled: 1 } }),
  ),
  pushCase(
    "pusher-beams",
    () => ({ instanceId: "beams-instance", secretKey: "beams-secret", baseUrl: `${api.url}/pusher-beams` }),
    ({ requests: [request] }) => {
      expect(pathOf(request!)).toBe("/pusher-beams/publish_api/v1/instances/beams-instance/publishes/users");
      expect(request!.headers.authorization).toBe("Bearer beams-secret");
      expect(json(request!)).toMatchObject({
        users: ["pusher-beams-device-1"],
        apns: { aps: { alert: { title: PUSH_TITLE, body: PUSH_TEXT } } },
        fcm: { notification: { title: PUSH_TITLE, body: PUSH_TEXT }, data: { orderId: "42" } },
        web: { notification: { title: PUSH_TITLE, body: PUSH_TEXT }, data: { orderId: "42" } },
      });
    },
    () => ({ body: { publishId: "pubid-1" } }),
  ),
  pushCase(
    "push-webhook",
    () => ({ webhookUrl: `${api.url}/push-webhook/hook`, secretKey: "push-webhook-secret" }),
    ({ requests: [request], message }) => {
      expect(pathOf(request!)).toBe("/push-webhook/hook");
      // The signature is over the exact bytes received, keyed by the integration's secret.
      expect(request!.headers["x-novu-signature"]).toBe(createHmac("sha256", "push-webhook-secret").update(request!.raw).digest("hex"));
      expect(json(request!)).toMatchObject({
        target: ["push-webhook-device-1"],
        title: PUSH_TITLE,
        content: PUSH_TEXT,
        messageId: message._id,
        payload: {
          orderId: "42",
          __nvMessageId: message._id,
          subscriber: { subscriberId: "push-push-webhook", _id: message._subscriberId, firstName: "Ada", email: "push-webhook@example.com", data: {} },
        },
      });
      expect(json(request!).payload).not.toHaveProperty("subscriber.channels");
    },
    () => ({ body: { id: "webhook-1" } }),
  ),
];

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  [api, apnsReceiver, sink] = await Promise.all([
    startReceiver((request) => answers.get(request.url.split("/")[1] ?? "")?.(request) ?? { body: {} }),
    startHttp2Receiver(() => ({ headers: { "apns-id": "a5e0f2f6-7bd4-4d6c-9c4f-5d6a0e0b1c2d" } })),
    startSmtpSink(),
  ]);
  // Every stand-in listens on loopback: the worker may call it, and the gateway may store URLs pointing at it.
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
  const [email, sms, chat, push] = await Promise.all([
    createWorkflow(stack, "Provider mail", [
      {
        template: {
          type: "email",
          subject: "Invoice for {{subscriber.firstName}}",
          content: [{ type: "text", content: "Hello <b>{{subscriber.firstName}}</b>, your total is {{total}}." }],
        },
      },
    ]),
    createWorkflow(stack, "Provider sms", [{ template: { type: "sms", content: "Code {{code}} for {{subscriber.firstName}}" } }]),
    createWorkflow(stack, "Provider chat", [{ template: { type: "chat", content: "Deploy {{version}} finished" } }]),
    createWorkflow(stack, "Provider push", [{ template: { type: "push", title: "Order {{orderId}}", content: "Your order {{orderId}} has shipped" } }]),
  ]);
  Object.assign(workflows, { email, sms, chat, push });
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([api?.close(), apnsReceiver?.close(), sink?.close()]);
});

const PAYLOAD: Record<Channel, Record<string, unknown>> = {
  email: { total: "42 €" },
  sms: { code: "1234" },
  chat: { version: "2.0" },
  push: { orderId: "42" },
};

/** Sets the case's integration and subscriber up, triggers its workflow, and answers the transaction and subscriber. */
async function trigger(testCase: Case): Promise<{ transactionId: string; subscriberId: string }> {
  const { providerId, channel } = testCase;
  const identifier = `${providerId}-standin`;
  if (testCase.answer) answers.set(providerId, testCase.answer);
  const credentials = testCase.credentials();
  await createIntegration(stack, { providerId, channel, identifier, credentials, configurations: testCase.configurations ?? {} });

  const subscriberId = `${channel}-${providerId}`;
  // Once the environment has a WhatsApp integration, a chat step reaches every subscriber with a phone there too.
  const phone = channel !== "chat" || providerId === "whatsapp-business" ? { phone: PHONE } : {};
  const profile = { subscriberId, firstName: "Ada", email: `${providerId}@example.com`, ...phone };
  const channelWrite = { providerId, integrationIdentifier: identifier, credentials: testCase.subscriberChannel?.credentials() ?? {} };
  let to: unknown = subscriberId;
  if (testCase.subscriberChannel?.inTrigger) {
    to = { ...profile, channels: [channelWrite] };
  } else {
    const created = await stack.request("POST", "/v1/subscribers", profile);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    if (testCase.subscriberChannel) {
      const written = await stack.request("PUT", `/v1/subscribers/${subscriberId}/credentials`, channelWrite);
      expect(written.status, JSON.stringify(written.body)).toBe(200);
    }
  }

  const transactionId = `t-${providerId}`;
  // Email and SMS pick the integration by identifier: the environment has one of each provider.
  const overrides = channel === "email" || channel === "sms" ? { [channel]: { integrationIdentifier: identifier } } : {};
  const reply = await stack.request("POST", "/v1/events/trigger", { name: workflows[channel], to, payload: PAYLOAD[channel], overrides, transactionId });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  expect(reply.body.data.status).toBe("processed");
  return { transactionId, subscriberId };
}

/** Settled: delivered, or an outcome other than the initial one (the first failed attempt already shows `error`). */
const settled = (message: Message) => message.deliveredAt.length > 0 || message.status !== "sent";

const groups: [string, Case[]][] = [
  ["email", emailCases],
  ["sms", smsCases],
  ["chat", chatCases],
  ["push", pushCases],
];

it("has a case for every provider notify registers", () => {
  const covered = groups.flatMap(([, cases]) => cases.map(({ channel, providerId }) => `${channel}/${providerId}`));
  expect(covered.sort()).toEqual(
    registeredProviders()
      .map(({ channel, id }) => `${channel}/${id}`)
      .sort(),
  );
});

for (const [name, cases] of groups) {
  describe(`${name} providers`, () => {
    for (const testCase of cases) {
      it(`${testCase.providerId}: the vendor receives its request, the message ends sent, one execution detail`, async () => {
        const { transactionId, subscriberId } = await trigger(testCase);
        const message = await settledMessage(stack, transactionId, testCase.channel, settled);
        expect(message, `${message.errorId}: ${message.errorText}`).toMatchObject({ status: "sent" });
        expect(message.deliveredAt).toHaveLength(1);
        expect(Number.isNaN(Date.parse(message.deliveredAt[0]!))).toBe(false);

        const requests = api.received.filter((request) => request.url.startsWith(`/${testCase.providerId}/`));
        await testCase.check({ requests, message, subscriberId });
        // One call to the vendor (FCM: the token exchange, then the send).
        if (testCase.providerId !== "nodemailer" && testCase.providerId !== "apns") expect(requests).toHaveLength(testCase.providerId === "fcm" ? 2 : 1);

        const details = await executionDetails(stack, message, subscriberId);
        expect(details).toEqual([expect.objectContaining({ _messageId: message._id, status: "Success", providerId: testCase.providerId, isRetry: false })]);
      });
    }
  });
}

/** The case's integration, made unless the case's own test made it already (tests may run alone). */
async function integrationOf(testCase: Case): Promise<Case> {
  const listed = await stack.request<Data<{ providerId: string }[]>>("GET", "/v1/integrations");
  if (!listed.body.data.some(({ providerId }) => providerId === testCase.providerId)) {
    if (testCase.answer) answers.set(testCase.providerId, testCase.answer);
    await createIntegration(stack, { providerId: testCase.providerId, channel: testCase.channel, credentials: testCase.credentials() });
  }
  return testCase;
}

it("whatsapp-business: reaches a subscriber who has a phone and no chat channel, as Novu does", async () => {
  const whatsapp = await integrationOf(chatCases.find(({ providerId }) => providerId === "whatsapp-business")!);
  const before = api.received.length;
  const reply = await stack.request("POST", "/v1/events/trigger", {
    name: workflows.chat,
    to: { subscriberId: "phone-only", firstName: "Ada", phone: PHONE },
    payload: PAYLOAD.chat,
    transactionId: "t-phone-only",
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  const message = await settledMessage(stack, "t-phone-only", "chat", settled);
  expect(message, `${message.errorId}: ${message.errorText}`).toMatchObject({ status: "sent", providerId: "whatsapp-business" });
  await whatsapp.check({ requests: api.received.slice(before), message, subscriberId: "phone-only" });
});

it("fcm: sends to the topic the trigger's provider overrides name, for a subscriber without a device, as Novu does", async () => {
  await integrationOf(pushCases.find(({ providerId }) => providerId === "fcm")!);
  const before = api.received.length;
  const reply = await stack.request("POST", "/v1/events/trigger", {
    name: workflows.push,
    to: { subscriberId: "topic-reader", firstName: "Ada" },
    payload: PAYLOAD.push,
    overrides: { providers: { fcm: { topic: "orders" } } },
    transactionId: "t-fcm-topic",
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  const message = await settledMessage(stack, "t-fcm-topic", "push", settled);
  expect(message, `${message.errorId}: ${message.errorText}`).toMatchObject({ status: "sent", providerId: "fcm" });
  const sends = api.received.slice(before).filter((request) => request.url.endsWith("/messages:send"));
  expect(sends.map((request) => json(request))).toEqual([
    { message: { topic: "orders", notification: { title: PUSH_TITLE, body: PUSH_TEXT }, data: { __nvMessageId: message._id } } },
  ]);
});
