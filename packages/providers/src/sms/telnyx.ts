import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import { missingSetting, type Provider } from "../types.js";

const ID = "telnyx";

/** Telnyx Messaging API v2: JSON, Bearer API key. */
export const telnyx: ProviderFactory = (): Provider<"sms"> => ({
  id: ID,
  channel: "sms",
  // Telnyx's message endpoint takes no idempotency key.
  idempotent: false,
  async send(message, { credentials, http }) {
    const apiKey = requireSetting(ID, credentials, "apiKey");
    const from = message.from ?? credentials.from;
    const profile = credentials.messageProfileId;
    // Without a number, Telnyx picks one from the messaging profile's pool.
    if (!from && !profile) throw missingSetting(ID, "from (or messageProfileId)");
    const base = trimSlash(credentials.baseUrl ?? "https://api.telnyx.com");
    const answer = await postJson<{ data?: { id?: string } }>(
      ID,
      http,
      `${base}/v2/messages`,
      { to: message.to, text: message.content, from, messaging_profile_id: profile },
      { authorization: `Bearer ${apiKey}` },
    );
    return { id: answer.data?.id };
  },
});
