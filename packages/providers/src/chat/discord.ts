import { parseJson, postJsonResponse } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "discord";

/**
 * A Discord webhook: `content`, `embeds` when the step has provider-native blocks, and the
 * trigger's chat overrides. `wait=true`
 * makes Discord answer the created message, whose id is the send's id.
 */
export const discord: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Webhook executions take no nonce or idempotency key.
  idempotent: false,
  async send(message, { http, providerData }) {
    const webhook = new URL(channelSetting(ID, message, "webhookUrl"));
    webhook.searchParams.set("wait", "true");
    // The trigger's chat overrides go into the message as Novu adds them (username, avatar_url, embeds, …).
    const { url, body, headers } = withProviderData(
      {
        url: webhook.toString(),
        body: { content: message.content, ...(message.blocks ? { embeds: message.blocks } : {}), ...message.customData },
        headers: {},
      },
      providerData,
      "snake",
    );
    const response = await postJsonResponse(ID, http, url, body, headers);
    return { id: parseJson<{ id?: string }>(response.text).id };
  },
});
