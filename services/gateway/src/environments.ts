import { createHmac, timingSafeEqual, webcrypto } from "node:crypto";
import { isUniqueViolation, objectId, withTransaction, type Logger, type Pool, type Sealer } from "@notify/runtime";
import { LRUCache } from "lru-cache";
import { generateKey, storeKey } from "./accounts.js";
import { HttpError, validationError } from "./errors.js";
import { environmentRateLimits, type EnvironmentRateLimits } from "./rate-limits.js";
import type { SessionTokens } from "./sessions.js";
import type { Organizations } from "./organizations.js";
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
   * Whether `hash` is the lowercase hex HMAC-SHA256 of `signed` (a session's subscriberId, or its
   * context as canonical JSON) keyed by one of the environment's active API keys (any of them, so
   * keys can be rotated). Keys stored before keys were sealed (hash only) cannot take part.
   */
  hmacValid(environmentId: string, signed: string, hash: string): Promise<boolean>;
  /** The environment's active API keys, opened (GET /v1/environments/api-keys), newest first; those that cannot be opened are left out. */
  openKeys(environmentId: string): Promise<{ id: string; key: string }[]>;
  /** A new environment of the organization, with a first API key (shown this once). */
  create(organizationId: string, name: string): Promise<CreatedEnvironment>;
  /**
   * What `create` answered, the key opened again from its sealed copy (an idempotent replay: the
   * key never rests in the idempotency cache); undefined once the environment or key is gone.
   */
  createdAgain(organizationId: string, environmentId: string, keyId: string): Promise<CreatedEnvironment | undefined>;
  /** Renames one of the organization's environments and/or sets its public identifier. */
  update(organizationId: string, environmentId: string, change: EnvironmentChange): Promise<EnvironmentSummary>;
  /** Deletes one of the organization's environments (never Development or Production) and its API keys. */
  remove(organizationId: string, environmentId: string): Promise<void>;
}

export interface CreatedEnvironment extends EnvironmentSummary {
  apiKey: { id: string; key: string };
}

export interface EnvironmentChange {
  name?: string | undefined;
  identifier?: string | undefined;
}

/** The Inbox settings every environment shares. */
export interface InboxSettings {
  /** The longest snooze; the Inbox UI offers snoozing only when it is above zero. */
  maxSnoozeDurationHours: number;
}

/** The gateway's own records, which routes reach without an RPC. */
export interface Accounts {
  environments: Environments;
  organizations: Organizations;
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
/** What an applicationIdentifier may be. */
export const ENVIRONMENT_IDENTIFIER = /^[\w-]{1,64}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

const UNKNOWN = Symbol("unknown environment");
type Kept = Environment | typeof UNKNOWN;

export interface EnvironmentsDeps {
  pool: Pool;
  /** Opens the sealed API keys (GATEWAY_ENCRYPTION_KEY). */
  sealer: Sealer;
  /** Mixed into every session signing key, so the database alone cannot sign a session. */
  encryptionKey: Buffer;
  /** Makes deleted keys stop working at once (auth.ts forgetKeys). */
  forgetKeys(keyHashes: readonly string[]): Promise<void>;
  log: Logger;
}

/** Novu's environments that every organization keeps: they cannot be deleted nor renamed, and no other takes their names. */
const PROTECTED = ["Development", "Production"];
const isProtectedName = (name: string) => PROTECTED.some((protectedName) => protectedName.toLowerCase() === name.toLowerCase());

const PROTECTED_NAME = "Environment name cannot be Development or Production";
/** A 422 in the validation shape, which @novu/api requires of every 422. */
const nameRefused = (message: string, name: string) => validationError({ name: { messages: [message], value: name } }, message);
const environmentNotFound = (environmentId: string) => new HttpError(404, `Environment ${environmentId} not found`);
const summaryOf = (row: store.EnvironmentListRow): EnvironmentSummary => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  identifier: row.identifier,
});

export function createEnvironments({ pool, sealer, encryptionKey, forgetKeys, log }: EnvironmentsDeps): Environments {
  /** The environment's active sealed keys, opened; one that does not open is logged and skipped. */
  async function openedKeys(environmentId: string, purpose: string): Promise<{ id: string; key: Buffer }[]> {
    const opened: { id: string; key: Buffer }[] = [];
    for (const row of await store.selectSealedKeys(pool, environmentId, MAX_HMAC_KEYS)) {
      try {
        opened.push({ id: row.id, key: sealer.open(row.key_sealed, row.key_hash) });
      } catch (error) {
        log.warn({ environmentId, reason: (error as Error).message }, `an API key cannot be opened for ${purpose}`);
      }
    }
    return opened;
  }

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
  /** Drops what this process keeps of environments the API changed (other gateways keep theirs at most KEPT_MS). */
  const forget = (...rows: store.EnvironmentListRow[]) => {
    for (const row of rows) {
      byId.delete(row.id);
      byIdentifier.delete(row.identifier);
    }
  };

  return {
    async byId(environmentId) {
      return ENVIRONMENT_ID.test(environmentId) ? found(await byId.fetch(environmentId)) : undefined;
    },
    async byIdentifier(identifier) {
      return ENVIRONMENT_IDENTIFIER.test(identifier) ? found(await byIdentifier.fetch(identifier)) : undefined;
    },
    async listOfOrganization(organizationId) {
      const rows = await store.selectOrganizationEnvironments(pool, organizationId, MAX_LISTED);
      return rows.map(summaryOf);
    },
    async hmacValid(environmentId, signed, hash) {
      if (!HEX_SHA256.test(hash)) return false;
      const given = Buffer.from(hash, "ascii");
      let valid = false;
      for (const { key } of await openedKeys(environmentId, "an HMAC check")) {
        const expected = Buffer.from(createHmac("sha256", key).update(signed).digest("hex"), "ascii");
        // Every key is tried, so the time taken does not tell which one matched.
        if (timingSafeEqual(expected, given)) valid = true;
      }
      return valid;
    },
    async openKeys(environmentId) {
      return (await openedKeys(environmentId, "a key listing")).map(({ id, key }) => ({ id, key: key.toString("utf8") }));
    },
    async create(organizationId, name) {
      if (isProtectedName(name)) throw nameRefused(PROTECTED_NAME, name);
      const key = generateKey();
      const created = await withTransaction(pool, async (tx) => {
        const existing = await store.selectOrganizationEnvironments(tx, organizationId, MAX_LISTED);
        if (existing.length >= MAX_LISTED) throw new HttpError(400, `An organization has at most ${MAX_LISTED} environments`);
        const row = await store.insertEnvironment(tx, objectId(), organizationId, name);
        if (!row) throw new HttpError(400, "Environment name must be unique");
        const { id } = await storeKey(tx, sealer, key, row.id, { label: `created with environment ${name}` });
        return { ...summaryOf(row), apiKey: { id, key } };
      });
      log.info({ organizationId, environmentId: created.id }, "environment created through the API");
      return created;
    },
    async createdAgain(organizationId, environmentId, keyId) {
      const row = await store.selectEnvironmentWithKey(pool, organizationId, environmentId, keyId);
      if (!row) return undefined;
      return { ...summaryOf(row), apiKey: { id: keyId, key: sealer.open(row.key_sealed, row.key_hash).toString("utf8") } };
    },
    async update(organizationId, environmentId, change) {
      if (!ENVIRONMENT_ID.test(environmentId)) throw environmentNotFound(environmentId);
      if (change.name !== undefined && isProtectedName(change.name)) throw nameRefused(PROTECTED_NAME, change.name);
      const { existing, updated } = await withTransaction(pool, async (tx) => {
        const existing = await store.selectOrganizationEnvironmentForUpdate(tx, organizationId, environmentId);
        if (!existing) throw environmentNotFound(environmentId);
        if (change.name !== undefined && change.name !== existing.name && isProtectedName(existing.name)) {
          throw nameRefused("Cannot update the name of Development or Production environments", change.name);
        }
        try {
          const updated = await store.updateEnvironment(tx, organizationId, environmentId, {
            name: change.name ?? null,
            identifier: change.identifier ?? null,
          });
          return { existing, updated };
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
          const identifierTaken = (error as { constraint?: string }).constraint === "environments_identifier_key";
          throw new HttpError(400, identifierTaken ? "Environment identifier must be unique" : "Environment name must be unique");
        }
      });
      if (!updated) throw environmentNotFound(environmentId);
      forget(existing, updated);
      return summaryOf(updated);
    },
    async remove(organizationId, environmentId) {
      if (!ENVIRONMENT_ID.test(environmentId)) throw environmentNotFound(environmentId);
      const deleted = await withTransaction(pool, async (tx) => {
        const existing = await store.selectOrganizationEnvironmentForUpdate(tx, organizationId, environmentId);
        if (!existing) throw environmentNotFound(environmentId);
        if (isProtectedName(existing.name)) {
          throw new HttpError(400, `The ${existing.name} environment is protected and cannot be deleted. Only custom environments can be deleted.`);
        }
        const hashes = await store.deleteEnvironmentKeys(tx, environmentId);
        await store.deleteEnvironment(tx, organizationId, environmentId);
        return { existing, hashes };
      });
      forget(deleted.existing);
      // The rows are gone, so a key missing every cache is refused already; the caches keep it at most their lifetime.
      await forgetKeys(deleted.hashes).catch((error: unknown) =>
        log.warn({ environmentId, reason: (error as Error).message }, "the deleted environment's keys stay cached until they expire"),
      );
      log.info({ organizationId, environmentId }, "environment deleted through the API");
    },
  };
}
