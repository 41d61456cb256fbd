import { headerOf, postJsonResponse } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";

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
  async send(message, { credentials, http }) {
    const apiKey = requireSetting(ID, credentials, "apiKey");
    const url = channelSetting(ID, message, "webhookUrl");
    const response = await postJsonResponse(ID, http, url, { text: message.content }, { "x-api-key": apiKey });
    return { id: headerOf(response, "x-webhook-id") };
  },
});
