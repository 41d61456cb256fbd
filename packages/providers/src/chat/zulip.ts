import { postJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { ProviderError, type Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "zulip";

/** Zulip's Slack-compatible incoming webhook (its URL carries the bot's key and the stream): `text`. */
export const zulip: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Incoming webhooks take no idempotency key.
  idempotent: false,
  async send(message, { http, providerData }) {
    const { url, body, headers } = withProviderData(
      { url: channelSetting(ID, message, "webhookUrl"), body: { text: message.content }, headers: {} },
      providerData,
      "snake",
    );
    const answer = await postJson<{ result?: string; msg?: string }>(ID, http, url, body, headers);
    if (answer.result === "error") throw new ProviderError(`${ID} refused the message: ${answer.msg ?? ""}`, { transient: false });
    // Zulip's webhook answer carries no message id.
    return {};
  },
});
