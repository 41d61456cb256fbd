import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import { ProviderError, type Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "rocket-chat";

interface RocketChatAnswer {
  success?: boolean;
  error?: string;
  message?: { _id?: string };
}

/**
 * Rocket.Chat's REST chat.sendMessage, as Novu calls it: the subscriber's webhookUrl is the server's
 * base URL, `channel` the room id, and the integration's user id and personal access token authenticate.
 */
export const rocketChat: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // chat.sendMessage deduplicates only on a caller-chosen message _id, which Novu does not send.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const token = requireSetting(ID, credentials, "token");
    const user = requireSetting(ID, credentials, "user");
    const base = trimSlash(channelSetting(ID, message, "webhookUrl"));
    const rid = channelSetting(ID, message, "channel");
    const { url, body, headers } = withProviderData(
      { url: `${base}/api/v1/chat.sendMessage`, body: { message: { rid, msg: message.content } }, headers: { "x-auth-token": token, "x-user-id": user } },
      providerData,
      "snake",
    );
    const answer = await postJson<RocketChatAnswer>(ID, http, url, body, headers);
    if (answer.success === false) throw new ProviderError(`${ID} refused the message: ${answer.error ?? ""}`, { transient: false });
    return { id: answer.message?._id };
  },
});
