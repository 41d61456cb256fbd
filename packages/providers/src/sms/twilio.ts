import { basicAuth, postForm, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import type { Provider } from "../types.js";

const ID = "twilio";

/** Twilio's Messages API: form-encoded, basic auth with the account SID and auth token. */
export const twilio: ProviderFactory = (): Provider<"sms"> => ({
  id: ID,
  channel: "sms",
  // Twilio's Messages API takes no idempotency key.
  idempotent: false,
  async send(message, { credentials, http }) {
    const accountSid = requireSetting(ID, credentials, "accountSid");
    const token = requireSetting(ID, credentials, "token");
    const from = message.from ?? requireSetting(ID, credentials, "from");
    const base = trimSlash(credentials.baseUrl ?? "https://api.twilio.com");
    // A Messaging Service SID ("MG…") is sent as such, so Twilio picks the sender from its pool.
    const sender = /^MG[0-9a-f]{32}$/i.test(from) ? { MessagingServiceSid: from } : { From: from };
    const answer = await postForm<{ sid?: string }>(
      ID,
      http,
      `${base}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`,
      { To: message.to, Body: message.content, ...sender },
      { authorization: basicAuth(accountSid, token) },
    );
    return { id: answer.sid };
  },
});
