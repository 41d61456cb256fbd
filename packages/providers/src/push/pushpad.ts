import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext } from "../types.js";
import { missingSetting } from "../types.js";
import { providerOverrides, requireTokens } from "./common.js";
import { withProviderData } from "../provider-data.js";

const ID = "pushpad";
const DEFAULT_BASE = "https://pushpad.xyz";

export const pushpad: ProviderFactory = () => ({
  id: ID,
  channel: "push",
  idempotent: false,
  async send(message: PushMessage, context: SendContext) {
    requireTokens(ID, message);
    // Novu's names: apiKey = the auth token, applicationId = the project id.
    const { apiKey, applicationId, baseUrl } = context.credentials;
    if (!apiKey) throw missingSetting(ID, "apiKey");
    if (!applicationId) throw missingSetting(ID, "applicationId");
    // The subscriber's tokens are Pushpad uids; overrides are Pushpad's notification fields (target_url, icon_url, ttl, …).
    const { url, body, headers } = withProviderData(
      {
        url: `${trimSlash(baseUrl ?? DEFAULT_BASE)}/api/v1/projects/${encodeURIComponent(applicationId)}/notifications`,
        body: { title: message.title, body: message.content, ...providerOverrides(message), uids: message.tokens },
        headers: { accept: "application/json", authorization: `Bearer ${apiKey}` },
      },
      context.providerData,
      "snake",
    );
    const answer = await postJson<{ id?: unknown }>(ID, context.http, url, body, headers);
    return typeof answer.id === "string" || typeof answer.id === "number" ? { id: String(answer.id) } : {};
  },
});
