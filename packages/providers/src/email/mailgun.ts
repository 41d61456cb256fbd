import { basicAuth, expectOk, parseJson, postForm, trimSlash } from "../http.js";
import { multipartBody, type FormPart } from "../multipart.js";
import type { ProviderFactory } from "../registry.js";
import {
  missingSetting,
  ProviderError,
  type EmailMessage,
  type EventsWebhookSetup,
  type Provider,
  type ProviderCredentials,
  type SendContext,
  type WebhookSetupContext,
} from "../types.js";
import { formatSender, senderOf } from "./sender.js";

const ID = "mailgun";
/** Mailgun keeps EU domains on their own API host. */
const BASE_URLS: Record<string, string> = { eu: "https://api.eu.mailgun.net", us: "https://api.mailgun.net" };

/** The API host of the integration's region (or its baseUrl), its domain, and basic auth as `api` (or the integration's user). */
function apiOf(credentials: ProviderCredentials) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  if (!credentials.domain) throw missingSetting(ID, "domain");
  const region = (credentials.region || "us").toLowerCase();
  const base = credentials.baseUrl || BASE_URLS[region];
  if (!base) throw new ProviderError(`${ID}: the integration's region "${credentials.region}" is neither eu nor us`, { transient: false });
  return { base: trimSlash(base), domain: encodeURIComponent(credentials.domain), authorization: basicAuth(credentials.user || "api", credentials.apiKey) };
}

/** Mailgun Messages API: a multipart form, repeated fields per recipient and per attachment. */
async function send(message: EmailMessage, { credentials, http }: SendContext) {
  const api = apiOf(credentials);
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
    await http.request(`${api.base}/v3/${api.domain}/messages`, {
      method: "POST",
      headers: { authorization: api.authorization, "content-type": contentType },
      body,
    }),
  );
  return { id: parseJson<{ id?: string }>(response.text).id };
}

/** The domain's webhooks to set, as Mailgun names them: every event notify reads (events/email.ts). */
const WEBHOOK_EVENTS = ["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"];

/**
 * Points each of the domain's event webhooks at `webhookUrl`, then reads the account's HTTP
 * webhook signing key, which Mailgun signs every event with.
 */
async function configureEventsWebhook(webhookUrl: string, { credentials, http }: WebhookSetupContext): Promise<EventsWebhookSetup> {
  const api = apiOf(credentials);
  for (const event of WEBHOOK_EVENTS) {
    await postForm(ID, http, `${api.base}/v3/domains/${api.domain}/webhooks`, { id: event, url: webhookUrl }, { authorization: api.authorization });
  }
  const answer = expectOk(ID, await http.request(`${api.base}/v5/accounts/http_signing_key`, { method: "GET", headers: { authorization: api.authorization } }));
  const key = parseJson<{ http_signing_key?: unknown }>(answer.text).http_signing_key;
  if (typeof key !== "string" || !key) throw new ProviderError(`${ID} answered no HTTP webhook signing key`, { transient: false });
  return {
    message: "Mailgun's event webhooks are configured, with signed events",
    configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: key },
  };
}

export const mailgun: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send, configureEventsWebhook });
