import { basicAuth, postForm, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import type { Provider } from "../types.js";
import { withProviderData } from "../provider-data.js";

const ID = "twilio";

/** Twilio's Messages API: form-encoded, basic auth with the account SID and auth token. */
export const twilio: ProviderFactory = (): Provider<"sms"> => ({
  id: ID,
  channel: "sms",
  // Twilio's Messages API takes no idempotency key.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const accountSid = requireSetting(ID, credentials, "accountSid");
    const token = requireSetting(ID, credentials, "token");
    const from = message.from ?? requireSetting(ID, credentials, "from");
    const base = trimSlash(credentials.baseUrl ?? "https://api.twilio.com");
    // A Messaging Service SID ("MG…") is sent as such, so Twilio picks the sender from its pool.
    const sender = /^MG[0-9a-f]{32}$/i.test(from) ? { MessagingServiceSid: from } : { From: from };
    const { url, body, headers } = withProviderData(
      {
        url: `${base}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`,
        body: { To: message.to, Body: message.content, ...sender },
        headers: { authorization: basicAuth(accountSid, token) },
      },
      providerData,
      "pascal",
    );
    const answer = await postForm<{ sid?: string }>(ID, http, url, body, headers);
    return { id: answer.sid };
  },
});
