import { headerOf, postJsonResponse } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { ProviderError, type ChatMessage, type Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";

const ID = "msteams";

/** Content that is itself a JSON object is a card the step's author wrote (MessageCard or Adaptive Card message): sent as is, as Novu does. */
function authoredCard(content: string): Record<string, unknown> | undefined {
  if (!content.trimStart().startsWith("{")) return undefined;
  try {
    const parsed: unknown = JSON.parse(content);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Plain content goes as an Adaptive Card message: both the classic Office 365 connector webhooks
 * and the Workflows webhooks that replace them accept it (Workflows refuse a bare `{text}`).
 * Provider-native blocks are card elements appended to the body.
 */
function adaptiveCard(message: ChatMessage): Record<string, unknown> {
  const body: unknown[] = [];
  if (message.title) body.push({ type: "TextBlock", text: message.title, weight: "Bolder", size: "Medium", wrap: true });
  body.push({ type: "TextBlock", text: message.content, wrap: true }, ...(message.blocks ?? []));
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        content: { $schema: "http://adaptivecards.io/schemas/adaptive-card.json", type: "AdaptiveCard", version: "1.4", body },
      },
    ],
  };
}

/** A Microsoft Teams incoming webhook (connector or Workflows). */
export const msteams: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // Teams webhooks take no idempotency key.
  idempotent: false,
  async send(message, { http }) {
    const url = channelSetting(ID, message, "webhookUrl");
    const response = await postJsonResponse(ID, http, url, authoredCard(message.content) ?? adaptiveCard(message));
    // Connector webhooks answer 200 even when Teams refused the post, with the reason as text.
    if (response.text.startsWith("Webhook message delivery failed")) {
      throw new ProviderError(`${ID} answered ${response.status}: ${response.text.slice(0, 2000)}`, {
        transient: /HTTP error (429|5\d\d)/.test(response.text),
        status: response.status,
      });
    }
    return { id: headerOf(response, "request-id") ?? headerOf(response, "x-ms-workflow-run-id") };
  },
});
