import { createHmac, timingSafeEqual, webcrypto } from "node:crypto";
import type { Logger, Pool, Sealer } from "@notify/runtime";
import { LRUCache } from "lru-cache";
import { environmentRateLimits, type EnvironmentRateLimits } from "./rate-limits.js";
import type { SessionTokens } from "./sessions.js";
import * as store from "./store.js";

export interface EnvironmentSummary {
  id: string;
  organizationId: string;
  name: string;
  /** Public: the applicationIdentifier browsers send. */
  identifier: string;
}

/** An environment as the Inbox routes see it. */
export interface Environment extends EnvironmentSummary {
  /** Browser origins its Inbox may be used from; null: any. */
  inboxOrigins: readonly string[] | null;
  /** The HS256 key of its subscriber session tokens. */
  signingKey: webcrypto.CryptoKey;
  /** Its own rate limits, if it has any (`pnpm notify rate-limits`). */
  rateLimits: EnvironmentRateLimits | null;
}

export interface Environments {
  byId(environmentId: string): Promise<Environment | undefined>;
  byIdentifier(identifier: string): Promise<Environment | undefined>;
  /** The organization's environments in creation order (at most MAX_LISTED). */
  listOfOrganization(organizationId: string): Promise<EnvironmentSummary[]>;
  /**
   * Whether `subscriberHash` is the lowercase hex HMAC-SHA256 of `subscriberId` keyed by one of
   * the environment's active API keys (any of them, so keys can be rotated). Keys stored before
   * keys were sealed (hash only) cannot take part.
   */
  subscriberHashValid(environmentId: string, subscriberId: string, subscriberHash: string): Promise<boolean>;
}

/** The Inbox settings every environment shares. */
export interface InboxSettings {
  /** The longest snooze; the Inbox UI offers snoozing only when it is above zero. */
  maxSnoozeDurationHours: number;
}

/** The gateway's own records, which routes reach without an RPC. */
export interface Accounts {
  environments: Environments;
  sessions: SessionTokens;
  inbox: InboxSettings;
}

export const MAX_LISTED = 100;
/** Keys tried for one subscriberHash: an environment holds a handful; this bounds the work. */
const MAX_HMAC_KEYS = 20;
/**
 * Environments change rarely (their origins, by the CLI) and every Inbox request reads one: kept
 * in this process for a minute, unknown ones for a few seconds (forged tokens name random ids).
 */
const KEPT_MS = 60_000;
const UNKNOWN_KEPT_MS = 5_000;
const KEPT = 10_000;

const ENVIRONMENT_ID = /^[0-9a-f]{24}$/;
const IDENTIFIER = /^[\w-]{1,64}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

const UNKNOWN = Symbol("unknown environment");
type Kept = Environment | typeof UNKNOWN;

export interface EnvironmentsDeps {
  pool: Pool;
  /** Opens the sealed API keys (GATEWAY_ENCRYPTION_KEY). */
  sealer: Sealer;
  /** Mixed into every session signing key, so the database alone cannot sign a session. */
  encryptionKey: Buffer;
  log: Logger;
}

export function createEnvironments({ pool, sealer, encryptionKey, log }: EnvironmentsDeps): Environments {
  async function environmentOf(row: store.EnvironmentRow | undefined): Promise<Kept> {
    if (!row) return UNKNOWN;
    const secret = createHmac("sha256", encryptionKey).update("notify inbox session\0").update(row.id).update("\0").update(row.session_secret).digest();
    return {
      id: row.id,
      organizationId: row.organization_id,
      name: row.name,
      identifier: row.identifier,
      inboxOrigins: row.inbox_origins,
      signingKey: await webcrypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]),
      rateLimits: rateLimitsOf(row),
    };
  }

  /** A column edited by hand may hold anything: what does not parse leaves the environment on the defaults. */
  function rateLimitsOf(row: store.EnvironmentRow): EnvironmentRateLimits | null {
    if (row.rate_limits === null) return null;
    const parsed = environmentRateLimits.safeParse(row.rate_limits);
    if (parsed.success) return parsed.data;
    log.warn({ environmentId: row.id }, "gateway.environments.rate_limits does not parse: the environment has the default rate limits");
    return null;
  }

  const keptBy = (load: (key: string) => Promise<store.EnvironmentRow | undefined>) =>
    new LRUCache<string, Kept>({
      max: KEPT,
      ttl: KEPT_MS,
      // Concurrent misses of one key share one query.
      fetchMethod: async (key, _stale, { options }) => {
        const kept = await environmentOf(await load(key));
        if (kept === UNKNOWN) options.ttl = UNKNOWN_KEPT_MS;
        return kept;
      },
    });
  const byId = keptBy((id) => store.selectEnvironment(pool, id));
  const byIdentifier = keptBy((identifier) => store.selectEnvironmentByIdentifier(pool, identifier));
  const found = (kept: Kept | undefined) => (kept === UNKNOWN ? undefined : kept);

  return {
    async byId(environmentId) {
      return ENVIRONMENT_ID.test(environmentId) ? found(await byId.fetch(environmentId)) : undefined;
    },
    async byIdentifier(identifier) {
      return IDENTIFIER.test(identifier) ? found(await byIdentifier.fetch(identifier)) : undefined;
    },
    async listOfOrganization(organizationId) {
      const rows = await store.selectOrganizationEnvironments(pool, organizationId, MAX_LISTED);
      return rows.map((row) => ({ id: row.id, organizationId: row.organization_id, name: row.name, identifier: row.identifier }));
    },
    async subscriberHashValid(environmentId, subscriberId, subscriberHash) {
      if (!HEX_SHA256.test(subscriberHash)) return false;
      const given = Buffer.from(subscriberHash, "ascii");
      let valid = false;
      for (const row of await store.selectSealedKeys(pool, environmentId, MAX_HMAC_KEYS)) {
        let key: Buffer;
        try {
          key = sealer.open(row.key_sealed, row.key_hash);
        } catch (error) {
          log.warn({ environmentId, reason: (error as Error).message }, "an API key cannot be opened for an HMAC check");
          continue;
        }
        const expected = Buffer.from(createHmac("sha256", key).update(subscriberId).digest("hex"), "ascii");
        // Every key is tried, so the time taken does not tell which one matched.
        if (timingSafeEqual(expected, given)) valid = true;
      }
      return valid;
    },
  };
}
