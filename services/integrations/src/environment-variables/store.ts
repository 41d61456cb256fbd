import type { Queryable } from "@notify/runtime";

/** A variable of the organization with the value of one environment, when it has one. */
export interface VariableRow {
  id: string;
  organization_id: string;
  key: string;
  type: string;
  is_secret: boolean;
  created_at: Date;
  updated_at: Date;
  /** The environment's sealed value; null when it has none. */
  value: Buffer | null;
}

const VARIABLE_WITH_VALUE = `v.id, v.organization_id, v.key, v.type, v.is_secret, v.created_at, v.updated_at, e.value
   FROM integrations.environment_variables v
   LEFT JOIN integrations.environment_variable_values e ON e.variable_id = v.id AND e.environment_id = $2`;

/** Serialises the variable writes of one organization until the transaction ends (its count is bounded). */
export async function lockOrganization(db: Queryable, organizationId: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('notify.environment-variables.' || $1, 0))", [organizationId]);
}

export async function countVariables(db: Queryable, organizationId: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM integrations.environment_variables WHERE organization_id = $1", [
    organizationId,
  ]);
  return rows[0]?.count ?? 0;
}

export async function insertVariable(db: Queryable, row: { id: string; organizationId: string; key: string; type: string; isSecret: boolean }): Promise<void> {
  await db.query("INSERT INTO integrations.environment_variables (id, organization_id, key, type, is_secret) VALUES ($1, $2, $3, $4, $5)", [
    row.id,
    row.organizationId,
    row.key,
    row.type,
    row.isSecret,
  ]);
}

/** Sets the environment's value of a variable and marks the variable updated. */
export async function upsertValue(db: Queryable, environmentId: string, row: { organizationId: string; variableId: string; value: Buffer }): Promise<void> {
  await db.query(
    `WITH touched AS (UPDATE integrations.environment_variables SET updated_at = now() WHERE id = $2)
     INSERT INTO integrations.environment_variable_values (variable_id, organization_id, environment_id, value)
     VALUES ($2, $3, $1, $4)
     ON CONFLICT (variable_id, environment_id) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [environmentId, row.variableId, row.organizationId, row.value],
  );
}

export async function selectVariable(db: Queryable, organizationId: string, environmentId: string, key: string): Promise<VariableRow | undefined> {
  const { rows } = await db.query<VariableRow>(`SELECT ${VARIABLE_WITH_VALUE} WHERE v.organization_id = $1 AND v.key = $3`, [
    organizationId,
    environmentId,
    key,
  ]);
  return rows[0];
}

/** The organization's variables whose key contains `search` in any case (all without), newest first. */
export async function selectVariables(
  db: Queryable,
  organizationId: string,
  environmentId: string,
  search: string | undefined,
  limit: number,
): Promise<VariableRow[]> {
  const { rows } = await db.query<VariableRow>(
    `SELECT ${VARIABLE_WITH_VALUE}
      WHERE v.organization_id = $1 AND ($3::text IS NULL OR strpos(lower(v.key), lower($3)) > 0)
      ORDER BY v.created_at DESC, v.id DESC LIMIT $4`,
    [organizationId, environmentId, search ?? null, limit],
  );
  return rows;
}

/** Removes the environment's value of a variable; false when it had none. */
export async function deleteValue(db: Queryable, environmentId: string, variableId: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM integrations.environment_variable_values WHERE environment_id = $1 AND variable_id = $2", [
    environmentId,
    variableId,
  ]);
  return rowCount === 1;
}

/** Deletes a variable that no environment has a value of; false when one has. */
export async function deleteVariableWithoutValues(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM integrations.environment_variables v
      WHERE v.organization_id = $1 AND v.id = $2
        AND NOT EXISTS (SELECT 1 FROM integrations.environment_variable_values e WHERE e.variable_id = v.id)`,
    [organizationId, id],
  );
  return rowCount === 1;
}

/** Every variable the environment has a value of, with that value sealed. */
export async function selectEnvironmentValues(
  db: Queryable,
  organizationId: string,
  environmentId: string,
): Promise<{ id: string; key: string; value: Buffer }[]> {
  const { rows } = await db.query<{ id: string; key: string; value: Buffer }>(
    `SELECT v.id, v.key, e.value
       FROM integrations.environment_variable_values e
       JOIN integrations.environment_variables v ON v.id = e.variable_id
      WHERE e.environment_id = $2 AND v.organization_id = $1`,
    [organizationId, environmentId],
  );
  return rows;
}
