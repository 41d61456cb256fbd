import { headerOf, postJsonResponse } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";

const ID = "slack";

/** A Slack incoming webhook: `text`, and Block Kit `blocks` when the step has them (text is then the notification fallback). */
export const slack: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Incoming webhooks take no idempotency key.
  idempotent: false,
  async send(message, { http }) {
    const url = channelSetting(ID, message, "webhookUrl");
    const response = await postJsonResponse(ID, http, url, { text: message.content, ...(message.blocks ? { blocks: message.blocks } : {}) });
    return { id: headerOf(response, "x-slack-req-id") };
  },
});
