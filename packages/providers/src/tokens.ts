import { createHash } from "node:crypto";
import { answerError } from "./http.js";
import type { OutboundResponse } from "./outbound.js";
import type { ProviderError } from "./types.js";

/** A fingerprint of credentials, so a cached token is not reused after the integration's settings change. */
export const fingerprint = (...parts: (string | undefined)[]) => createHash("sha256").update(JSON.stringify(parts)).digest("hex");

export interface MintedToken {
  value: string;
  /** When to mint a new one (epoch ms). */
  renewAt: number;
}

/** A new token is minted this long before the old one expires, so none expires mid-send. */
const RENEW_BEFORE_MS = 5 * 60_000;

/** A token that lives `expiresIn` seconds (an OAuth answer's `expires_in`; an hour when it says nothing). */
export function mintedToken(value: string, expiresIn: unknown): MintedToken {
  const lifetimeMs = (typeof expiresIn === "number" ? expiresIn : 3600) * 1000;
  return { value, renewAt: Date.now() + lifetimeMs - Math.min(RENEW_BEFORE_MS, lifetimeMs / 2) };
}

/**
 * Bearer tokens per integration, minted once while a send is waiting for them (concurrent sends
 * share the mint) and kept until their renewal time or until the credentials change.
 */
export function createTokenCache() {
  const entries = new Map<string, { fingerprint: string; token: Promise<MintedToken> }>();
  return {
    async get(integrationId: string, credentials: string, mint: () => Promise<MintedToken>): Promise<string> {
      const entry = entries.get(integrationId);
      if (entry && entry.fingerprint === credentials) {
        const token = await entry.token;
        if (token.renewAt > Date.now()) return token.value;
        if (entries.get(integrationId) !== entry) return this.get(integrationId, credentials, mint);
      }
      const minted = { fingerprint: credentials, token: mint() };
      entries.set(integrationId, minted);
      minted.token.catch(() => {
        if (entries.get(integrationId) === minted) entries.delete(integrationId);
      });
      return (await minted.token).value;
    },
    /**
     * The failure of a call whose token the provider refused (revoked, or expired early): the
     * token is forgotten and the failure is transient, so the next attempt mints a new one.
     */
    refused(integrationId: string, value: string, providerId: string, response: OutboundResponse): ProviderError {
      const entry = entries.get(integrationId);
      entry?.token.then(
        (token) => {
          if (token.value === value && entries.get(integrationId) === entry) entries.delete(integrationId);
        },
        () => undefined,
      );
      return answerError(providerId, response, true);
    },
  };
}
