import type { Queryable } from "@notify/runtime";

const jsonOrNull = (value: Record<string, unknown> | null | undefined) => (value ? JSON.stringify(value) : null);

/** A row of triggers.tenants, as pg returns it. */
export interface TenantRow {
  id: string;
  organization_id: string;
  environment_id: string;
  identifier: string;
  name: string | null;
  data: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/** What a write sets; undefined leaves a column as it is. */
export interface TenantChanges {
  identifier?: string | undefined;
  name?: string | undefined;
  data?: Record<string, unknown> | undefined;
}

export async function selectTenant(db: Queryable, environmentId: string, identifier: string): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>("SELECT * FROM triggers.tenants WHERE environment_id = $1 AND identifier = $2", [environmentId, identifier]);
  return rows[0];
}

export async function selectTenantsByIdentifiers(db: Queryable, environmentId: string, identifiers: readonly string[]): Promise<TenantRow[]> {
  const { rows } = await db.query<TenantRow>("SELECT * FROM triggers.tenants WHERE environment_id = $1 AND identifier = ANY($2)", [environmentId, identifiers]);
  return rows;
}

/** Inserts unless the identifier is taken; undefined then. */
export async function insertTenant(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; identifier: string; name: string | null; data: Record<string, unknown> | null },
): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>(
    `INSERT INTO triggers.tenants (environment_id, id, organization_id, identifier, name, data)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (environment_id, identifier) DO NOTHING
     RETURNING *`,
    [environmentId, row.id, row.organizationId, row.identifier, row.name, jsonOrNull(row.data)],
  );
  return rows[0];
}

/**
 * Applies the given changes to the tenant with `identifier`; undefined when there is none.
 * Throws a unique violation (see isUniqueViolation) when the new identifier is taken.
 */
export async function updateTenant(db: Queryable, environmentId: string, identifier: string, changes: TenantChanges): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>(
    `UPDATE triggers.tenants
        SET identifier = coalesce($3, identifier),
            name = CASE WHEN $4::boolean THEN $5 ELSE name END,
            data = CASE WHEN $6::boolean THEN $7::jsonb ELSE data END,
            updated_at = now()
      WHERE environment_id = $1 AND identifier = $2
      RETURNING *`,
    [
      environmentId,
      identifier,
      changes.identifier ?? null,
      changes.name !== undefined,
      changes.name ?? null,
      changes.data !== undefined,
      jsonOrNull(changes.data),
    ],
  );
  return rows[0];
}

export async function deleteTenant(db: Queryable, environmentId: string, identifier: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>("DELETE FROM triggers.tenants WHERE environment_id = $1 AND identifier = $2 RETURNING id", [
    environmentId,
    identifier,
  ]);
  return rows[0]?.id;
}

/** One page, newest first as Novu lists them (ids grow with creation); fetches one extra row so the caller knows whether more follow. */
export async function selectTenantPage(db: Queryable, environmentId: string, offset: number, limit: number): Promise<TenantRow[]> {
  const { rows } = await db.query<TenantRow>("SELECT * FROM triggers.tenants WHERE environment_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3", [
    environmentId,
    limit + 1,
    offset,
  ]);
  return rows;
}

/** Counts at most `cap` rows, so the count costs the same for ten tenants or ten million. */
export async function countTenants(db: Queryable, environmentId: string, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    "SELECT count(*) AS count FROM (SELECT 1 FROM triggers.tenants WHERE environment_id = $1 LIMIT $2) capped",
    [environmentId, cap],
  );
  return rows[0]!.count;
}

/** The tenant `key` names: by internal id first, then by identifier. */
export async function selectTenantByKey(
  db: Queryable,
  environmentId: string,
  key: { id: string | undefined; identifier: string },
): Promise<TenantRow | undefined> {
  const { rows } = await db.query<TenantRow>(
    `SELECT * FROM triggers.tenants WHERE environment_id = $1 AND (id = $2 OR identifier = $3)
      ORDER BY id = $2 DESC NULLS LAST LIMIT 1`,
    [environmentId, key.id ?? null, key.identifier],
  );
  return rows[0];
}
