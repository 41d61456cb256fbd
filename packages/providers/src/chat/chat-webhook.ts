import { createHmac } from "node:crypto";
import { expectOk, parseJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "chat-webhook";

/**
 * A plain webhook of the subscriber's: the chat message as JSON. With a secretKey on the
 * integration the exact body is signed like Novu's webhook providers sign theirs
 * (X-Novu-Signature: hex HMAC-SHA256), so the receiver can tell the post came from here; the
 * idempotency key rides along so a receiver can drop a repeated attempt.
 */
export const chatWebhook: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Deduplicating on the key is up to the receiver, which nothing guarantees.
  idempotent: false,
  async send(message, { credentials, http, idempotencyKey, providerData }) {
    const webhookUrl = channelSetting(ID, message, "webhookUrl");
    // Novu's fields (a receiver written for Novu's posts reads these), with the title and blocks besides.
    const request = withProviderData(
      {
        url: webhookUrl,
        body: { content: message.content, webhookUrl, channel: message.channel, phoneNumber: message.phone, title: message.title, blocks: message.blocks },
        headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
      },
      providerData,
      "camel",
    );
    const { url, headers } = request;
    const body = JSON.stringify(request.body);
    if (credentials.secretKey) headers["x-novu-signature"] = createHmac("sha256", credentials.secretKey).update(body, "utf8").digest("hex");
    const response = expectOk(ID, await http.request(url, { method: "POST", headers, body }));
    const id = parseJson<{ id?: unknown }>(response.text).id;
    return { id: typeof id === "string" || typeof id === "number" ? String(id) : undefined };
  },
});
