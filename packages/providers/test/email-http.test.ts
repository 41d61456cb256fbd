import { verifySigV4, type Received } from "@notify/testing";
import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import { ProviderError, type EmailMessage, type ProviderCredentials, type SendContext } from "../src/types.js";
import { basic, sendingFixture } from "./helpers.js";

const { receiver, http, providers } = await sendingFixture(() => ({ status: 200, body: {} }));

const PDF = new Uint8Array([37, 80, 68, 70, 0, 255]);
const PDF_BASE64 = Buffer.from(PDF).toString("base64");

const message = (extra: Partial<EmailMessage> = {}): EmailMessage => ({
  to: ["ann@example.test", "bob@example.test"],
  cc: ["carl@example.test"],
  bcc: ["dora@example.test"],
  replyTo: "support@notify.test",
  subject: "Your order",
  html: "<p>Hello <b>Ann</b></p>",
  text: "Hello Ann",
  attachments: [{ name: "report.pdf", mime: "application/pdf", content: PDF }],
  ...extra,
});

const send = (providerId: string, credentials: ProviderCredentials, email: EmailMessage = message(), configurations?: SendContext["configurations"]) => {
  const provider = providers.get("email", providerId);
  if (!provider) throw new Error(`no email provider ${providerId}`);
  const context: SendContext = {
    integrationId: `int-${providerId}`,
    credentials: { baseUrl: receiver.url, ...credentials },
    configurations,
    http,
    idempotencyKey: "msg-123",
  };
  return provider.send(email, context);
};

const json = (request: Received) => JSON.parse(request.body) as Record<string, unknown>;

describe("sendgrid", () => {
  it("posts v3 mail/send with a Bearer key and answers X-Message-Id", async () => {
    receiver.respond = () => ({ status: 202, headers: { "x-message-id": "sg-42" } });
    const result = await send("sendgrid", { apiKey: "SG.key", from: "noreply@notify.test", senderName: "Notify", ipPoolName: "pool-a" });
    expect(result.id).toBe("sg-42");
    const [request] = receiver.received;
    expect(request).toMatchObject({ method: "POST", url: "/v3/mail/send" });
    expect(request!.headers.authorization).toBe("Bearer SG.key");
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(json(request!)).toEqual({
      personalizations: [
        { to: [{ email: "ann@example.test" }, { email: "bob@example.test" }], cc: [{ email: "carl@example.test" }], bcc: [{ email: "dora@example.test" }] },
      ],
      from: { email: "noreply@notify.test", name: "Notify" },
      reply_to: { email: "support@notify.test" },
      subject: "Your order",
      content: [
        { type: "text/plain", value: "Hello Ann" },
        { type: "text/html", value: "<p>Hello <b>Ann</b></p>" },
      ],
      attachments: [{ content: PDF_BASE64, filename: "report.pdf", type: "application/pdf", disposition: "attachment" }],
      ip_pool_name: "pool-a",
    });
    expect(providers.get("email", "sendgrid")!.idempotent).toBe(false);
  });
});

describe("mailgun", () => {
  it("posts a multipart form to the domain's messages with basic auth api:key", async () => {
    receiver.respond = () => ({ status: 200, body: { id: "<20250101.1@mg.notify.test>", message: "Queued. Thank you." } });
    const result = await send(
      "mailgun",
      { apiKey: "mg-key", domain: "mg.notify.test", from: "noreply@notify.test", senderName: "Notify" },
      message({ from: "orders@shop.test", senderName: "Shop" }),
    );
    expect(result.id).toBe("<20250101.1@mg.notify.test>");
    const [request] = receiver.received;
    expect(request).toMatchObject({ method: "POST", url: "/v3/mg.notify.test/messages" });
    expect(request!.headers.authorization).toBe(basic("api", "mg-key"));
    expect(request!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Request("http://x.test", {
      method: "POST",
      headers: { "content-type": request!.headers["content-type"]! },
      body: request!.raw,
    }).formData();
    expect(form.get("from")).toBe(`"Shop" <orders@shop.test>`);
    expect(form.getAll("to")).toEqual(["ann@example.test", "bob@example.test"]);
    expect(form.getAll("cc")).toEqual(["carl@example.test"]);
    expect(form.getAll("bcc")).toEqual(["dora@example.test"]);
    expect(form.get("subject")).toBe("Your order");
    expect(form.get("html")).toBe("<p>Hello <b>Ann</b></p>");
    expect(form.get("text")).toBe("Hello Ann");
    expect(form.get("h:Reply-To")).toBe("support@notify.test");
    const file = form.get("attachment") as File;
    expect(file.name).toBe("report.pdf");
    expect(file.type).toBe("application/pdf");
    expect([...new Uint8Array(await file.arrayBuffer())]).toEqual([...PDF]);
  });

  it("uses the integration's user for basic auth and refuses a region it does not know", async () => {
    receiver.respond = () => ({ status: 200, body: { id: "x" } });
    await send("mailgun", { apiKey: "mg-key", domain: "mg.notify.test", user: "key-user", from: "a@b.test" });
    expect(receiver.received[0]!.headers.authorization).toBe(basic("key-user", "mg-key"));
    await expect(send("mailgun", { apiKey: "mg-key", domain: "mg.notify.test", region: "mars", from: "a@b.test", baseUrl: undefined })).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("region"),
    });
  });
});

describe("sendgrid event webhook", () => {
  const HOOK = "https://notify.test/v2/inbound-webhooks/delivery-providers/env-1/int-1";
  const BASE = "/v3/user/webhooks/event/settings";

  /** SendGrid's Event Webhooks as its API reference describes them: listed, created, updated, signed. */
  function sendgridWebhooks(initial: { id: string; url: string }[]) {
    const webhooks = new Map(initial.map((webhook) => [webhook.id, { ...webhook } as Record<string, unknown>]));
    receiver.respond = (request) => {
      if (request.method === "GET" && request.url === `${BASE}/all`) return { body: { max_allowed: 5, webhooks: [...webhooks.values()] } };
      if (request.method === "POST" && request.url === BASE) {
        const id = `wh-${webhooks.size + 1}`;
        webhooks.set(id, { ...json(request), id });
        return { status: 201, body: webhooks.get(id) };
      }
      const signed = request.url.match(/^\/v3\/user\/webhooks\/event\/settings\/signed\/(.+)$/);
      if (request.method === "PATCH" && signed && webhooks.has(signed[1]!)) return { body: { id: signed[1], public_key: `key-of-${signed[1]}` } };
      const id = request.url.slice(BASE.length + 1);
      if (request.method === "PATCH" && webhooks.has(id)) {
        webhooks.set(id, { ...webhooks.get(id), ...json(request), id });
        return { body: webhooks.get(id) };
      }
      return { status: 404, body: { errors: [{ message: "not found" }] } };
    };
    return webhooks;
  }

  const configure = () => providers.get("email", "sendgrid")!.configureEventsWebhook!(HOOK, { credentials: { apiKey: "SG.key", baseUrl: receiver.url }, http });

  it("creates a signed webhook with every event, and a second run updates it instead of adding another", async () => {
    const webhooks = sendgridWebhooks([{ id: "wh-other", url: "https://crm.test/sendgrid" }]);
    expect(await configure()).toEqual({
      message: "SendGrid's event webhook is configured, with signed events",
      configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: "key-of-wh-2" },
    });
    expect(webhooks.get("wh-2")).toMatchObject({ enabled: true, url: HOOK, delivered: true, bounce: true, open: true, click: true, spam_report: true });
    expect(receiver.received.every((request) => request.headers.authorization === "Bearer SG.key")).toBe(true);

    receiver.received.length = 0;
    expect(await configure()).toMatchObject({ configurations: { inboundWebhookSigningKey: "key-of-wh-2" } });
    expect(receiver.received.map((request) => `${request.method} ${request.url}`)).toEqual([
      `GET ${BASE}/all`,
      `PATCH ${BASE}/wh-2`,
      `PATCH ${BASE}/signed/wh-2`,
    ]);
    expect([...webhooks.keys()]).toEqual(["wh-other", "wh-2"]);
    expect(webhooks.get("wh-other")).toEqual({ id: "wh-other", url: "https://crm.test/sendgrid" });
  });
});

describe("mailgun event webhooks", () => {
  const HOOK = "https://notify.test/v2/inbound-webhooks/delivery-providers/env-1/int-1";
  const EVENTS = ["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"];

  /**
   * Mailgun's domain webhooks as its API reference describes them: listed by GET, created by POST
   * (refused when the webhook exists), replaced by PUT; `legacy` webhooks are listed in the older
   * one-`url` form.
   */
  function mailgunWebhooks(initial: Record<string, string[]>, legacy: string[] = []) {
    const webhooks = new Map(Object.entries(initial));
    receiver.respond = (request) => {
      const base = "/v3/domains/mg.notify.test/webhooks";
      const form = new URLSearchParams(request.body);
      if (request.method === "GET" && request.url === base) {
        const listed = [...webhooks].map(([event, urls]) => [event, legacy.includes(event) ? { url: urls[0] } : { urls }]);
        return { body: { webhooks: Object.fromEntries(listed) } };
      }
      if (request.method === "POST" && request.url === base) {
        const event = form.get("id")!;
        if (webhooks.has(event)) return { status: 400, body: { message: "Webhook already exists" } };
        webhooks.set(event, form.getAll("url"));
        return { body: { message: "Webhook has been created", webhook: { urls: form.getAll("url") } } };
      }
      const event = request.url.startsWith(`${base}/`) ? request.url.slice(base.length + 1) : "";
      if (request.method === "PUT" && webhooks.has(event)) {
        webhooks.set(event, form.getAll("url"));
        return { body: { message: "Webhook has been updated", webhook: { urls: form.getAll("url") } } };
      }
      if (request.url === "/v5/accounts/http_signing_key") return { body: { http_signing_key: "signing-key" } };
      return { status: 404, body: { message: "not found" } };
    };
    return webhooks;
  }

  const configure = () =>
    providers.get("email", "mailgun")!.configureEventsWebhook!(HOOK, {
      credentials: { apiKey: "mg-key", domain: "mg.notify.test", baseUrl: receiver.url },
      http,
    });
  const writes = () => receiver.received.filter((request) => request.method !== "GET");

  it("creates each event's webhook, and a second run changes nothing", async () => {
    const webhooks = mailgunWebhooks({});
    expect(await configure()).toMatchObject({ configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: "signing-key" } });
    expect(writes().map((request) => [request.method, Object.fromEntries(new URLSearchParams(request.body))])).toEqual(
      EVENTS.map((event) => ["POST", { id: event, url: HOOK }]),
    );
    expect(receiver.received.every((request) => request.headers.authorization === basic("api", "mg-key"))).toBe(true);

    receiver.received.length = 0;
    expect(await configure()).toMatchObject({ configurations: { inboundWebhookSigningKey: "signing-key" } });
    expect(writes()).toEqual([]);
    expect(Object.fromEntries(webhooks)).toEqual(Object.fromEntries(EVENTS.map((event) => [event, [HOOK]])));
  });

  it("adds its URL to a webhook that posts elsewhere, keeping that URL", async () => {
    const webhooks = mailgunWebhooks({ delivered: ["https://crm.test/mailgun"], opened: ["https://stats.test/open"] }, ["opened"]);
    await configure();
    expect(
      writes()
        .filter((request) => request.method === "PUT")
        .map((request) => [request.url, new URLSearchParams(request.body).getAll("url")]),
    ).toEqual([
      ["/v3/domains/mg.notify.test/webhooks/delivered", ["https://crm.test/mailgun", HOOK]],
      ["/v3/domains/mg.notify.test/webhooks/opened", ["https://stats.test/open", HOOK]],
    ]);
    expect(webhooks.get("delivered")).toEqual(["https://crm.test/mailgun", HOOK]);
    expect(webhooks.get("accepted")).toEqual([HOOK]);
  });

  it("refuses, changing nothing, when a webhook already has Mailgun's three URLs", async () => {
    mailgunWebhooks({ clicked: ["https://a.test/", "https://b.test/", "https://c.test/"] });
    await expect(configure()).rejects.toMatchObject({ transient: false, message: expect.stringContaining("clicked webhook already posts to 3 URLs") });
    expect(writes()).toEqual([]);
  });
});

describe("postmark", () => {
  it("posts /email with the server token and answers MessageID", async () => {
    receiver.respond = () => ({
      status: 200,
      body: { To: "ann@example.test", SubmittedAt: "2025-01-01T00:00:00Z", MessageID: "pm-7", ErrorCode: 0, Message: "OK" },
    });
    const result = await send("postmark", { apiKey: "pm-token", from: "noreply@notify.test", senderName: "Notify" });
    expect(result.id).toBe("pm-7");
    const [request] = receiver.received;
    expect(request).toMatchObject({ method: "POST", url: "/email" });
    expect(request!.headers["x-postmark-server-token"]).toBe("pm-token");
    expect(request!.headers.accept).toBe("application/json");
    expect(json(request!)).toEqual({
      From: `"Notify" <noreply@notify.test>`,
      To: "ann@example.test, bob@example.test",
      Cc: "carl@example.test",
      Bcc: "dora@example.test",
      ReplyTo: "support@notify.test",
      Subject: "Your order",
      HtmlBody: "<p>Hello <b>Ann</b></p>",
      TextBody: "Hello Ann",
      Attachments: [{ Name: "report.pdf", Content: PDF_BASE64, ContentType: "application/pdf" }],
    });
  });

  it("fails final on a 422 with Postmark's text", async () => {
    receiver.respond = () => ({ status: 422, body: { ErrorCode: 300, Message: "Invalid 'To' address: 'nope'." } });
    const error = await send("postmark", { apiKey: "pm-token", from: "noreply@notify.test" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transient: false, status: 422 });
    expect((error as Error).message).toContain("Invalid 'To' address");
    expect((error as Error).message).not.toContain("pm-token");
  });
});

describe("resend", () => {
  it("posts /emails with a Bearer key and the message's idempotency key", async () => {
    receiver.respond = () => ({ status: 200, body: { id: "re-1" } });
    const result = await send("resend", { apiKey: "re_key", from: "noreply@notify.test", senderName: "Notify" });
    expect(result.id).toBe("re-1");
    const [request] = receiver.received;
    expect(request).toMatchObject({ method: "POST", url: "/emails" });
    expect(request!.headers.authorization).toBe("Bearer re_key");
    expect(request!.headers["idempotency-key"]).toBe("msg-123");
    expect(json(request!)).toEqual({
      from: `"Notify" <noreply@notify.test>`,
      to: ["ann@example.test", "bob@example.test"],
      cc: ["carl@example.test"],
      bcc: ["dora@example.test"],
      reply_to: "support@notify.test",
      subject: "Your order",
      html: "<p>Hello <b>Ann</b></p>",
      text: "Hello Ann",
      attachments: [{ filename: "report.pdf", content: PDF_BASE64, content_type: "application/pdf" }],
    });
    expect(providers.get("email", "resend")!.idempotent).toBe(true);
  });
});

describe("brevo", () => {
  it("posts /v3/smtp/email with the api-key header, also under Novu's sendinblue id", async () => {
    receiver.respond = () => ({ status: 201, body: { messageId: "<brevo-1@smtp-relay.mailin.fr>" } });
    for (const id of ["brevo", "sendinblue"]) {
      receiver.received.length = 0;
      const result = await send(id, { apiKey: "xkeysib-1", from: "noreply@notify.test", senderName: "Notify" });
      expect(result.id).toBe("<brevo-1@smtp-relay.mailin.fr>");
      const [request] = receiver.received;
      expect(request).toMatchObject({ method: "POST", url: "/v3/smtp/email" });
      expect(request!.headers["api-key"]).toBe("xkeysib-1");
      expect(json(request!)).toEqual({
        sender: { email: "noreply@notify.test", name: "Notify" },
        to: [{ email: "ann@example.test" }, { email: "bob@example.test" }],
        cc: [{ email: "carl@example.test" }],
        bcc: [{ email: "dora@example.test" }],
        replyTo: { email: "support@notify.test" },
        subject: "Your order",
        htmlContent: "<p>Hello <b>Ann</b></p>",
        textContent: "Hello Ann",
        attachment: [{ name: "report.pdf", content: PDF_BASE64 }],
      });
    }
  });
});

describe("mailjet", () => {
  it("posts /v3.1/send with basic auth key:secret and answers the first recipient's MessageID", async () => {
    // Mailjet's ids are larger than a double holds exactly: the id is the digits as written.
    receiver.respond = () => ({
      status: 200,
      headers: { "content-type": "application/json" },
      body: '{"Messages":[{"Status":"success","To":[{"Email":"ann@example.test","MessageUUID":"u-1","MessageID": 1152921511742440123}]}]}',
    });
    const result = await send("mailjet", { apiKey: "mj-key", secretKey: "mj-secret", from: "noreply@notify.test", senderName: "Notify" });
    expect(result.id).toBe("1152921511742440123");
    const [request] = receiver.received;
    expect(request).toMatchObject({ method: "POST", url: "/v3.1/send" });
    expect(request!.headers.authorization).toBe(basic("mj-key", "mj-secret"));
    expect(json(request!)).toEqual({
      Messages: [
        {
          From: { Email: "noreply@notify.test", Name: "Notify" },
          To: [{ Email: "ann@example.test" }, { Email: "bob@example.test" }],
          Cc: [{ Email: "carl@example.test" }],
          Bcc: [{ Email: "dora@example.test" }],
          ReplyTo: { Email: "support@notify.test" },
          Subject: "Your order",
          HTMLPart: "<p>Hello <b>Ann</b></p>",
          TextPart: "Hello Ann",
          Attachments: [{ Filename: "report.pdf", ContentType: "application/pdf", Base64Content: PDF_BASE64 }],
        },
      ],
    });
  });

  it("names a missing secret key", async () => {
    await expect(send("mailjet", { apiKey: "mj-key", from: "noreply@notify.test" })).rejects.toMatchObject({
      transient: false,
      message: "mailjet: the integration has no secretKey",
    });
    expect(receiver.received).toHaveLength(0);
  });
});

describe("ses", () => {
  it("posts SES v2 SendEmail with raw MIME, signed with SigV4 from apiKey/secretKey/region", async () => {
    receiver.respond = () => ({ status: 200, body: { MessageId: "0100018c-ses" } });
    const result = await send("ses", {
      apiKey: "AKIDEXAMPLE",
      secretKey: "ses-secret",
      region: "eu-west-1",
      from: "noreply@notify.test",
      senderName: "Notify",
    });
    expect(result.id).toBe("0100018c-ses");
    const [request] = receiver.received;
    expect(request).toMatchObject({ method: "POST", url: "/v2/email/outbound-emails" });
    const signed = verifySigV4(request!, "ses-secret");
    expect(signed).toMatchObject({ accessKeyId: "AKIDEXAMPLE", region: "eu-west-1", service: "ses" });
    expect(signed.signedHeaders).toEqual(expect.arrayContaining(["host", "x-amz-date", "content-type"]));
    const body = json(request!) as { FromEmailAddress: string; Destination: unknown; ReplyToAddresses: string[]; Content: { Raw: { Data: string } } };
    expect(body.FromEmailAddress).toBe("noreply@notify.test");
    expect(body.Destination).toEqual({
      ToAddresses: ["ann@example.test", "bob@example.test"],
      CcAddresses: ["carl@example.test"],
      BccAddresses: ["dora@example.test"],
    });
    expect(body.ReplyToAddresses).toEqual(["support@notify.test"]);
    const raw = Buffer.from(body.Content.Raw.Data, "base64");
    expect(raw.toString("utf8")).not.toMatch(/^Bcc:/im);
    const mail = await simpleParser(raw);
    expect(mail.from?.value).toEqual([{ address: "noreply@notify.test", name: "Notify" }]);
    expect(mail.subject).toBe("Your order");
    expect(mail.html).toBe("<p>Hello <b>Ann</b></p>");
    expect(mail.text?.trim()).toBe("Hello Ann");
    expect(mail.replyTo?.value[0]?.address).toBe("support@notify.test");
    expect(mail.attachments[0]).toMatchObject({ filename: "report.pdf", contentType: "application/pdf" });
    expect([...mail.attachments[0]!.content]).toEqual([...PDF]);
  });

  it("names the integration's configuration set, through which SES publishes its events", async () => {
    receiver.respond = () => ({ status: 200, body: { MessageId: "0100018c-ses" } });
    const credentials = { apiKey: "AKIDEXAMPLE", secretKey: "ses-secret", region: "eu-west-1", from: "noreply@notify.test" };
    await send("ses", credentials, message(), { configurationSetName: "notify-events" });
    expect(json(receiver.received.at(-1)!).ConfigurationSetName).toBe("notify-events");
    await send("ses", credentials);
    expect(json(receiver.received.at(-1)!)).not.toHaveProperty("ConfigurationSetName");
  });

  it("names a missing region", async () => {
    await expect(send("ses", { apiKey: "AKIDEXAMPLE", secretKey: "ses-secret", from: "noreply@notify.test" })).rejects.toMatchObject({
      message: "ses: the integration has no region",
    });
  });
});

describe("the trigger's headers, customData and ipPoolName", () => {
  const headers = { "X-Campaign": "spring", "List-Unsubscribe": "<https://notify.test/u/1>" };
  const base = { apiKey: "key", secretKey: "secret", region: "eu-west-1", domain: "mg.notify.test", from: "noreply@notify.test" };

  it("SendGrid: headers, the template and its data, the rest as string custom args, and the override's IP pool", async () => {
    receiver.respond = () => ({ status: 202, headers: { "x-message-id": "sg-43" } });
    const customData = { templateId: "d-123", dynamicTemplateData: { name: "Ann" }, campaign: "spring", batch: 7 };
    await send("sendgrid", { ...base, ipPoolName: "pool-a" }, message({ headers, customData, ipPoolName: "pool-b" }));
    const body = json(receiver.received[0]!);
    expect(body).toMatchObject({ headers, template_id: "d-123", custom_args: { campaign: "spring", batch: "7" }, ip_pool_name: "pool-b" });
    expect((body.personalizations as Record<string, unknown>[])[0]!.dynamic_template_data).toEqual({ name: "Ann" });
  });

  it("SendGrid: names the mail's message, transaction, subscriber and workflow in its custom args and category, as Novu's mails do", async () => {
    receiver.respond = () => ({ status: 202, headers: { "x-message-id": "sg-44" } });
    const notification = { messageId: "m-1", transactionId: "t-1", subscriberId: "ada", workflowIdentifier: "welcome" };
    await send("sendgrid", base, message({ notification, customData: { campaign: "spring" } }));
    expect(json(receiver.received.at(-1)!)).toMatchObject({
      categories: ["welcome"],
      custom_args: {
        id: "m-1",
        novuMessageId: "m-1",
        novuTransactionId: "t-1",
        novuSubscriberId: "ada",
        novuWorkflowIdentifier: "welcome",
        campaign: "spring",
      },
    });
  });

  it("Brevo: headers, and the template with its parameters", async () => {
    receiver.respond = () => ({ status: 201, body: { messageId: "<brevo-2@smtp-relay.mailin.fr>" } });
    await send("brevo", base, message({ headers, customData: { templateId: "12", templateParams: { name: "Ann" } } }));
    expect(json(receiver.received[0]!)).toMatchObject({ headers, templateId: 12, params: { name: "Ann" } });
  });

  it("Resend, Mailjet and Postmark: headers in each one's form", async () => {
    receiver.respond = () => ({ status: 200, body: { id: "re-2", MessageID: "pm-2", Messages: [{ To: [{ MessageID: 1 }] }] } });
    await send("resend", base, message({ headers }));
    await send("mailjet", base, message({ headers }));
    await send("postmark", base, message({ headers }));
    const [resend, mailjet, postmark] = receiver.received.map(json);
    expect(resend!.headers).toEqual(headers);
    expect((mailjet!.Messages as Record<string, unknown>[])[0]!.Headers).toEqual(headers);
    expect(postmark!.Headers).toEqual([
      { Name: "X-Campaign", Value: "spring" },
      { Name: "List-Unsubscribe", Value: "<https://notify.test/u/1>" },
    ]);
  });

  it("Mailgun: each header as an h: field; SES: in the MIME message", async () => {
    receiver.respond = () => ({ status: 200, body: { id: "<mg-2@mg.notify.test>", MessageId: "ses-2" } });
    await send("mailgun", base, message({ headers }));
    await send("ses", base, message({ headers }));
    const [mailgun, ses] = receiver.received;
    const form = await new Request("http://x.test", {
      method: "POST",
      headers: { "content-type": mailgun!.headers["content-type"]! },
      body: mailgun!.raw,
    }).formData();
    expect(form.get("h:X-Campaign")).toBe("spring");
    expect(form.get("h:List-Unsubscribe")).toBe("<https://notify.test/u/1>");
    const mail = await simpleParser(Buffer.from((json(ses!) as { Content: { Raw: { Data: string } } }).Content.Raw.Data, "base64"));
    expect(mail.headers.get("x-campaign")).toBe("spring");
  });

  it("sends no header field at all when the trigger names none", async () => {
    receiver.respond = () => ({ status: 200, body: { id: "re-3", MessageID: "pm-3", Messages: [{ To: [{ MessageID: 1 }] }] } });
    for (const id of ["resend", "mailjet", "postmark", "brevo"]) await send(id, base, message({ headers: {} }));
    for (const body of receiver.received.map(json)) expect(JSON.stringify(body)).not.toMatch(/"headers"|"Headers"/);
  });
});

describe("email API failures", () => {
  const cases: [string, ProviderCredentials][] = [
    ["sendgrid", { apiKey: "api-key-value" }],
    ["mailgun", { apiKey: "api-key-value", domain: "d.test" }],
    ["postmark", { apiKey: "api-key-value" }],
    ["resend", { apiKey: "api-key-value" }],
    ["ses", { apiKey: "api-key-value", secretKey: "secret-key-value", region: "us-east-1" }],
    ["brevo", { apiKey: "api-key-value" }],
    ["mailjet", { apiKey: "api-key-value", secretKey: "secret-key-value" }],
  ];

  it.each(cases)("%s: a 500 is transient, a 429 carries Retry-After, a 400 is final with the vendor's text", async (id, credentials) => {
    const withFrom = { ...credentials, from: "noreply@notify.test" };
    receiver.respond = () => ({ status: 500, body: "upstream broke" });
    await expect(send(id, withFrom)).rejects.toMatchObject({ transient: true, status: 500 });
    receiver.respond = () => ({ status: 429, headers: { "retry-after": "7" }, body: { message: "slow down" } });
    await expect(send(id, withFrom)).rejects.toMatchObject({ transient: true, status: 429, retryAfterMs: 7000 });
    receiver.respond = () => ({ status: 400, body: { message: `${id} says the recipient is invalid` } });
    const error = await send(id, withFrom).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transient: false, status: 400 });
    expect((error as Error).message).toContain(`${id} says the recipient is invalid`);
    expect((error as Error).message).not.toMatch(/api-key-value|secret-key-value/);
  });

  it.each(cases)("%s: names a missing key or sender, without calling the API", async (id, credentials) => {
    await expect(send(id, { ...credentials, from: "noreply@notify.test", apiKey: undefined })).rejects.toMatchObject({
      transient: false,
      message: `${id}: the integration has no apiKey`,
    });
    await expect(send(id, credentials)).rejects.toMatchObject({ transient: false, message: `${id}: the integration has no from` });
    expect(receiver.received).toHaveLength(0);
  });
});
