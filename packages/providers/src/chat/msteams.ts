import { expectOk, headerOf, parseJson, postForm, postJsonResponse, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { createTokenCache, fingerprint, mintedToken } from "../tokens.js";
import { missingSetting, ProviderError, type ChatMessage, type Provider, type SendContext } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "msteams";
const LOGIN = "https://login.microsoftonline.com";
/** The Bot Connector service of Teams, in every region. */
const BOT_CONNECTOR = "https://smba.trafficmanager.net";
const BOT_SCOPE = "https://api.botframework.com/.default";

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

type TokenCache = ReturnType<typeof createTokenCache>;

/**
 * The bot's token from its own tenant's Microsoft Entra endpoint (client credentials). `baseUrl`
 * stands in for both Microsoft hosts, so a test can answer for them.
 */
function botToken(context: SendContext, tokens: TokenCache): Promise<string> {
  const { credentials, http, integrationId } = context;
  const { clientId, secretKey, tenantId, baseUrl } = credentials;
  if (!clientId) throw missingSetting(ID, "clientId");
  if (!secretKey) throw missingSetting(ID, "secretKey");
  const tenant = tenantId || "botframework.com";
  return tokens.get(integrationId, fingerprint(clientId, secretKey, tenant, baseUrl), async () => {
    const answer = await postForm<{ access_token?: unknown; expires_in?: unknown }>(
      `${ID} token endpoint`,
      http,
      `${trimSlash(baseUrl || LOGIN)}/${encodeURIComponent(tenant)}/oauth2/v2.0/token`,
      { grant_type: "client_credentials", client_id: clientId, client_secret: secretKey, scope: BOT_SCOPE },
    );
    if (typeof answer.access_token !== "string" || !answer.access_token)
      throw new ProviderError(`${ID}: the token endpoint answered no access_token`, { transient: false });
    return mintedToken(answer.access_token, answer.expires_in);
  });
}

/**
 * A Teams channel or person (an ms_teams_* endpoint) through the Bot Connector API, as the bot
 * of the integration's app, in the customer's tenant that the channel connection names. A person
 * is first given a one-to-one conversation with the bot (Teams answers the same one each time).
 */
async function sendAsBot(message: ChatMessage, context: SendContext, tokens: TokenCache) {
  if (!message.workspaceId) throw new ProviderError(`${ID}: the channel connection names no workspace (the customer's tenant id)`, { transient: false });
  const token = await botToken(context, tokens);
  const connector = `${trimSlash(context.credentials.baseUrl || BOT_CONNECTOR)}/teams/v3/conversations`;
  const tenant = { id: message.workspaceId };
  const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${token}` };
  const post = async (url: string, body: unknown, postHeaders = headers) => {
    const response = await context.http.request(url, { method: "POST", headers: postHeaders, body: JSON.stringify(body) });
    if (response.status === 401) throw tokens.refused(context.integrationId, token, ID, response);
    return parseJson<{ id?: unknown }>(expectOk(ID, response).text);
  };
  const card = authoredCard(message.content);
  const activity = card?.type === "message" ? card : { type: "message", text: message.content };
  let conversation = message.conversation!;
  if (message.direct) {
    const opened = await post(connector, {
      isGroup: false,
      bot: { id: context.credentials.clientId },
      members: [{ id: conversation }],
      channelData: { tenant },
    });
    if (typeof opened.id !== "string") throw new ProviderError(`${ID}: Teams opened no conversation with ${conversation}`, { transient: false });
    conversation = opened.id;
  }
  const channelData = message.direct ? { tenant } : { tenant, team: { id: message.teamId }, channel: { id: conversation } };
  // The trigger's provider overrides reach the message, not the conversation opened for it.
  const request = withProviderData(
    { url: `${connector}/${encodeURIComponent(conversation)}/activities`, body: { ...activity, channelData }, headers },
    context.providerData,
    "camel",
  );
  const sent = await post(request.url, request.body, request.headers);
  return { id: typeof sent.id === "string" ? sent.id : undefined };
}

/** A Microsoft Teams incoming webhook (connector or Workflows), or the app's bot for a channel endpoint. */
export const msteams: ProviderFactory = (): Provider<"chat"> => {
  const tokens = createTokenCache();
  return {
    id: ID,
    channel: "chat",
    // Neither webhooks nor the Bot Connector take an idempotency key.
    idempotent: false,
    async send(message, context) {
      if (message.conversation) return sendAsBot(message, context, tokens);
      const { url, body, headers } = withProviderData(
        { url: channelSetting(ID, message, "webhookUrl"), body: authoredCard(message.content) ?? adaptiveCard(message), headers: {} },
        context.providerData,
        "camel",
      );
      const response = await postJsonResponse(ID, context.http, url, body, headers);
      // Connector webhooks answer 200 even when Teams refused the post, with the reason as text.
      if (response.text.startsWith("Webhook message delivery failed")) {
        throw new ProviderError(`${ID} answered ${response.status}: ${response.text.slice(0, 2000)}`, {
          transient: /HTTP error (429|5\d\d)/.test(response.text),
          status: response.status,
        });
      }
      return { id: headerOf(response, "request-id") ?? headerOf(response, "x-ms-workflow-run-id") };
    },
  };
};
