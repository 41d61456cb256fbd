import { hash, randomBytes } from "node:crypto";
import { objectId, withTransaction, type Pool, type Sealer } from "@notify/runtime";
import * as store from "./store.js";

export const DEFAULT_ORGANIZATION = "Default";
export const DEFAULT_ENVIRONMENT = "Development";
const PREFIX_LENGTH = 8;

export const hashKey = (key: string) => hash("sha256", key, "hex");

/** 16 random bytes as 32 lowercase hex characters, the format of Novu's keys. */
export const generateKey = () => randomBytes(16).toString("hex");

export const cacheKeyOf = (keyHash: string) => `notify:apikey:${keyHash}`;

export interface KeyPlacement {
  organization?: string | undefined;
  environment?: string | undefined;
}

/**
 * Stores `key` for the named environment, creating the organization and environment if needed:
 * its hash, which requests are authenticated by, and the key sealed (its hash as context), which
 * Inbox subscriberHashes are checked with.
 */
export async function addKey(pool: Pool, sealer: Sealer, key: string, placement: KeyPlacement = {}): Promise<void> {
  const keyHash = hashKey(key);
  const keySealed = sealer.seal(Buffer.from(key, "utf8"), keyHash);
  await withTransaction(pool, async (tx) => {
    const organizationId = await store.upsertOrganization(tx, objectId(), placement.organization ?? DEFAULT_ORGANIZATION);
    const environmentId = await store.upsertEnvironment(tx, objectId(), organizationId, placement.environment ?? DEFAULT_ENVIRONMENT);
    await store.insertKey(tx, { id: objectId(), environmentId, keyHash, keySealed, prefix: key.slice(0, PREFIX_LENGTH) });
  });
}

/**
 * Makes the Development environment accept `configured`; with none configured and no key stored
 * yet (a first local start), generates one and returns it so it can be shown once.
 */
export async function ensureBootstrapKey(pool: Pool, sealer: Sealer, configured: string | undefined): Promise<string | undefined> {
  if (configured) {
    await addKey(pool, sealer, configured);
    return undefined;
  }
  if ((await store.countKeys(pool)) > 0) return undefined;
  const key = generateKey();
  await addKey(pool, sealer, key);
  return key;
}
