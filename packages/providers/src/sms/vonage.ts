import { postForm, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import { ProviderError, type Provider } from "../types.js";
import { withProviderData } from "../provider-data.js";

interface VonageAnswer {
  messages?: { status?: string; "message-id"?: string; "error-text"?: string }[];
}

/**
 * Vonage's status codes that mean "try again later": throttled, internal error, and
 * communication failed. Vonage answers 200 for rejected messages too, with the status per message.
 */
const TRANSIENT_STATUS = new Set(["1", "5", "13"]);

/** Vonage (formerly Nexmo) SMS API: api_key/api_secret in the form body; registered under both ids. */
function vonageAs(id: string): ProviderFactory {
  return (): Provider<"sms"> => ({
    id,
    channel: "sms",
    // The SMS API takes no idempotency key.
    idempotent: false,
    async send(message, { credentials, http, providerData }) {
      const apiKey = requireSetting(id, credentials, "apiKey");
      const apiSecret = requireSetting(id, credentials, "secretKey");
      const from = message.from ?? requireSetting(id, credentials, "from");
      const base = trimSlash(credentials.baseUrl ?? "https://rest.nexmo.com");
      const fields: Record<string, string> = { api_key: apiKey, api_secret: apiSecret, from, to: message.to, text: message.content };
      // Text outside ASCII must be sent as unicode, or Vonage replaces the characters it cannot encode.
      if (/[\u0080-\uffff]/.test(message.content)) fields.type = "unicode";
      const { url, body, headers } = withProviderData({ url: `${base}/sms/json`, body: fields, headers: {} }, providerData, "kebab");
      const answer = await postForm<VonageAnswer>(id, http, url, body, headers);
      const first = answer.messages?.[0];
      if (!first) throw new ProviderError(`${id} answered without a message status`, { transient: false });
      if (first.status !== "0") {
        throw new ProviderError(`${id} rejected the message: status ${first.status ?? "?"}: ${first["error-text"] ?? ""}`, {
          transient: TRANSIENT_STATUS.has(first.status ?? ""),
        });
      }
      return { id: first["message-id"] };
    },
  });
}

export const vonage = vonageAs("vonage");
/** Novu's id for the same provider, so integrations created through Novu's API keep working. */
export const nexmo = vonageAs("nexmo");
