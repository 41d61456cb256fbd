import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, type EmailMessage, type Provider, type SendContext } from "../types.js";
import { base64Of, extraHeaders, formatSender, senderOf } from "./sender.js";
import { withProviderData } from "../provider-data.js";

const ID = "postmark";
const BASE_URL = "https://api.postmarkapp.com";

/** Postmark takes extra headers as a list of names and values. */
function headersOf(message: EmailMessage) {
  const headers = extraHeaders(message);
  return headers ? Object.entries(headers).map(([Name, Value]) => ({ Name, Value })) : undefined;
}

/** Postmark's single-email endpoint: recipients as comma-separated lists, the server token in its own header. */
async function send(message: EmailMessage, { credentials, http, providerData }: SendContext) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  const { url, body, headers } = withProviderData(
    {
      url: `${trimSlash(credentials.baseUrl || BASE_URL)}/email`,
      body: {
        From: formatSender(senderOf(ID, message, credentials)),
        To: message.to.join(", "),
        Cc: message.cc?.length ? message.cc.join(", ") : undefined,
        Bcc: message.bcc?.length ? message.bcc.join(", ") : undefined,
        ReplyTo: message.replyTo || undefined,
        Subject: message.subject,
        HtmlBody: message.html,
        TextBody: message.text || undefined,
        Attachments: message.attachments.map((attachment) => ({
          Name: attachment.name,
          Content: base64Of(attachment.content),
          ContentType: attachment.mime || "application/octet-stream",
        })),
        Headers: headersOf(message),
      },
      headers: { accept: "application/json", "x-postmark-server-token": credentials.apiKey },
    },
    providerData,
    "pascal",
  );
  const answer = await postJson<{ MessageID?: string }>(ID, http, url, body, headers);
  return { id: answer.MessageID };
}

export const postmark: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send });
