import { expectOk, getJson, patchJson, postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import {
  missingSetting,
  ProviderError,
  type EmailMessage,
  type EventsWebhookSetup,
  type Provider,
  type SendContext,
  type WebhookSetupContext,
} from "../types.js";
import { objectOf } from "../overrides.js";
import { base64Of, extraHeaders, senderOf } from "./sender.js";
import { withProviderData } from "../provider-data.js";

const ID = "sendgrid";
const BASE_URL = "https://api.sendgrid.com";

const addresses = (list: readonly string[] | undefined) => (list?.length ? list.map((email) => ({ email })) : undefined);

/**
 * What SendGrid reads of the trigger's customData, as Novu passes it: `templateId` and
 * `dynamicTemplateData` name a SendGrid template and its data; the rest go as custom args, which
 * SendGrid takes as strings only, after the args Novu names every mail with (its message,
 * transaction, workflow and subscriber), which event webhooks read back.
 */
function customDataOf(message: EmailMessage) {
  const { templateId, dynamicTemplateData, ...rest } = message.customData ?? {};
  const sentFor = message.notification;
  const named = sentFor
    ? {
        id: sentFor.messageId,
        novuMessageId: sentFor.messageId,
        novuTransactionId: sentFor.transactionId,
        novuSubscriberId: sentFor.subscriberId,
        ...(sentFor.workflowIdentifier ? { novuWorkflowIdentifier: sentFor.workflowIdentifier } : {}),
      }
    : {};
  const args = Object.entries({ ...named, ...rest }).map(([name, value]) => [name, typeof value === "string" ? value : JSON.stringify(value)]);
  return {
    templateId: typeof templateId === "string" && templateId ? templateId : undefined,
    templateData: objectOf(dynamicTemplateData),
    customArgs: args.length > 0 ? Object.fromEntries(args) : undefined,
  };
}

/** SendGrid v3 Mail Send: one personalization for all recipients; the id comes back in X-Message-Id. */
async function send(message: EmailMessage, { credentials, http, providerData }: SendContext) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  const from = senderOf(ID, message, credentials);
  const custom = customDataOf(message);
  const body = {
    personalizations: [{ to: addresses(message.to), cc: addresses(message.cc), bcc: addresses(message.bcc), dynamic_template_data: custom.templateData }],
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
    template_id: custom.templateId,
    categories: message.notification?.workflowIdentifier ? [message.notification.workflowIdentifier] : undefined,
    custom_args: custom.customArgs,
    headers: extraHeaders(message),
    ip_pool_name: message.ipPoolName || credentials.ipPoolName || undefined,
  };
  const request = withProviderData(
    {
      url: `${trimSlash(credentials.baseUrl || BASE_URL)}/v3/mail/send`,
      body,
      headers: { authorization: `Bearer ${credentials.apiKey}`, "content-type": "application/json" },
    },
    providerData,
    "snake",
  );
  const response = expectOk(ID, await http.request(request.url, { method: "POST", headers: request.headers, body: JSON.stringify(request.body) }));
  const id = response.headers["x-message-id"];
  return { id: Array.isArray(id) ? id[0] : id };
}

/** The events the webhook posts: every delivery and engagement event notify reads (events/email.ts). */
const WEBHOOK_EVENTS = ["processed", "delivered", "deferred", "bounce", "dropped", "open", "click", "spam_report", "unsubscribe", "group_unsubscribe"];

/**
 * Points an Event Webhook at `webhookUrl` with every event notify reads, then turns on its
 * signature: SendGrid answers the public key its events are verified with. A webhook that already
 * posts there is updated, so running the setup again adds no second webhook posting the same events.
 */
async function configureEventsWebhook(webhookUrl: string, { credentials, http }: WebhookSetupContext): Promise<EventsWebhookSetup> {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  const base = `${trimSlash(credentials.baseUrl || BASE_URL)}/v3/user/webhooks/event/settings`;
  const headers = { authorization: `Bearer ${credentials.apiKey}` };
  const settings = { enabled: true, url: webhookUrl, friendly_name: "notify", ...Object.fromEntries(WEBHOOK_EVENTS.map((event) => [event, true])) };
  const listed = await getJson<{ webhooks?: { id?: unknown; url?: unknown }[] }>(ID, http, `${base}/all`, headers);
  const found = (listed.webhooks ?? []).find((webhook) => webhook.url === webhookUrl)?.id;
  const reused = typeof found === "string" && found ? found : undefined;
  let id: unknown = reused;
  if (reused) await patchJson(ID, http, `${base}/${encodeURIComponent(reused)}`, settings, headers);
  else id = (await postJson<{ id?: unknown }>(ID, http, base, settings, headers)).id;
  if (typeof id !== "string" || !id) throw new ProviderError(`${ID} created the event webhook without naming it`, { transient: false });
  const signed = await patchJson<{ public_key?: unknown }>(ID, http, `${base}/signed/${encodeURIComponent(id)}`, { enabled: true }, headers);
  if (typeof signed.public_key !== "string" || !signed.public_key)
    throw new ProviderError(`${ID} signed the event webhook without its public key`, { transient: false });
  return {
    message: "SendGrid's event webhook is configured, with signed events",
    configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: signed.public_key },
  };
}

export const sendgrid: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send, configureEventsWebhook });
