import { parseJson, postJsonResponse } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";

const ID = "discord";

/**
 * A Discord webhook: `content`, and `embeds` when the step has provider-native blocks. `wait=true`
 * makes Discord answer the created message, whose id is the send's id.
 */
export const discord: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Webhook executions take no nonce or idempotency key.
  idempotent: false,
  async send(message, { http }) {
    const url = new URL(channelSetting(ID, message, "webhookUrl"));
    url.searchParams.set("wait", "true");
    const response = await postJsonResponse(ID, http, url.toString(), { content: message.content, ...(message.blocks ? { embeds: message.blocks } : {}) });
    return { id: parseJson<{ id?: string }>(response.text).id };
  },
});
