import { postJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { ProviderError, type Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";

const ID = "zulip";

/** Zulip's Slack-compatible incoming webhook (its URL carries the bot's key and the stream): `text`. */
export const zulip: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Incoming webhooks take no idempotency key.
  idempotent: false,
  async send(message, { http }) {
    const url = channelSetting(ID, message, "webhookUrl");
    const answer = await postJson<{ result?: string; msg?: string }>(ID, http, url, { text: message.content });
    if (answer.result === "error") throw new ProviderError(`${ID} refused the message: ${answer.msg ?? ""}`, { transient: false });
    // Zulip's webhook answer carries no message id.
    return {};
  },
});
