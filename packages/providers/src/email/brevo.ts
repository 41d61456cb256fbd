import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, type EmailMessage, type Provider, type SendContext } from "../types.js";
import { objectOf } from "../overrides.js";
import { base64Of, extraHeaders, senderOf } from "./sender.js";
import { withProviderData } from "../provider-data.js";

const BASE_URL = "https://api.brevo.com";

const addresses = (list: readonly string[] | undefined) => (list?.length ? list.map((email) => ({ email })) : undefined);

/**
 * Brevo's transactional email endpoint (Sendinblue before), authenticated by the `api-key` header.
 * As Novu passes it, the trigger's customData may name a Brevo template (`templateId`) and its
 * parameters (`templateParams`).
 */
function createBrevo(id: string): Provider<"email"> {
  async function send(message: EmailMessage, { credentials, http, providerData }: SendContext) {
    if (!credentials.apiKey) throw missingSetting(id, "apiKey");
    const from = senderOf(id, message, credentials);
    const { templateId, templateParams } = message.customData ?? {};
    const { url, body, headers } = withProviderData(
      {
        url: `${trimSlash(credentials.baseUrl || BASE_URL)}/v3/smtp/email`,
        body: {
          sender: { email: from.address, name: from.name },
          to: addresses(message.to),
          cc: addresses(message.cc),
          bcc: addresses(message.bcc),
          replyTo: message.replyTo ? { email: message.replyTo } : undefined,
          subject: message.subject,
          htmlContent: message.html,
          textContent: message.text || undefined,
          attachment: message.attachments.length
            ? message.attachments.map((attachment) => ({ name: attachment.name, content: base64Of(attachment.content) }))
            : undefined,
          headers: extraHeaders(message),
          // Brevo's template ids are numbers; one written as a string of digits is read as one, anything else is Brevo's to refuse.
          templateId: typeof templateId === "string" && /^\d+$/.test(templateId) ? Number(templateId) : templateId,
          params: objectOf(templateParams),
        },
        headers: { accept: "application/json", "api-key": credentials.apiKey },
      },
      providerData,
      "camel",
    );
    const answer = await postJson<{ messageId?: string }>(id, http, url, body, headers);
    return { id: answer.messageId };
  }
  return { id, channel: "email", idempotent: false, send };
}

export const brevo: ProviderFactory = () => createBrevo("brevo");
/** Novu still names the provider by its former name: integrations made through Novu's API carry it. */
export const sendinblue: ProviderFactory = () => createBrevo("sendinblue");
