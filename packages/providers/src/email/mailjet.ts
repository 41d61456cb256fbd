import { basicAuth, parseJson, postJsonResponse, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, type EmailMessage, type Provider, type SendContext } from "../types.js";
import { base64Of, extraHeaders, senderOf } from "./sender.js";
import { type Spelling, withProviderData } from "../provider-data.js";

const ID = "mailjet";
const BASE_URL = "https://api.mailjet.com";

const addresses = (list: readonly string[] | undefined) => (list?.length ? list.map((email) => ({ Email: email })) : undefined);

interface MailjetAnswer {
  Messages?: { To?: { MessageID?: string }[] }[];
}

/**
 * Mailjet's message ids are JSON numbers beyond what a double holds exactly: read as numbers they
 * would be stored rounded, and two sends could share an id. They are read as the digits written.
 */
const idsAsText = (json: string) => json.replace(/("MessageID"\s*:\s*)(\d+)/g, '$1"$2"');

/** Mailjet's fields that PascalCase does not spell, by what it makes of them. */
const MAILJET_SPELLING: Spelling = {
  case: "pascal",
  names: { ContentId: "ContentID", HtmlPart: "HTMLPart", TemplateId: "TemplateID", CustomId: "CustomID", UrlTags: "URLTags" },
};

/** Mailjet Send API v3.1: one message, basic auth with the API key and secret key. */
async function send(message: EmailMessage, { credentials, http, providerData }: SendContext) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  if (!credentials.secretKey) throw missingSetting(ID, "secretKey");
  const from = senderOf(ID, message, credentials);
  // The trigger's provider overrides reach the message, as Novu merges them into it.
  const request = withProviderData(
    {
      url: `${trimSlash(credentials.baseUrl || BASE_URL)}/v3.1/send`,
      body: {
        From: { Email: from.address, Name: from.name },
        To: addresses(message.to),
        Cc: addresses(message.cc),
        Bcc: addresses(message.bcc),
        ReplyTo: message.replyTo ? { Email: message.replyTo } : undefined,
        Subject: message.subject,
        HTMLPart: message.html,
        TextPart: message.text || undefined,
        Attachments: message.attachments.length
          ? message.attachments.map((attachment) => ({
              Filename: attachment.name,
              ContentType: attachment.mime || "application/octet-stream",
              Base64Content: base64Of(attachment.content),
            }))
          : undefined,
        Headers: extraHeaders(message),
      },
      headers: { authorization: basicAuth(credentials.apiKey, credentials.secretKey) },
    },
    providerData,
    MAILJET_SPELLING,
  );
  const response = await postJsonResponse(ID, http, request.url, { Messages: [request.body] }, request.headers);
  return { id: parseJson<MailjetAnswer>(idsAsText(response.text)).Messages?.[0]?.To?.[0]?.MessageID };
}

export const mailjet: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send });
