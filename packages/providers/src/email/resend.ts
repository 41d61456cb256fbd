import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, type EmailMessage, type Provider, type SendContext } from "../types.js";
import { base64Of, extraHeaders, formatSender, senderOf } from "./sender.js";
import { withProviderData } from "../provider-data.js";

const ID = "resend";
const BASE_URL = "https://api.resend.com";

/** Resend's send endpoint; its Idempotency-Key makes a repeated attempt answer the first one's email instead of sending again. */
async function send(message: EmailMessage, { credentials, http, idempotencyKey, providerData }: SendContext) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  const { url, body, headers } = withProviderData(
    {
      url: `${trimSlash(credentials.baseUrl || BASE_URL)}/emails`,
      body: {
        from: formatSender(senderOf(ID, message, credentials)),
        to: message.to,
        cc: message.cc?.length ? message.cc : undefined,
        bcc: message.bcc?.length ? message.bcc : undefined,
        reply_to: message.replyTo || undefined,
        subject: message.subject,
        html: message.html,
        text: message.text || undefined,
        attachments: message.attachments.length
          ? message.attachments.map((attachment) => ({ filename: attachment.name, content: base64Of(attachment.content), content_type: attachment.mime }))
          : undefined,
        headers: extraHeaders(message),
      },
      headers: { authorization: `Bearer ${credentials.apiKey}`, "idempotency-key": idempotencyKey },
    },
    providerData,
    "snake",
  );
  const answer = await postJson<{ id?: string }>(ID, http, url, body, headers);
  return { id: answer.id };
}

export const resend: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: true, send });
