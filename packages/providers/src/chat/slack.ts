import { headerOf, postJson, postJsonResponse, trimSlash } from "../http.js";
import type { OutboundHttp } from "../outbound.js";
import type { ProviderFactory } from "../registry.js";
import { ProviderError, type ChatMessage, type ProviderCredentials, type Provider, type SendContext } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "slack";

/** Slack's own errors worth another attempt (its rate limit answers 429, which the HTTP layer retries). */
const TRANSIENT_ERRORS = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited"]);

/**
 * Slack: to a channel or user through the Web API's chat.postMessage with a channel connection's
 * token (a slack_channel or slack_user endpoint), else to an incoming webhook. `text`, and Block
 * Kit `blocks` when the step has them (text is then the notification fallback).
 */
export const slack: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Neither API takes an idempotency key.
  idempotent: false,
  async send(message, { http, credentials, providerData }) {
    // The trigger's chat overrides go into the message as Novu adds them (username, icon_emoji, thread_ts, blocks, …).
    const body = { text: message.content, ...(message.blocks ? { blocks: message.blocks } : {}), ...message.customData };
    if (message.conversation !== undefined) return postMessage(http, credentials, message, body, providerData);
    const request = withProviderData({ url: channelSetting(ID, message, "webhookUrl"), body, headers: {} }, providerData, "snake");
    const response = await postJsonResponse(ID, http, request.url, request.body, request.headers);
    return { id: headerOf(response, "x-slack-req-id") };
  },
});

/** chat.postMessage answers 200 with `ok: false` and an error code when it refuses: only some codes are worth retrying. */
async function postMessage(
  http: OutboundHttp,
  credentials: ProviderCredentials,
  message: ChatMessage,
  body: Record<string, unknown>,
  providerData: SendContext["providerData"],
) {
  if (!message.accessToken) throw new ProviderError(`${ID}: the channel connection has no access token`, { transient: false });
  const request = withProviderData(
    {
      url: `${trimSlash(credentials.baseUrl || "https://slack.com")}/api/chat.postMessage`,
      body,
      headers: { authorization: `Bearer ${message.accessToken}`, "content-type": "application/json; charset=utf-8" },
    },
    providerData,
    "snake",
  );
  // The endpoint, not the overrides, says where the message goes.
  const reply = await postJson<{ ok?: boolean; error?: string; ts?: string }>(
    ID,
    http,
    request.url,
    { ...request.body, channel: message.conversation },
    request.headers,
  );
  if (reply.ok !== true) {
    const error = reply.error ?? "no ok in the answer";
    throw new ProviderError(`${ID} answered ${error}`, { transient: TRANSIENT_ERRORS.has(error) });
  }
  return { id: reply.ts };
}
