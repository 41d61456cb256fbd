import { basicAuth, expectOk, parseJson, trimSlash } from "../http.js";
import { multipartBody, type FormPart } from "../multipart.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, ProviderError, type EmailMessage, type Provider, type SendContext } from "../types.js";
import { formatSender, senderOf } from "./sender.js";

const ID = "mailgun";
/** Mailgun keeps EU domains on their own API host. */
const BASE_URLS: Record<string, string> = { eu: "https://api.eu.mailgun.net", us: "https://api.mailgun.net" };

/** Mailgun Messages API: a multipart form, repeated fields per recipient and per attachment, basic auth as `api` (or the integration's user). */
async function send(message: EmailMessage, { credentials, http }: SendContext) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  if (!credentials.domain) throw missingSetting(ID, "domain");
  const region = (credentials.region || "us").toLowerCase();
  const base = credentials.baseUrl || BASE_URLS[region];
  if (!base) throw new ProviderError(`${ID}: the integration's region "${credentials.region}" is neither eu nor us`, { transient: false });
  const parts: FormPart[] = [
    { name: "from", value: formatSender(senderOf(ID, message, credentials)) },
    ...message.to.map((value) => ({ name: "to", value })),
    ...(message.cc ?? []).map((value) => ({ name: "cc", value })),
    ...(message.bcc ?? []).map((value) => ({ name: "bcc", value })),
    { name: "subject", value: message.subject },
    { name: "html", value: message.html },
    ...(message.text ? [{ name: "text", value: message.text }] : []),
    ...(message.replyTo ? [{ name: "h:Reply-To", value: message.replyTo }] : []),
    ...message.attachments.map((attachment) => ({
      name: "attachment",
      filename: attachment.name,
      contentType: attachment.mime || "application/octet-stream",
      content: attachment.content,
    })),
  ];
  const { body, contentType } = multipartBody(parts);
  const response = expectOk(
    ID,
    await http.request(`${trimSlash(base)}/v3/${encodeURIComponent(credentials.domain)}/messages`, {
      method: "POST",
      headers: { authorization: basicAuth(credentials.user || "api", credentials.apiKey), "content-type": contentType },
      body,
    }),
  );
  return { id: parseJson<{ id?: string }>(response.text).id };
}

export const mailgun: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send });
