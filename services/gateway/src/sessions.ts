import type { Scope } from "@notify/runtime";
import { jwtVerify, SignJWT } from "jose";

/**
 * PROVISIONAL: the inbox-auth contract (notes/inbox-contract.md), so the live events can be built
 * and tested before inbox-auth lands; its sessions.ts replaces this file at the merge.
 */
export interface SubscriberSession {
  scope: Scope;
  subscriberId: string;
  subscriberDbId: string;
}

export interface SessionTokens {
  issue(session: SubscriberSession): Promise<string>;
  /** undefined for a missing, forged, expired or foreign-audience token */
  verify(token: string): Promise<SubscriberSession | undefined>;
}

const AUDIENCE = "widget_user";

/** The secret every gateway signs with until inbox-auth's per-environment secrets land. */
export const PROVISIONAL_SESSION_SECRET = "provisional inbox session secret";

export function createSessionTokens(secret: string): SessionTokens {
  const key = new TextEncoder().encode(secret);
  return {
    issue: ({ scope, subscriberId, subscriberDbId }) =>
      new SignJWT({ organizationId: scope.organizationId, environmentId: scope.environmentId, subscriberId, _id: subscriberDbId })
        .setProtectedHeader({ alg: "HS256" })
        .setAudience(AUDIENCE)
        .setExpirationTime("15d")
        .sign(key),
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { audience: AUDIENCE, algorithms: ["HS256"] });
        const { organizationId, environmentId, subscriberId, _id } = payload;
        if (typeof organizationId !== "string" || typeof environmentId !== "string" || typeof subscriberId !== "string" || typeof _id !== "string") {
          return undefined;
        }
        return { scope: { organizationId, environmentId }, subscriberId, subscriberDbId: _id };
      } catch {
        return undefined;
      }
    },
  };
}
