import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import { missingSetting, type Provider } from "../types.js";
import { withProviderData } from "../provider-data.js";

const ID = "telnyx";

/** Telnyx Messaging API v2: JSON, Bearer API key. */
export const telnyx: ProviderFactory = (): Provider<"sms"> => ({
  id: ID,
  channel: "sms",
  // Telnyx's message endpoint takes no idempotency key.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const apiKey = requireSetting(ID, credentials, "apiKey");
    const from = message.from ?? credentials.from;
    const profile = credentials.messageProfileId;
    // Without a number, Telnyx picks one from the messaging profile's pool.
    if (!from && !profile) throw missingSetting(ID, "from (or messageProfileId)");
    const base = trimSlash(credentials.baseUrl ?? "https://api.telnyx.com");
    const { url, body, headers } = withProviderData(
      {
        url: `${base}/v2/messages`,
        body: { to: message.to, text: message.content, from, messaging_profile_id: profile },
        headers: { authorization: `Bearer ${apiKey}` },
      },
      providerData,
      "snake",
    );
    const answer = await postJson<{ data?: { id?: string } }>(ID, http, url, body, headers);
    return { id: answer.data?.id };
  },
});
