import type { Scope } from "@notify/runtime";
import { decodeJwt, jwtVerify, SignJWT, type JWTPayload } from "jose";
import type { Environments } from "./environments.js";

/** A subscriber signed in to an environment's Inbox. */
export interface SubscriberSession {
  /** organizationId + environmentId, as API-key routes have. */
  scope: Scope;
  /** The external subscriberId. */
  subscriberId: string;
  /** The subscriber's _id (24 hex). */
  subscriberDbId: string;
  /** The keys ("type:id", sorted) of the session's contexts: it sees exactly the messages that have these. */
  contextKeys: string[];
}

/** A session read from a valid token, with the end the token sets. */
export interface VerifiedSession extends SubscriberSession {
  expiresAt: Date;
}

export interface SessionTokens {
  issue(session: SubscriberSession): Promise<string>;
  /**
   * undefined for a missing, forged, expired or foreign-audience token; rejects only when the
   * token's environment cannot be read (an outage, answered 503).
   */
  verify(token: string): Promise<VerifiedSession | undefined>;
}

/** The claims Novu's Inbox tokens carry, so its clients and ours read the same token. */
export const SESSION_AUDIENCE = "widget_user";
export const SESSION_ISSUER = "notify";
const ALGORITHM = "HS256";

/** Tokens longer than this are refused unread: ours are a few hundred bytes. */
const MAX_TOKEN_LENGTH = 4096;

/** The environmentId a token claims, unverified; undefined for what is not a JWT. */
function claimedEnvironmentOf(token: string): string | undefined {
  try {
    const { environmentId } = decodeJwt(token);
    return typeof environmentId === "string" ? environmentId : undefined;
  } catch {
    return undefined;
  }
}

export interface SessionTokensDeps {
  environments: Pick<Environments, "byId">;
  ttlSeconds: number;
}

/**
 * Subscriber session tokens: JWTs signed with their environment's own key (environments.ts), so
 * verifying one costs no database hop once its environment is kept in this process, and an
 * environment's tokens never open another's.
 */
export function createSessionTokens({ environments, ttlSeconds }: SessionTokensDeps): SessionTokens {
  return {
    async issue(session) {
      const environment = await environments.byId(session.scope.environmentId);
      if (!environment) throw new Error(`environment ${session.scope.environmentId} does not exist`);
      return new SignJWT({
        _id: session.subscriberDbId,
        subscriberId: session.subscriberId,
        organizationId: session.scope.organizationId,
        environmentId: session.scope.environmentId,
        contextKeys: session.contextKeys,
      })
        .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
        .setAudience(SESSION_AUDIENCE)
        .setIssuer(SESSION_ISSUER)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(environment.signingKey);
    },

    async verify(token) {
      if (token.length > MAX_TOKEN_LENGTH) return undefined;
      // Which key verifies it is named inside; nothing of it is trusted until verified.
      const claimed = claimedEnvironmentOf(token);
      if (claimed === undefined) return undefined;
      // A failed lookup is an outage (503), not a bad token.
      const environment = await environments.byId(claimed);
      if (!environment) return undefined;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, environment.signingKey, {
          algorithms: [ALGORITHM],
          audience: SESSION_AUDIENCE,
          issuer: SESSION_ISSUER,
          requiredClaims: ["exp"],
        }));
      } catch {
        // Forged, expired or of another audience: all the same to the caller.
        return undefined;
      }
      const { _id, subscriberId, organizationId, environmentId, exp, contextKeys = [] } = payload;
      if (typeof _id !== "string" || typeof subscriberId !== "string" || organizationId !== environment.organizationId || environmentId !== environment.id) {
        return undefined;
      }
      if (!Array.isArray(contextKeys) || !contextKeys.every((key) => typeof key === "string")) return undefined;
      return {
        scope: { organizationId: environment.organizationId, environmentId: environment.id },
        subscriberId,
        subscriberDbId: _id,
        contextKeys,
        // Required above: a token without one does not verify.
        expiresAt: new Date((exp ?? 0) * 1000),
      };
    },
  };
}
