import { headerOf, postJsonResponse } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "mattermost";

/** A Mattermost incoming webhook: `text`, and `channel` when the subscriber's channel names one (else the hook's default). */
export const mattermost: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Incoming webhooks take no idempotency key.
  idempotent: false,
  async send(message, { http, providerData }) {
    const { url, body, headers } = withProviderData(
      {
        url: channelSetting(ID, message, "webhookUrl"),
        body: { text: message.content, ...(message.channel ? { channel: message.channel } : {}) },
        headers: {},
      },
      providerData,
      "snake",
    );
    const response = await postJsonResponse(ID, http, url, body, headers);
    return { id: headerOf(response, "x-request-id") };
  },
});
