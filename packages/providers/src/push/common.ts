import { OutboundRefused } from "../outbound.js";
import type { PushMessage, SendResult } from "../types.js";
import { ProviderError } from "../types.js";

/** What the provider said about one device token. */
export type TokenOutcome = { sent: true; id?: string | undefined } | { sent: false; invalid: boolean; error: unknown };

/**
 * Sends to every token at once (one request each) and settles the outcomes: a token that
 * failed does not fail the others.
 */
export async function sendEachToken(providerId: string, tokens: readonly string[], sendOne: (token: string) => Promise<TokenOutcome>): Promise<SendResult> {
  const outcomes = await Promise.all(
    tokens.map(async (token) => ({
      token,
      outcome: await sendOne(token).catch((error: unknown): TokenOutcome => ({ sent: false, invalid: false, error })),
    })),
  );
  return settle(providerId, outcomes);
}

/**
 * One result for a send to several tokens: accepted when any token was, with the tokens the
 * provider reported invalid. When none was accepted it throws: the first failure as it was when no
 * token was reported invalid, else a ProviderError that carries the invalid tokens too.
 */
export function settle(providerId: string, outcomes: readonly { token: string; outcome: TokenOutcome }[]): SendResult {
  const invalidTokens = outcomes.filter(({ outcome }) => !outcome.sent && outcome.invalid).map(({ token }) => token);
  const sent = outcomes.flatMap(({ outcome }) => (outcome.sent ? [outcome] : []));
  if (sent.length > 0) {
    const id = sent.find((outcome) => outcome.id !== undefined)?.id;
    return { ...(id === undefined ? {} : { id }), ...(invalidTokens.length > 0 ? { invalidTokens } : {}) };
  }
  const failures = outcomes.flatMap(({ outcome }) => (!outcome.sent && !outcome.invalid ? [outcome.error] : []));
  const first = failures[0];
  if (first === undefined) {
    const reported = outcomes.map(({ outcome }) => (outcome.sent ? undefined : outcome.error)).find((error) => error instanceof Error);
    throw new ProviderError(`${providerId}: every device token is invalid${reported instanceof Error ? `: ${reported.message}` : ""}`, {
      transient: false,
      invalidTokens,
    });
  }
  if (invalidTokens.length === 0) throw first;
  const transient = first instanceof ProviderError ? first.transient : !(first instanceof OutboundRefused);
  throw new ProviderError(first instanceof Error ? first.message : `${providerId}: ${String(first)}`, {
    transient,
    retryAfterMs: first instanceof ProviderError ? first.retryAfterMs : undefined,
    status: first instanceof ProviderError ? first.status : undefined,
    invalidTokens,
    cause: first,
  });
}

/** A push message must name a device: the worker does not call a provider without one, but a direct caller may. */
export function requireTokens(providerId: string, message: PushMessage): void {
  if (message.tokens.length === 0) throw new ProviderError(`${providerId}: the message has no device token`, { transient: false });
}

/**
 * The trigger's overrides without what Novu keeps for itself (`deviceTokens` replaced the
 * subscriber's tokens before the provider was called; `notificationIdentifiers` is bookkeeping).
 */
export function providerOverrides(message: PushMessage): Record<string, unknown> {
  const { deviceTokens: _tokens, notificationIdentifiers: _identifiers, ...rest } = message.overrides;
  return rest;
}

export const stringOf = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
