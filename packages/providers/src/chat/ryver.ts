import { postJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "ryver";

/** A Ryver incoming webhook in Ryver's JSON format: `content`, as Novu posts it. */
export const ryver: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Incoming webhooks take no idempotency key.
  idempotent: false,
  async send(message, { http, providerData }) {
    const { url, body, headers } = withProviderData(
      { url: channelSetting(ID, message, "webhookUrl"), body: { content: message.content }, headers: {} },
      providerData,
      "camel",
    );
    await postJson(ID, http, url, body, headers);
    // Ryver's webhook answer carries no message id.
    return {};
  },
});
