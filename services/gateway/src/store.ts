import { migrationsBeside, type Queryable } from "@notify/runtime";

/** The gateway's schema, which the statements below run against. */
export const migrations = migrationsBeside("gateway", import.meta.url);

export interface KeyScopeRow {
  key_id: string;
  key_hash: string;
  environment_id: string;
  organization_id: string;
  expires_at: Date | null;
}

export interface KeyListRow {
  id: string;
  prefix: string;
  label: string | null;
  organization: string;
  environment: string;
  identifier: string;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export async function selectKeyScope(db: Queryable, keyHash: string): Promise<KeyScopeRow | undefined> {
  const { rows } = await db.query<KeyScopeRow>(
    `SELECT k.id AS key_id, k.key_hash, e.id AS environment_id, e.organization_id, k.expires_at
       FROM gateway.api_keys k JOIN gateway.environments e ON e.id = k.environment_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
    [keyHash],
  );
  return rows[0];
}

export interface OrganizationRow {
  id: string;
  name: string;
  branding: Record<string, string> | null;
  created_at: Date;
  updated_at: Date;
}

export async function selectOrganization(db: Queryable, organizationId: string): Promise<OrganizationRow | undefined> {
  const { rows } = await db.query<OrganizationRow>("SELECT id, name, branding, created_at, updated_at FROM gateway.organizations WHERE id = $1", [
    organizationId,
  ]);
  return rows[0];
}

/** Renames the organization; false when another organization has the name. */
export async function renameOrganization(db: Queryable, organizationId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE gateway.organizations SET name = $2, updated_at = now()
      WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM gateway.organizations o WHERE o.name = $2 AND o.id <> $1)`,
    [organizationId, name],
  );
  return rowCount === 1;
}

/** Replaces the organization's branding. */
export async function updateOrganizationBranding(db: Queryable, organizationId: string, branding: Record<string, string>): Promise<void> {
  await db.query("UPDATE gateway.organizations SET branding = $2, updated_at = now() WHERE id = $1", [organizationId, JSON.stringify(branding)]);
}

export async function touchKey(db: Queryable, keyId: string): Promise<void> {
  await db.query("UPDATE gateway.api_keys SET last_used_at = now() WHERE id = $1", [keyId]);
}

export async function upsertOrganization(db: Queryable, id: string, name: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO gateway.organizations (id, name) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
     RETURNING id`,
    [id, name],
  );
  return rows[0]!.id;
}

export async function upsertEnvironment(db: Queryable, id: string, organizationId: string, name: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO gateway.environments (id, organization_id, name) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, name) DO UPDATE SET name = EXCLUDED.name
     RETURNING id`,
    [id, organizationId, name],
  );
  return rows[0]!.id;
}

/** Inserts the key unless its hash is stored already (a re-used bootstrap key). */
/**
 * Inserts the key, or refreshes its sealed copy when its hash is stored already (a bootstrap key
 * given again at a restart). A revoked key stays revoked: answers whether it is.
 */
export async function insertKey(
  db: Queryable,
  row: { id: string; environmentId: string; keyHash: string; keySealed: Buffer; prefix: string; label: string | null; expiresAt: Date | null },
): Promise<{ revoked: boolean }> {
  const { rows } = await db.query<{ revoked: boolean }>(
    `INSERT INTO gateway.api_keys (id, environment_id, key_hash, key_sealed, prefix, label, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (key_hash) DO UPDATE SET key_sealed = EXCLUDED.key_sealed
     RETURNING revoked_at IS NOT NULL AS revoked`,
    [row.id, row.environmentId, row.keyHash, row.keySealed, row.prefix, row.label, row.expiresAt],
  );
  return rows[0]!;
}

export async function countKeys(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: number }>("SELECT count(*) AS count FROM gateway.api_keys");
  return rows[0]!.count;
}

/** The newest keys first, at most `limit`. */
export async function selectKeys(db: Queryable, limit: number): Promise<KeyListRow[]> {
  const { rows } = await db.query<KeyListRow>(
    `SELECT k.id, k.prefix, k.label, o.name AS organization, e.name AS environment, e.identifier, k.created_at, k.last_used_at, k.expires_at, k.revoked_at
       FROM gateway.api_keys k
       JOIN gateway.environments e ON e.id = k.environment_id
       JOIN gateway.organizations o ON o.id = e.organization_id
      ORDER BY k.created_at DESC, k.id DESC
      LIMIT $1`,
    [limit],
  );
  return rows;
}

/**
 * Revokes the active keys with this prefix, or the key with this id (ids and prefixes differ in
 * length, so one never matches the other), and returns their hashes (to drop them from the cache).
 */
export async function revokeKeys(db: Queryable, prefixOrId: string): Promise<string[]> {
  const { rows } = await db.query<{ key_hash: string }>(
    "UPDATE gateway.api_keys SET revoked_at = now() WHERE (prefix = $1 OR id = $1) AND revoked_at IS NULL RETURNING key_hash",
    [prefixOrId],
  );
  return rows.map((row) => row.key_hash);
}

export interface EnvironmentRow {
  id: string;
  organization_id: string;
  name: string;
  identifier: string;
  session_secret: Buffer;
  inbox_origins: string[] | null;
  /** The environment's own rate limits (rate-limits.ts environmentRateLimits); null: the gateway's defaults. */
  rate_limits: unknown;
}

const ENVIRONMENT_COLUMNS = "id, organization_id, name, identifier, session_secret, inbox_origins, rate_limits";

export async function selectEnvironment(db: Queryable, environmentId: string): Promise<EnvironmentRow | undefined> {
  const { rows } = await db.query<EnvironmentRow>(`SELECT ${ENVIRONMENT_COLUMNS} FROM gateway.environments WHERE id = $1`, [environmentId]);
  return rows[0];
}

export async function selectEnvironmentByIdentifier(db: Queryable, identifier: string): Promise<EnvironmentRow | undefined> {
  const { rows } = await db.query<EnvironmentRow>(`SELECT ${ENVIRONMENT_COLUMNS} FROM gateway.environments WHERE identifier = $1`, [identifier]);
  return rows[0];
}

export interface EnvironmentListRow {
  id: string;
  organization_id: string;
  name: string;
  identifier: string;
}

const LISTED_ENVIRONMENT_COLUMNS = "id, organization_id, name, identifier";

export async function selectOrganizationEnvironments(db: Queryable, organizationId: string, limit: number): Promise<EnvironmentListRow[]> {
  const { rows } = await db.query<EnvironmentListRow>(
    `SELECT ${LISTED_ENVIRONMENT_COLUMNS} FROM gateway.environments WHERE organization_id = $1 ORDER BY created_at, id LIMIT $2`,
    [organizationId, limit],
  );
  return rows;
}

/** A new environment of the organization; undefined when the organization has one of that name. */
export async function insertEnvironment(db: Queryable, id: string, organizationId: string, name: string): Promise<EnvironmentListRow | undefined> {
  const { rows } = await db.query<EnvironmentListRow>(
    `INSERT INTO gateway.environments (id, organization_id, name) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, name) DO NOTHING
     RETURNING ${LISTED_ENVIRONMENT_COLUMNS}`,
    [id, organizationId, name],
  );
  return rows[0];
}

/** Renames the organization's environment and/or sets its public identifier (null: kept); undefined when it has no such environment. */
export async function updateEnvironment(
  db: Queryable,
  organizationId: string,
  environmentId: string,
  change: { name: string | null; identifier: string | null },
): Promise<EnvironmentListRow | undefined> {
  const { rows } = await db.query<EnvironmentListRow>(
    `UPDATE gateway.environments SET name = coalesce($3, name), identifier = coalesce($4, identifier)
      WHERE organization_id = $1 AND id = $2
      RETURNING ${LISTED_ENVIRONMENT_COLUMNS}`,
    [organizationId, environmentId, change.name, change.identifier],
  );
  return rows[0];
}

/** Deletes every key of the environment (revoked ones too), answering their hashes. */
export async function deleteEnvironmentKeys(db: Queryable, environmentId: string): Promise<string[]> {
  const { rows } = await db.query<{ key_hash: string }>("DELETE FROM gateway.api_keys WHERE environment_id = $1 RETURNING key_hash", [environmentId]);
  return rows.map((row) => row.key_hash);
}

export async function deleteEnvironment(db: Queryable, organizationId: string, environmentId: string): Promise<void> {
  await db.query("DELETE FROM gateway.environments WHERE organization_id = $1 AND id = $2", [organizationId, environmentId]);
}

/** The organization's environment, locked until the transaction ends; undefined when it has no such environment. */
export async function selectOrganizationEnvironmentForUpdate(
  db: Queryable,
  organizationId: string,
  environmentId: string,
): Promise<EnvironmentListRow | undefined> {
  const { rows } = await db.query<EnvironmentListRow>(
    `SELECT ${LISTED_ENVIRONMENT_COLUMNS} FROM gateway.environments WHERE organization_id = $1 AND id = $2 FOR UPDATE`,
    [organizationId, environmentId],
  );
  return rows[0];
}

export interface SealedKeyRow {
  id: string;
  key_hash: string;
  key_sealed: Buffer;
}

/** The environment's active keys that were stored sealed (keys stored before sealing have none). */
export async function selectSealedKeys(db: Queryable, environmentId: string, limit: number): Promise<SealedKeyRow[]> {
  const { rows } = await db.query<SealedKeyRow>(
    `SELECT id, key_hash, key_sealed FROM gateway.api_keys
      WHERE environment_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) AND key_sealed IS NOT NULL
      ORDER BY created_at DESC LIMIT $2`,
    [environmentId, limit],
  );
  return rows;
}

/** The organization's environment with one of its active keys, sealed (what an idempotent replay of its creation answers again). */
export async function selectEnvironmentWithKey(
  db: Queryable,
  organizationId: string,
  environmentId: string,
  keyId: string,
): Promise<(EnvironmentListRow & SealedKeyRow) | undefined> {
  const { rows } = await db.query<EnvironmentListRow & SealedKeyRow>(
    `SELECT e.id, e.organization_id, e.name, e.identifier, k.key_hash, k.key_sealed
       FROM gateway.environments e JOIN gateway.api_keys k ON k.environment_id = e.id
      WHERE e.organization_id = $1 AND e.id = $2 AND k.id = $3 AND k.revoked_at IS NULL AND k.key_sealed IS NOT NULL`,
    [organizationId, environmentId, keyId],
  );
  return rows[0];
}

/** Sets the browser origins of a named environment's Inbox (NULL: any); false when there is no such environment. */
export async function updateInboxOrigins(db: Queryable, organization: string, environment: string, origins: string[] | null): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE gateway.environments e SET inbox_origins = $3
       FROM gateway.organizations o
      WHERE o.id = e.organization_id AND o.name = $1 AND e.name = $2`,
    [organization, environment, origins],
  );
  return rowCount === 1;
}

/** Sets the rate limits of a named environment (NULL: the gateway's defaults); false when there is no such environment. */
export async function updateRateLimits(db: Queryable, organization: string, environment: string, rateLimits: object | null): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE gateway.environments e SET rate_limits = $3
       FROM gateway.organizations o
      WHERE o.id = e.organization_id AND o.name = $1 AND e.name = $2`,
    [organization, environment, rateLimits === null ? null : JSON.stringify(rateLimits)],
  );
  return rowCount === 1;
}
