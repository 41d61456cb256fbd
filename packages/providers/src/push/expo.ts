import { postJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { PushMessage, SendContext, SendResult } from "../types.js";
import { ProviderError } from "../types.js";
import { providerOverrides, requireTokens, settle, type TokenOutcome } from "./common.js";
import { objectOf } from "../overrides.js";
import { mergedBody, withProviderData } from "../provider-data.js";

const ID = "expo";
const DEFAULT_BASE = "https://exp.host";
/** Expo takes at most this many messages in one request. */
const BATCH = 100;

interface Ticket {
  status?: string;
  id?: string;
  message?: string;
  details?: { error?: string };
}

/** One Expo message per token, so each ticket of the answer belongs to one token; overrides are Expo's own fields, as Novu spreads them. */
function expoMessage(message: PushMessage, token: string): Record<string, unknown> {
  const { sound, badge, ...overrides } = providerOverrides(message);
  return {
    to: token,
    title: message.title,
    body: message.content,
    data: message.payload,
    ...(typeof badge === "number" ? { badge } : {}),
    ...(typeof sound === "string" ? { sound } : {}),
    ...overrides,
  };
}

/** A ticket as a token's outcome: DeviceNotRegistered means the token is dead; a rate limit is worth another attempt. */
function outcomeOf(ticket: Ticket | undefined): TokenOutcome {
  if (ticket?.status === "ok") return { sent: true, id: ticket.id };
  const code = ticket?.details?.error;
  const error = new ProviderError(`${ID}: ${code ?? "error"}: ${ticket?.message ?? "no ticket for this token"}`, { transient: code === "MessageRateExceeded" });
  return { sent: false, invalid: code === "DeviceNotRegistered", error };
}

export const expo: ProviderFactory = () => ({
  id: ID,
  channel: "push",
  idempotent: false,
  async send(message: PushMessage, context: SendContext): Promise<SendResult> {
    requireTokens(ID, message);
    // The trigger's provider overrides reach every message of a batch, and the request's URL and headers.
    const { url, headers } = withProviderData(
      {
        url: `${trimSlash(context.credentials.baseUrl ?? DEFAULT_BASE)}/--/api/v2/push/send`,
        body: {},
        // The access token is optional: Expo asks for one only when the project turned on push security.
        headers: { accept: "application/json", ...(context.credentials.apiKey ? { authorization: `Bearer ${context.credentials.apiKey}` } : {}) },
      },
      context.providerData,
      "camel",
    );
    const outcomes: { token: string; outcome: TokenOutcome }[] = [];
    for (let start = 0; start < message.tokens.length; start += BATCH) {
      const batch = message.tokens.slice(start, start + BATCH);
      // A failed batch fails its own tokens: those of earlier batches were sent.
      const tickets = await postJson<{ data?: unknown }>(
        ID,
        context.http,
        url,
        batch.map((token) => mergedBody(expoMessage(message, token), context.providerData, "camel")),
        headers,
      ).then(
        (answer) => (Array.isArray(answer.data) ? answer.data.map((ticket) => outcomeOf(objectOf(ticket) as Ticket | undefined)) : []),
        (error: unknown) => batch.map((): TokenOutcome => ({ sent: false, invalid: false, error })),
      );
      for (const [index, token] of batch.entries()) outcomes.push({ token, outcome: tickets[index] ?? outcomeOf(undefined) });
    }
    return settle(ID, outcomes);
  },
});
