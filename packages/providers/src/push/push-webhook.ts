import { createHmac } from "node:crypto";
import { expectOk, parseJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext } from "../types.js";
import { missingSetting } from "../types.js";
import { requireTokens, sendEachToken, stringOf, type TokenOutcome } from "./common.js";
import { withProviderData } from "../provider-data.js";

const ID = "push-webhook";

/** Novu's body for one device: the message, with the subscriber and the digest step inside the payload. */
function webhookBody(message: PushMessage, token: string) {
  return {
    target: [token],
    title: message.title,
    content: message.content,
    overrides: message.overrides,
    ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    payload: { ...message.payload, subscriber: message.subscriber, ...(message.step ? { step: message.step } : {}) },
  };
}

/** One signed POST per device token, as Novu sends them. */
export const pushWebhook: ProviderFactory = () => ({
  id: ID,
  channel: "push",
  idempotent: false,
  async send(message: PushMessage, context: SendContext) {
    requireTokens(ID, message);
    const { webhookUrl, secretKey } = context.credentials;
    if (!webhookUrl) throw missingSetting(ID, "webhookUrl");
    if (!secretKey) throw missingSetting(ID, "secretKey");
    // As Novu takes them, the trigger's provider overrides may name another URL and key; they are not sent.
    const named = (field: string) => stringOf(context.providerData?.[field]) || undefined;
    const url = named("webhookUrl") ?? webhookUrl;
    const key = named("hmacSecretKey") ?? secretKey;
    return sendEachToken(ID, message.tokens, async (token): Promise<TokenOutcome> => {
      const request = withProviderData(
        { url, body: webhookBody(message, token) as Record<string, unknown>, headers: { "content-type": "application/json" } },
        context.providerData,
        "camel",
      );
      const { webhookUrl: _url, hmacSecretKey: _key, ...fields } = request.body;
      const body = JSON.stringify(fields);
      // The receiver checks the signature over the exact bytes it receives: sign the string that is sent.
      const signature = createHmac("sha256", key).update(body, "utf8").digest("hex");
      const headers = { ...request.headers, "x-novu-signature": signature };
      const response = expectOk(ID, await context.http.request(request.url, { method: "POST", headers, body }));
      const id = parseJson<{ id?: unknown }>(response.text).id;
      return { sent: true, id: typeof id === "string" || typeof id === "number" ? String(id) : undefined };
    });
  },
});
