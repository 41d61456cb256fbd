import { createHmac, generateKeyPairSync, sign } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { type InboundWebhook, readProviderEvents, type SnsEndpoints, snsUrlRefusal, WebhookRefused } from "../src/events/index.js";

const URL = "https://notify.example/v2/inbound-webhooks/delivery-providers/env/int";

function jsonWebhook(body: unknown, headers: Record<string, string> = {}): InboundWebhook {
  return { body: Buffer.from(JSON.stringify(body)), contentType: "application/json", headers, url: URL };
}

function formWebhook(fields: Record<string, string>, headers: Record<string, string> = {}): InboundWebhook {
  return { body: Buffer.from(new URLSearchParams(fields).toString()), contentType: "application/x-www-form-urlencoded", headers, url: URL };
}

/** No SNS here: none of these providers posts through it. */
const noSns: SnsEndpoints = {
  certificate: () => Promise.reject(new Error("SNS is not called here")),
  confirm: () => Promise.reject(new Error("SNS is not called here")),
};

const read = (providerId: string, webhook: InboundWebhook, signingKey: string | undefined) =>
  readProviderEvents(providerId, webhook, { signingKey, sns: noSns });

async function refusal(providerId: string, webhook: InboundWebhook, signingKey: string | undefined): Promise<WebhookRefused> {
  try {
    await read(providerId, webhook, signingKey);
  } catch (error) {
    if (error instanceof WebhookRefused) return error;
    throw error;
  }
  throw new Error("expected the webhook to be refused");
}

describe("provider events: what each provider's webhook says", () => {
  it("sendgrid: a batch, matched by the X-Message-Id that begins sg_message_id; unknown kinds left out", async () => {
    const events = await read(
      "sendgrid",
      jsonWebhook([
        { event: "delivered", sg_message_id: "14c5d75ce93.filter0001.16648.5515E0B88.0", sg_event_id: "ev-1", timestamp: 1_764_000_000, response: "250 OK" },
        {
          event: "bounce",
          sg_message_id: "14c5d75ce93.filter0001.16648.5515E0B88.1",
          sg_event_id: "ev-2",
          timestamp: 1_764_000_060,
          reason: "550 no mailbox",
          attempt: "2",
        },
        { event: "processed", sg_message_id: "14c5d75ce93.filter0001", timestamp: 1_764_000_000 },
        { event: "open", timestamp: 1_764_000_000 },
      ]),
      undefined,
    );
    expect(events).toEqual([
      {
        providerMessageId: "14c5d75ce93",
        status: "delivered",
        occurredAt: new Date(1_764_000_000_000),
        externalId: "ev-1",
        response: "250 OK",
        raw: JSON.stringify({
          event: "delivered",
          sg_message_id: "14c5d75ce93.filter0001.16648.5515E0B88.0",
          sg_event_id: "ev-1",
          timestamp: 1_764_000_000,
          response: "250 OK",
        }),
      },
      expect.objectContaining({
        providerMessageId: "14c5d75ce93",
        status: "bounced",
        attempts: 2,
        response: "550 no mailbox",
        occurredAt: new Date(1_764_000_060_000),
      }),
    ]);
  });

  it("mailgun: the Message-Id in angle brackets, a temporary failure deferred and a permanent one rejected", async () => {
    const event = (kind: string, severity?: string) => ({
      "event-data": {
        id: "mg-ev",
        event: kind,
        ...(severity ? { severity } : {}),
        timestamp: 1_764_000_000.5,
        message: { headers: { "message-id": "20261127.1@mg.example" } },
        "delivery-status": { "attempt-no": 3, description: "mailbox full" },
      },
    });
    expect(await read("mailgun", jsonWebhook(event("delivered")), undefined)).toEqual([
      expect.objectContaining({
        providerMessageId: "<20261127.1@mg.example>",
        status: "delivered",
        externalId: "mg-ev",
        attempts: 3,
        occurredAt: new Date(1_764_000_000_500),
      }),
    ]);
    expect((await read("mailgun", jsonWebhook(event("failed", "temporary")), undefined))[0]?.status).toBe("deferred");
    expect((await read("mailgun", jsonWebhook(event("failed", "permanent")), undefined))[0]?.status).toBe("rejected");
    expect(await read("mailgun", jsonWebhook(event("stored")), undefined)).toEqual([]);
  });

  it("postmark, resend, brevo, mailjet: each provider's id field and event names", async () => {
    expect(
      await read("postmark", jsonWebhook({ RecordType: "Bounce", MessageID: "pm-1", BouncedAt: "2026-11-27T10:00:00Z", Details: "smtp;550" }), undefined),
    ).toEqual([expect.objectContaining({ providerMessageId: "pm-1", status: "bounced", response: "smtp;550", occurredAt: new Date("2026-11-27T10:00:00Z") })]);
    expect(
      await read("resend", jsonWebhook({ type: "email.delivery_delayed", created_at: "2026-11-27T10:00:00.000Z", data: { email_id: "re-1" } }), undefined),
    ).toEqual([expect.objectContaining({ providerMessageId: "re-1", status: "delayed" })]);
    expect(
      await read("brevo", jsonWebhook({ event: "hard_bounce", "message-id": "<b-1@relay>", ts_event: 1_764_000_000, reason: "unknown user" }), undefined),
    ).toEqual([expect.objectContaining({ providerMessageId: "<b-1@relay>", status: "bounced", response: "unknown user" })]);
    expect(await read("mailjet", jsonWebhook([{ event: "open", MessageID: 19_421_777_835_146_490, time: 1_764_000_000 }]), undefined)).toEqual([
      expect.objectContaining({ providerMessageId: "19421777835146490", status: "opened" }),
    ]);
    // The id's digits as written, where the number itself would be rounded.
    expect(
      await read("mailjet", jsonWebhook([{ event: "sent", MessageID: 1_152_921_511_742_440_000, mj_message_id: "1152921511742440123" }]), undefined),
    ).toEqual([expect.objectContaining({ providerMessageId: "1152921511742440123", status: "sent" })]);
  });

  it("twilio and plivo read form posts; telnyx its status per recipient", async () => {
    expect(await read("twilio", formWebhook({ MessageSid: "SM1", MessageStatus: "undelivered", ErrorCode: "30003" }), undefined)).toEqual([
      expect.objectContaining({ providerMessageId: "SM1", status: "undelivered", response: "30003" }),
    ]);
    expect(await read("plivo", formWebhook({ MessageUUID: "pl-1", Status: "delivered" }), undefined)).toEqual([
      expect.objectContaining({ providerMessageId: "pl-1", status: "delivered" }),
    ]);
    expect(
      await read(
        "telnyx",
        jsonWebhook({
          data: {
            id: "tx-ev",
            occurred_at: "2026-11-27T10:00:00Z",
            payload: { id: "tx-1", to: [{ status: "delivery_failed" }], errors: [{ detail: "carrier rejected" }] },
          },
        }),
        undefined,
      ),
    ).toEqual([expect.objectContaining({ providerMessageId: "tx-1", status: "failed", externalId: "tx-ev", response: "carrier rejected" })]);
  });

  it("refuses an unknown provider and a body that is not JSON", async () => {
    expect((await refusal("fcm", jsonWebhook({}), undefined)).reason).toBe("unsupported");
    const broken = { ...jsonWebhook({}), body: Buffer.from("{nope") };
    expect((await refusal("sendgrid", broken, undefined)).reason).toBe("body");
  });
});

describe("provider events: signatures, when the integration has a signing key", () => {
  const delivered = [{ event: "delivered", sg_message_id: "abc.filter", timestamp: 1_764_000_000 }];

  it("sendgrid: ECDSA over the timestamp and the exact body, with the key as SendGrid shows it", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const key = publicKey.export({ format: "der", type: "spki" }).toString("base64");
    const webhook = jsonWebhook(delivered);
    const timestamp = "1764000000";
    const signature = sign("sha256", Buffer.concat([Buffer.from(timestamp), webhook.body]), privateKey).toString("base64");
    const signed = {
      ...webhook,
      headers: { "x-twilio-email-event-webhook-signature": signature, "x-twilio-email-event-webhook-timestamp": timestamp },
    };
    expect(await read("sendgrid", signed, key)).toHaveLength(1);
    const tampered = { ...signed, body: Buffer.from(JSON.stringify([{ ...delivered[0], event: "bounce" }])) };
    expect((await refusal("sendgrid", tampered, key)).reason).toBe("signature");
    expect((await refusal("sendgrid", webhook, key)).message).toMatch(/no x-twilio-email-event-webhook-signature header/);
    expect((await refusal("sendgrid", signed, "not a key")).message).toMatch(/not a public key/);
  });

  it("mailgun: HMAC of the body's timestamp and token", async () => {
    const key = "key-mailgun-signing";
    const body = (signature: string) => ({
      signature: { timestamp: "1764000000", token: "tok", signature },
      "event-data": { event: "delivered", message: { headers: { "message-id": "m@mg" } } },
    });
    const good = createHmac("sha256", key).update("1764000000tok").digest("hex");
    expect(await read("mailgun", jsonWebhook(body(good)), key)).toHaveLength(1);
    expect((await refusal("mailgun", jsonWebhook(body(good.replace(/.$/, "0"))), key)).reason).toBe("signature");
    expect((await refusal("mailgun", jsonWebhook({ "event-data": {} }), key)).reason).toBe("signature");
  });

  it("resend: Svix headers checked as Standard Webhooks, a stale timestamp refused", async () => {
    const secret = `whsec_${Buffer.from("resend-secret-bytes").toString("base64")}`;
    const webhook = jsonWebhook({ type: "email.delivered", data: { email_id: "re-1" } });
    const signer = new Webhook(secret);
    const headersAt = (seconds: number) => ({
      "svix-id": "msg_1",
      "svix-timestamp": String(seconds),
      "svix-signature": signer.sign("msg_1", new Date(seconds * 1000), webhook.body.toString()),
    });
    const now = Math.floor(Date.now() / 1000);
    expect(await read("resend", { ...webhook, headers: headersAt(now) }, secret)).toHaveLength(1);
    expect((await refusal("resend", { ...webhook, headers: headersAt(now - 3600) }, secret)).message).toMatch(/too old/);
    expect((await refusal("resend", { ...webhook, headers: headersAt(now) }, `whsec_${Buffer.from("other").toString("base64")}`)).reason).toBe("signature");
  });

  it("twilio: HMAC-SHA1 of the URL and the sorted parameters, keyed by the auth token", async () => {
    const token = "twilio-auth-token";
    const fields = { MessageStatus: "delivered", MessageSid: "SM1", AccountSid: "AC1" };
    const signature = createHmac("sha1", token).update(`${URL}AccountSidAC1MessageSidSM1MessageStatusdelivered`).digest("base64");
    expect(await read("twilio", formWebhook(fields, { "x-twilio-signature": signature }), token)).toHaveLength(1);
    const elsewhere = { ...formWebhook(fields, { "x-twilio-signature": signature }), url: `${URL}?x=1` };
    expect((await refusal("twilio", elsewhere, token)).reason).toBe("signature");
  });

  it("telnyx: Ed25519 over the timestamp and the body, with the raw public key Telnyx shows", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
    const webhook = jsonWebhook({ data: { payload: { id: "tx-1", to: [{ status: "delivered" }] } } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign(null, Buffer.concat([Buffer.from(`${timestamp}|`), webhook.body]), privateKey).toString("base64");
    const headers = { "telnyx-signature-ed25519": signature, "telnyx-timestamp": timestamp };
    expect(await read("telnyx", { ...webhook, headers }, raw)).toHaveLength(1);
    expect((await refusal("telnyx", { ...webhook, headers: { ...headers, "telnyx-timestamp": "1700000000" } }, raw)).reason).toBe("signature");
  });

  it("a provider that does not sign is refused when a key is set, rather than taken unchecked", async () => {
    const error = await refusal("postmark", jsonWebhook({ RecordType: "Delivery", MessageID: "pm-1" }), "key");
    expect(error.reason).toBe("signature");
    expect(error.message).toMatch(/postmark does not sign its webhooks/);
  });
});

describe("provider events: Amazon SNS's own URLs", () => {
  it("are https on an SNS host of a region, and nothing else", () => {
    for (const url of [
      "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
      "https://sns.eu-central-2.amazonaws.com/?Action=ConfirmSubscription&Token=t",
      "https://sns.us-gov-west-1.amazonaws.com/SimpleNotificationService-abc.pem",
      "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem",
    ])
      expect(snsUrlRefusal(url), url).toBeUndefined();
    for (const url of [
      "http://sns.us-east-1.amazonaws.com/cert.pem",
      "https://sns.us-east-1.amazonaws.com:8443/cert.pem",
      "https://user@sns.us-east-1.amazonaws.com/cert.pem",
      "https://sns.us-east-1.amazonaws.com.evil.example/cert.pem",
      "https://evil-sns.us-east-1.amazonaws.com/cert.pem",
      "https://s3.amazonaws.com/cert.pem",
      "https://sns.amazonaws.com/cert.pem",
      "https://127.0.0.1/cert.pem",
      "not a url",
    ])
      expect(snsUrlRefusal(url), url).toMatch(/not (an Amazon SNS endpoint|a URL)/);
  });
});
