import { postJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";

const ID = "ryver";

/** A Ryver incoming webhook in Ryver's JSON format: `content`, as Novu posts it. */
export const ryver: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Incoming webhooks take no idempotency key.
  idempotent: false,
  async send(message, { http }) {
    const url = channelSetting(ID, message, "webhookUrl");
    await postJson(ID, http, url, { content: message.content });
    // Ryver's webhook answer carries no message id.
    return {};
  },
});
