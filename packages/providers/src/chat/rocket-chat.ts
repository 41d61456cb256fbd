import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import { ProviderError, type Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";

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
  async send(message, { credentials, http }) {
    const token = requireSetting(ID, credentials, "token");
    const user = requireSetting(ID, credentials, "user");
    const base = trimSlash(channelSetting(ID, message, "webhookUrl"));
    const rid = channelSetting(ID, message, "channel");
    const answer = await postJson<RocketChatAnswer>(
      ID,
      http,
      `${base}/api/v1/chat.sendMessage`,
      { message: { rid, msg: message.content } },
      { "x-auth-token": token, "x-user-id": user },
    );
    if (answer.success === false) throw new ProviderError(`${ID} refused the message: ${answer.error ?? ""}`, { transient: false });
    return { id: answer.message?._id };
  },
});
