import { expectOk, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, type EmailMessage, type Provider, type SendContext } from "../types.js";
import { base64Of, senderOf } from "./sender.js";

const ID = "sendgrid";
const BASE_URL = "https://api.sendgrid.com";

const addresses = (list: readonly string[] | undefined) => (list?.length ? list.map((email) => ({ email })) : undefined);

/** SendGrid v3 Mail Send: one personalization for all recipients; the id comes back in X-Message-Id. */
async function send(message: EmailMessage, { credentials, http }: SendContext) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  const from = senderOf(ID, message, credentials);
  const body = {
    personalizations: [{ to: addresses(message.to), cc: addresses(message.cc), bcc: addresses(message.bcc) }],
    from: { email: from.address, name: from.name },
    reply_to: message.replyTo ? { email: message.replyTo } : undefined,
    subject: message.subject,
    // SendGrid requires text/plain before text/html, and refuses an empty value.
    content: [...(message.text ? [{ type: "text/plain", value: message.text }] : []), { type: "text/html", value: message.html || " " }],
    attachments: message.attachments.length
      ? message.attachments.map((attachment) => ({
          content: base64Of(attachment.content),
          filename: attachment.name,
          type: attachment.mime,
          disposition: "attachment",
        }))
      : undefined,
    ip_pool_name: credentials.ipPoolName || undefined,
  };
  const response = expectOk(
    ID,
    await http.request(`${trimSlash(credentials.baseUrl || BASE_URL)}/v3/mail/send`, {
      method: "POST",
      headers: { authorization: `Bearer ${credentials.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  const id = response.headers["x-message-id"];
  return { id: Array.isArray(id) ? id[0] : id };
}

export const sendgrid: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send });
