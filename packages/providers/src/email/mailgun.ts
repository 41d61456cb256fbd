import { basicAuth, expectOk, getJson, parseJson, postForm, putForm, trimSlash } from "../http.js";
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
import { formFields, type Spelling, withProviderData } from "../provider-data.js";

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

/** Mailgun's form fields that camelCase does not spell, by what it makes of them (as Novu names them). */
const MAILGUN_SPELLING: Spelling = {
  case: "camel",
  names: {
    ampHtml: "amp-html",
    tVersion: "t:version",
    tText: "t:text",
    oTag: "o:tag",
    oDkim: "o:dkim",
    oDeliverytime: "o:deliverytime",
    oDeliverytimeOptimizePeriod: "o:deliverytime-optimize-period",
    oTimeZoneLocalize: "o:time-zone-localize",
    oTestmode: "o:testmode",
    oTracking: "o:tracking",
    oTrackingClicks: "o:tracking-clicks",
    oTrackingOpens: "o:tracking-opens",
    oRequireTls: "o:require-tls",
    oSkipVerification: "o:skip-verification",
    recipientVariables: "recipient-variables",
  },
};

/** Mailgun Messages API: a multipart form, repeated fields per recipient and per attachment. */
async function send(message: EmailMessage, { credentials, http, providerData }: SendContext) {
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
    // Mailgun takes an extra header as a field named after it.
    ...Object.entries(message.headers ?? {}).map(([name, value]) => ({ name: `h:${name}`, value })),
    ...message.attachments.map((attachment) => ({
      name: "attachment",
      filename: attachment.name,
      contentType: attachment.mime || "application/octet-stream",
      content: attachment.content,
    })),
  ];
  // The trigger's provider overrides are form fields too (o:tag, v:…): a field they name replaces the mail's own.
  const request = withProviderData(
    { url: `${api.base}/v3/${api.domain}/messages`, body: {}, headers: { authorization: api.authorization } },
    providerData,
    MAILGUN_SPELLING,
  );
  const extra = formFields(request.body);
  const named = new Set(extra.map(([name]) => name));
  const { body, contentType } = multipartBody([...parts.filter((part) => !named.has(part.name)), ...extra.map(([name, value]) => ({ name, value }))]);
  const response = expectOk(ID, await http.request(request.url, { method: "POST", headers: { ...request.headers, "content-type": contentType }, body }));
  return { id: parseJson<{ id?: string }>(response.text).id };
}

/** The domain's webhooks to set, as Mailgun names them: every event notify reads (events/email.ts). */
const WEBHOOK_EVENTS = ["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"];
/** Mailgun keeps at most this many URLs per event webhook. */
const MAX_URLS_PER_WEBHOOK = 3;

/** The URLs each of the domain's event webhooks posts to (GET /v3/domains/{domain}/webhooks). */
async function webhookUrlsOf(api: ReturnType<typeof apiOf>, http: WebhookSetupContext["http"]): Promise<Map<string, string[]>> {
  type Listed = { webhooks?: Record<string, { urls?: unknown; url?: unknown } | undefined> };
  const { webhooks = {} } = await getJson<Listed>(ID, http, `${api.base}/v3/domains/${api.domain}/webhooks`, { authorization: api.authorization });
  const urls = new Map<string, string[]>();
  for (const [event, webhook] of Object.entries(webhooks)) {
    // Mailgun's older answers name one `url` where newer ones list `urls`.
    const listed: unknown[] = Array.isArray(webhook?.urls) ? webhook.urls : [webhook?.url];
    urls.set(
      event,
      listed.filter((url): url is string => typeof url === "string" && url !== ""),
    );
  }
  return urls;
}

/**
 * Adds `webhookUrl` to each of the domain's event webhooks, keeping the URLs already there (a
 * webhook that has it is left alone, so running the setup again changes nothing), then reads the
 * account's HTTP webhook signing key, which Mailgun signs every event with.
 */
async function configureEventsWebhook(webhookUrl: string, { credentials, http }: WebhookSetupContext): Promise<EventsWebhookSetup> {
  const api = apiOf(credentials);
  const existing = await webhookUrlsOf(api, http);
  const full = WEBHOOK_EVENTS.filter((event) => {
    const urls = existing.get(event) ?? [];
    return !urls.includes(webhookUrl) && urls.length >= MAX_URLS_PER_WEBHOOK;
  });
  if (full.length > 0) {
    throw new ProviderError(
      `${ID}: the domain's ${full.join(", ")} webhook already posts to ${MAX_URLS_PER_WEBHOOK} URLs, Mailgun's most: remove one of them and try again`,
      { transient: false },
    );
  }
  for (const event of WEBHOOK_EVENTS) {
    const urls = existing.get(event) ?? [];
    if (urls.includes(webhookUrl)) continue;
    // Creating a webhook that exists is refused, so one that exists is replaced by its list with the URL added.
    const creating = urls.length === 0;
    const fields = new URLSearchParams(creating ? { id: event } : {});
    for (const url of [...urls, webhookUrl]) fields.append("url", url);
    const path = creating ? "webhooks" : `webhooks/${event}`;
    await (creating ? postForm : putForm)(ID, http, `${api.base}/v3/domains/${api.domain}/${path}`, fields, { authorization: api.authorization });
  }
  const signing = await getJson<{ http_signing_key?: unknown }>(ID, http, `${api.base}/v5/accounts/http_signing_key`, { authorization: api.authorization });
  const key = signing.http_signing_key;
  if (typeof key !== "string" || !key) throw new ProviderError(`${ID} answered no HTTP webhook signing key`, { transient: false });
  return {
    message: "Mailgun's event webhooks are configured, with signed events",
    configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: key },
  };
}

export const mailgun: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send, configureEventsWebhook });
