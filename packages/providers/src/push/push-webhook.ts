import { createHmac } from "node:crypto";
import { expectOk, parseJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext } from "../types.js";
import { missingSetting } from "../types.js";
import { withProviderData } from "../provider-data.js";

const ID = "push-webhook";

/** Novu's body: the message, with the subscriber and the digest step inside the payload. */
function webhookBody(message: PushMessage) {
  return {
    target: message.tokens,
    title: message.title,
    content: message.content,
    overrides: message.overrides,
    ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    payload: { ...message.payload, subscriber: message.subscriber, ...(message.step ? { step: message.step } : {}) },
  };
}

export const pushWebhook: ProviderFactory = () => ({
  id: ID,
  channel: "push",
  idempotent: false,
  async send(message: PushMessage, context: SendContext) {
    const { webhookUrl, secretKey } = context.credentials;
    if (!webhookUrl) throw missingSetting(ID, "webhookUrl");
    if (!secretKey) throw missingSetting(ID, "secretKey");
    const request = withProviderData(
      { url: webhookUrl, body: webhookBody(message), headers: { "content-type": "application/json" } },
      context.providerData,
      "camel",
    );
    const body = JSON.stringify(request.body);
    // The receiver checks the signature over the exact bytes it receives: sign the string that is sent.
    const signature = createHmac("sha256", secretKey).update(body, "utf8").digest("hex");
    const headers = { ...request.headers, "x-novu-signature": signature };
    const response = expectOk(ID, await context.http.request(request.url, { method: "POST", headers, body }));
    const id = parseJson<{ id?: unknown }>(response.text).id;
    return typeof id === "string" || typeof id === "number" ? { id: String(id) } : {};
  },
});
