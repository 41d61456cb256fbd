import { hash, randomBytes } from "node:crypto";
import { objectId, withTransaction, type Pool, type Queryable, type Sealer } from "@notify/runtime";
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
  /** What the operator calls the key. */
  label?: string | undefined;
  /** When the key stops working; never without. */
  expiresAt?: Date | undefined;
}

/**
 * Stores `key` for the named environment, creating the organization and environment if needed:
 * its hash, which requests are authenticated by, and the key sealed (its hash as context), which
 * Inbox subscriberHashes are checked with. A key stored and revoked before stays revoked.
 */
export async function addKey(pool: Pool, sealer: Sealer, key: string, placement: KeyPlacement = {}): Promise<{ revoked: boolean }> {
  return withTransaction(pool, async (tx) => {
    const organizationId = await store.upsertOrganization(tx, objectId(), placement.organization ?? DEFAULT_ORGANIZATION);
    const environmentId = await store.upsertEnvironment(tx, objectId(), organizationId, placement.environment ?? DEFAULT_ENVIRONMENT);
    return storeKey(tx, sealer, key, environmentId, placement);
  });
}

/** Stores `key` for the environment (its hash, and the key sealed with its hash as context); answers the key's id. */
export async function storeKey(
  db: Queryable,
  sealer: Sealer,
  key: string,
  environmentId: string,
  placement: Pick<KeyPlacement, "label" | "expiresAt"> = {},
): Promise<{ id: string; revoked: boolean }> {
  const keyHash = hashKey(key);
  const id = objectId();
  const { revoked } = await store.insertKey(db, {
    id,
    environmentId,
    keyHash,
    keySealed: sealer.seal(Buffer.from(key, "utf8"), keyHash),
    prefix: key.slice(0, PREFIX_LENGTH),
    label: placement.label ?? null,
    expiresAt: placement.expiresAt ?? null,
  });
  return { id, revoked };
}

export type BootstrapOutcome =
  /** The configured key is accepted (again). */
  | { kind: "configured" }
  /** The configured key was revoked (`notify keys revoke`): it stays refused. */
  | { kind: "revoked" }
  /** No key was configured nor stored: this one was made, to be shown once. */
  | { kind: "generated"; key: string }
  /** None configured, and keys exist already. */
  | { kind: "none" };

/**
 * Makes the Development environment accept `configured` unless it was revoked; with none
 * configured and no key stored yet (a first local start), generates one.
 */
export async function ensureBootstrapKey(pool: Pool, sealer: Sealer, configured: string | undefined): Promise<BootstrapOutcome> {
  if (configured) return (await addKey(pool, sealer, configured)).revoked ? { kind: "revoked" } : { kind: "configured" };
  if ((await store.countKeys(pool)) > 0) return { kind: "none" };
  const key = generateKey();
  await addKey(pool, sealer, key);
  return { kind: "generated", key };
}
