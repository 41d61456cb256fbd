import { expectOk, parseJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { objectOf } from "../overrides.js";
import { requireSetting } from "../settings.js";
import { ProviderError, type ChatMessage, type Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "whatsapp-business";

/** A Graph API version within Meta's support window; Meta retires each about two years after release. */
const GRAPH_VERSION = "v23.0";

/**
 * Graph error codes that mean "slow down" (application/account rate limits, Cloud API throughput,
 * pair rate, spam rate): Meta answers them as 400s, yet the same request succeeds later.
 */
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131048, 131056]);

interface GraphAnswer {
  messages?: { id?: string }[];
  error?: { code?: number; message?: string };
}

/** The kinds of message the Cloud API sends besides text, in the order Novu looks for them among the overrides. */
const MESSAGE_TYPES = ["template", "interactive", "image", "document", "video", "audio", "location", "contacts", "sticker"] as const;

/**
 * The message as Novu builds it from the trigger's chat overrides: the first kind they name (a
 * `template`, needed outside the customer-service window, an `interactive` message, media, …)
 * with their object for it; else text, the step's content unless `text.body` says otherwise.
 */
function messageOf(message: ChatMessage) {
  const overrides = message.customData ?? {};
  const type = MESSAGE_TYPES.find((candidate) => Object.hasOwn(overrides, candidate));
  if (type) return { type, [type]: overrides[type] };
  const text = objectOf(overrides["text"]) ?? {};
  return { type: "text", text: { body: typeof text["body"] === "string" ? text["body"] : message.content, preview_url: text["preview_url"] === true } };
}

/** The WhatsApp Cloud API: a message to the subscriber's phone from the integration's business number. */
export const whatsappBusiness: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // The Cloud API's messages endpoint takes no idempotency key.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const token = requireSetting(ID, credentials, "apiToken");
    const phoneNumberId = requireSetting(ID, credentials, "phoneNumberIdentification");
    const to = channelSetting(ID, message, "phone");
    const base = trimSlash(credentials.baseUrl ?? "https://graph.facebook.com");
    const { url, body, headers } = withProviderData(
      {
        url: `${base}/${GRAPH_VERSION}/${encodeURIComponent(phoneNumberId)}/messages`,
        body: { messaging_product: "whatsapp", recipient_type: "individual", to, ...messageOf(message) },
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      },
      providerData,
      "snake",
    );
    const response = await http.request(url, { method: "POST", headers, body: JSON.stringify(body) });
    const answer = parseJson<GraphAnswer>(response.text);
    if (response.status === 400 && RATE_LIMIT_CODES.has(answer.error?.code ?? -1)) {
      throw new ProviderError(`${ID} answered 400: ${response.text.slice(0, 2000)}`, { transient: true, status: 400 });
    }
    expectOk(ID, response);
    return { id: answer.messages?.[0]?.id };
  },
});
