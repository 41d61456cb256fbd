import { basicAuth, postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import type { Provider } from "../types.js";
import { withProviderData } from "../provider-data.js";

const ID = "plivo";

/** Plivo's Message API: JSON, basic auth with the auth id (Novu's accountSid) and auth token. */
export const plivo: ProviderFactory = (): Provider<"sms"> => ({
  id: ID,
  channel: "sms",
  // Plivo's Message API takes no idempotency key.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const authId = requireSetting(ID, credentials, "accountSid");
    const token = requireSetting(ID, credentials, "token");
    const src = message.from ?? requireSetting(ID, credentials, "from");
    const base = trimSlash(credentials.baseUrl ?? "https://api.plivo.com");
    const { url, body, headers } = withProviderData(
      {
        url: `${base}/v1/Account/${encodeURIComponent(authId)}/Message/`,
        body: { src, dst: message.to, text: message.content },
        headers: { authorization: basicAuth(authId, token) },
      },
      providerData,
      "snake",
    );
    const answer = await postJson<{ message_uuid?: string[] }>(ID, http, url, body, headers);
    return { id: answer.message_uuid?.[0] };
  },
});
