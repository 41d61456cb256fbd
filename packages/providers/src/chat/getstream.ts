import { headerOf, postJsonResponse } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "getstream";

/**
 * Novu's getstream provider: the subscriber's webhook receives `{text}`, authenticated by the
 * integration's API key in X-API-KEY (Novu means to send it as a header; it ends up in its body).
 */
export const getstream: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // The webhook takes no idempotency key.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const apiKey = requireSetting(ID, credentials, "apiKey");
    const { url, body, headers } = withProviderData(
      { url: channelSetting(ID, message, "webhookUrl"), body: { text: message.content }, headers: { "x-api-key": apiKey } },
      providerData,
      "snake",
    );
    const response = await postJsonResponse(ID, http, url, body, headers);
    return { id: headerOf(response, "x-webhook-id") };
  },
});
