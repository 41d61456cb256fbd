import { describe, expect, it } from "vitest";
import type { Answer, Received } from "@notify/testing";
import { formFields, mergedBody, withProviderData, type Spelling } from "../src/provider-data.js";
import type { DeliveryChannel, EmailMessage, MessageByChannel, ProviderCredentials } from "../src/types.js";
import { formOf, sendContext, sendingFixture } from "./helpers.js";
import { pushMessage } from "./push-helpers.js";

describe("mergedBody and withProviderData", () => {
  it("merges the known fields respelled, then _passthrough.body as written, over the provider's own body", () => {
    const body = { text: "hi", nested: { keep: 1 }, list: [1] };
    const data = { threadTs: "1.2", nested: { addedField: 2 }, list: [2], _passthrough: { body: { text: "replaced", rawName: true } } };
    expect(mergedBody(body, data, "snake")).toEqual({
      text: "replaced",
      thread_ts: "1.2",
      nested: { keep: 1, added_field: 2 },
      list: [1, 2],
      rawName: true,
    });
    const spelled = (spelling: Spelling) => Object.keys(mergedBody({}, { statusCallback: "x" }, spelling));
    expect([spelled("camel"), spelled("snake"), spelled("pascal"), spelled("kebab")]).toEqual([
      ["statusCallback"],
      ["status_callback"],
      ["StatusCallback"],
      ["status-callback"],
    ]);
    // Names the case does not give are named by what the case makes of them, at any depth.
    const spelling: Spelling = { case: "camel", names: { oTag: "o:tag" } };
    expect(mergedBody({}, { o_tag: "a", nested: { OTag: "b" } }, spelling)).toEqual({ "o:tag": "a", nested: { "o:tag": "b" } });
    // The provider's body is not changed, and bytes are taken whole rather than merged as objects.
    const content = Buffer.from("pdf");
    const mail = { attachments: [{ content }] };
    const merged = mergedBody(mail, { attachments: [{ filename: "b.txt" }] }, "camel") as typeof mail;
    expect(merged.attachments[0]?.content).toBe(content);
    expect(mail.attachments).toHaveLength(1);
    expect(mergedBody(mail, undefined, "camel")).toBe(mail);
  });

  it("takes _passthrough headers the client does not own, on one line, and sets _passthrough.query on the URL", () => {
    const request = withProviderData(
      { url: "https://api.example.test/send?a=1", body: {}, headers: { authorization: "Bearer k", "X-Api-Version": "1" } },
      {
        _passthrough: {
          headers: {
            "X-Trace": "t-1",
            "x-number": 7,
            "x-api-version": "2",
            host: "elsewhere.test",
            "content-length": "1",
            "proxy-connection": "keep-alive",
            "x-split": "a\r\nb",
            "x-control": "a\u0001b",
            "x-wide": "日本",
            "bad name": "x",
            "x-object": {},
          },
          query: { b: 2, c: true, d: { no: 1 } },
        },
      },
      "camel",
    );
    expect(request.headers).toEqual({ authorization: "Bearer k", "x-api-version": "2", "x-trace": "t-1", "x-number": "7" });
    expect(request.url).toBe("https://api.example.test/send?a=1&b=2&c=true");
    // Not a URL: left for the call to refuse.
    expect(withProviderData({ url: "not a url", body: {}, headers: {} }, { _passthrough: { query: { b: 2 } } }, "camel").url).toBe("not a url");
  });

  it("writes form fields of merged values: arrays repeat, objects as JSON, nothing for null", () => {
    expect(formFields({ To: "+1", MediaUrl: ["a", "b"], Attributes: { k: 1 }, Empty: null, Flag: false })).toEqual([
      ["To", "+1"],
      ["MediaUrl", "a"],
      ["MediaUrl", "b"],
      ["Attributes", '{"k":1}'],
      ["Flag", "false"],
    ]);
  });
});

const { receiver, http, providers } = await sendingFixture();

/** The trigger's overrides.providers.<id>: a known field and every part of _passthrough. */
const PROVIDER_DATA = {
  deliveryHint: "fast",
  // Fields some APIs spell their own way (Mailgun, Mailjet, OneSignal), as Novu names them.
  oTag: "spring",
  templateId: 42,
  iosBadgeType: "Increase",
  _passthrough: { body: { rawField: "as written" }, headers: { "x-passthrough": "yes" }, query: { tracking: "on" } },
};

const json = (request: Received) => JSON.parse(request.body) as Record<string, unknown>;
/** The fields of a multipart form, the last of each name. */
const multipartFields = (request: Received) =>
  Object.fromEntries([...request.body.matchAll(/name="([^"]+)"\r\n\r\n([^\r]*)\r\n/g)].map((match) => [match[1], match[2]]));

const email: EmailMessage = { to: ["ann@example.test"], subject: "Hi", html: "<p>Hi</p>", text: "Hi", attachments: [] };
const hook = () => `${receiver.url}/hook`;

interface Case<C extends DeliveryChannel = DeliveryChannel> {
  id: string;
  channel: C;
  credentials: () => ProviderCredentials;
  message: () => MessageByChannel[C];
  answer: Answer;
  /** Where in the request the provider's own fields are, and so the merged ones. */
  fieldsOf?: (request: Received) => Record<string, unknown>;
  /** The known field, as the provider's API spells it. */
  known: string;
  /** Fields the API spells its own way, as it spells them. */
  named?: Record<string, unknown>;
}

const chat = (id: string, known: string, answer: Answer = {}, credentials: () => ProviderCredentials = () => ({})): Case<"chat"> => ({
  id,
  channel: "chat",
  credentials,
  message: () => ({ webhookUrl: hook(), channel: "GENERAL", content: "x" }),
  answer,
  known,
});
const withBase = (credentials: ProviderCredentials) => () => ({ ...credentials, baseUrl: receiver.url });

const cases: Case[] = [
  chat("slack", "delivery_hint", { body: "ok" }),
  chat("discord", "delivery_hint", { body: { id: "1" } }),
  chat("msteams", "deliveryHint", { body: "1" }),
  chat("mattermost", "delivery_hint"),
  chat("rocket-chat", "delivery_hint", { body: { success: true, message: { _id: "m" } } }, () => ({ user: "u", token: "t" })),
  chat("zulip", "delivery_hint", { body: { result: "success" } }),
  chat("grafana-on-call", "delivery_hint", { body: "Ok." }),
  chat("ryver", "deliveryHint"),
  chat("getstream", "delivery_hint", {}, () => ({ apiKey: "k" })),
  chat("chat-webhook", "deliveryHint", { body: { id: "1" } }),
  {
    id: "whatsapp-business",
    channel: "chat",
    credentials: withBase({ apiToken: "t", phoneNumberIdentification: "1065" }),
    message: () => ({ phone: "+15550001111", content: "x" }),
    answer: { body: { messages: [{ id: "wamid.1" }] } },
    known: "delivery_hint",
  },
  {
    id: "twilio",
    channel: "sms",
    credentials: withBase({ accountSid: "AC1", token: "t", from: "+1555" }),
    message: () => ({ to: "+1666", content: "x" }),
    answer: { status: 201, body: { sid: "SM1" } },
    fieldsOf: (request) => formOf(request.body),
    known: "DeliveryHint",
  },
  {
    id: "vonage",
    channel: "sms",
    credentials: withBase({ apiKey: "k", secretKey: "s", from: "Acme" }),
    message: () => ({ to: "+1666", content: "x" }),
    answer: { body: { messages: [{ status: "0", "message-id": "v1" }] } },
    fieldsOf: (request) => formOf(request.body),
    known: "delivery-hint",
  },
  {
    id: "plivo",
    channel: "sms",
    credentials: withBase({ accountSid: "MA1", token: "t", from: "+1555" }),
    message: () => ({ to: "+1666", content: "x" }),
    answer: { status: 202, body: { message_uuid: ["p1"] } },
    known: "delivery_hint",
  },
  {
    id: "sns",
    channel: "sms",
    credentials: withBase({ apiKey: "AKID", secretKey: "s", region: "us-east-1" }),
    message: () => ({ to: "+1666", content: "x" }),
    answer: { body: "<PublishResponse><PublishResult><MessageId>s1</MessageId></PublishResult></PublishResponse>" },
    fieldsOf: (request) => formOf(request.body),
    known: "DeliveryHint",
  },
  {
    id: "telnyx",
    channel: "sms",
    credentials: withBase({ apiKey: "k", from: "+1555" }),
    message: () => ({ to: "+1666", content: "x" }),
    answer: { body: { data: { id: "t1" } } },
    known: "delivery_hint",
  },
  {
    id: "generic-sms",
    channel: "sms",
    credentials: () => ({ baseUrl: `${receiver.url}/sms`, apiKeyRequestHeader: "x-key", apiKey: "k", from: "Acme" }),
    message: () => ({ to: "+1666", content: "x" }),
    answer: { body: { id: "g1" } },
    known: "deliveryHint",
  },
  ...[
    { id: "sendgrid", answer: { status: 202 }, known: "delivery_hint" },
    { id: "postmark", answer: { body: { MessageID: "pm1" } }, known: "DeliveryHint" },
    { id: "resend", answer: { body: { id: "re1" } }, known: "delivery_hint" },
    { id: "brevo", answer: { status: 201, body: { messageId: "b1" } }, known: "deliveryHint" },
  ].map(
    ({ id, answer, known }): Case<"email"> => ({
      id,
      channel: "email",
      credentials: withBase({ apiKey: "k", from: "shop@example.test" }),
      message: () => email,
      answer,
      known,
    }),
  ),
  {
    id: "mailjet",
    channel: "email",
    credentials: withBase({ apiKey: "k", secretKey: "s", from: "shop@example.test" }),
    message: () => email,
    answer: { body: { Messages: [{ To: [{ MessageID: 1 }] }] } },
    fieldsOf: (request) => (json(request).Messages as Record<string, unknown>[])[0]!,
    known: "DeliveryHint",
    named: { TemplateID: 42 },
  },
  {
    id: "mailgun",
    channel: "email",
    credentials: withBase({ apiKey: "k", domain: "mg.example.test", from: "shop@example.test" }),
    message: () => email,
    answer: { body: { id: "mg1" } },
    fieldsOf: multipartFields,
    known: "deliveryHint",
    named: { "o:tag": "spring" },
  },
  ...[
    { id: "one-signal", answer: { body: { id: "os1" } }, known: "delivery_hint", named: { ios_badgeType: "Increase" } },
    { id: "pushpad", answer: { status: 201, body: { id: 1 } }, known: "delivery_hint" },
    { id: "pusher-beams", answer: { body: { publishId: "pb1" } }, known: "delivery_hint" },
    { id: "push-webhook", answer: { body: { id: "pw1" } }, known: "deliveryHint" },
  ].map(
    ({ id, answer, known, named }: { id: string; answer: Answer; known: string; named?: Record<string, unknown> }): Case<"push"> => ({
      id,
      channel: "push",
      credentials: () => ({ apiKey: "k", applicationId: "app-1", instanceId: "i1", secretKey: "s", webhookUrl: hook(), baseUrl: receiver.url }),
      message: () => pushMessage(["token-1"]),
      answer,
      known,
      ...(named ? { named } : {}),
    }),
  ),
  {
    id: "expo",
    channel: "push",
    credentials: withBase({}),
    message: () => pushMessage(["ExponentPushToken[a]"]),
    answer: { body: { data: [{ status: "ok", id: "e1" }] } },
    fieldsOf: (request) => (json(request) as unknown as Record<string, unknown>[])[0]!,
    known: "deliveryHint",
  },
];

describe.each(cases)("$id with the trigger's provider overrides", ({ id, channel, credentials, message, answer, fieldsOf = json, known, named = {} }) => {
  it("sends the known field in the API's spelling, _passthrough's body field as written, its header and its query", async () => {
    receiver.respond = () => answer;
    const provider = providers.get(channel, id);
    if (!provider) throw new Error(`no ${channel} provider ${id}`);
    await provider.send(message() as never, { ...sendContext(http, credentials()), providerData: PROVIDER_DATA });
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received as [Received];
    expect(fieldsOf(request)).toMatchObject({ [known]: "fast", rawField: "as written", ...named });
    expect(request.headers["x-passthrough"]).toBe("yes");
    expect(new URL(request.url, receiver.url).searchParams.get("tracking")).toBe("on");
  });
});
