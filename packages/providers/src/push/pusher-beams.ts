import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext } from "../types.js";
import { missingSetting } from "../types.js";
import { providerOverrides, requireTokens, stringOf } from "./common.js";
import { withProviderData } from "../provider-data.js";

const ID = "pusher-beams";

/** Publish to users (the subscriber's tokens are Beams user ids), with the APNs, FCM and web parts Novu builds. */
function publishBody(message: PushMessage): Record<string, unknown> {
  const { sound, badge, ...overrides } = providerOverrides(message);
  const notification = { title: message.title, body: message.content };
  return {
    users: message.tokens,
    apns: { aps: { alert: notification, badge, category: overrides.categoryId, sound } },
    fcm: {
      notification: {
        ...notification,
        android_channel_id: overrides.channelId,
        click_action: overrides.clickAction,
        color: overrides.color,
        icon: overrides.icon,
        sound,
        tag: overrides.tag,
      },
      data: message.payload,
      time_to_live: overrides.ttl,
    },
    web: { notification: { ...notification, icon: overrides.icon }, data: message.payload, time_to_live: overrides.ttl },
  };
}

export const pusherBeams: ProviderFactory = () => ({
  id: ID,
  channel: "push",
  idempotent: false,
  async send(message: PushMessage, context: SendContext) {
    requireTokens(ID, message);
    const { instanceId, secretKey, baseUrl } = context.credentials;
    if (!instanceId) throw missingSetting(ID, "instanceId");
    if (!secretKey) throw missingSetting(ID, "secretKey");
    const base = trimSlash(baseUrl ?? `https://${encodeURIComponent(instanceId)}.pushnotifications.pusher.com`);
    const { url, body, headers } = withProviderData(
      {
        url: `${base}/publish_api/v1/instances/${encodeURIComponent(instanceId)}/publishes/users`,
        body: publishBody(message),
        headers: { authorization: `Bearer ${secretKey}` },
      },
      context.providerData,
      "snake",
    );
    const answer = await postJson<{ publishId?: unknown }>(ID, context.http, url, body, headers);
    const id = stringOf(answer.publishId);
    return id === undefined ? {} : { id };
  },
});
