import type { Queryable } from "@notify/runtime";
import type { ChannelSettings } from "../workflows/store.js";

/** A row of triggers.workflow_overrides, as pg returns it. */
export interface WorkflowOverrideRow {
  id: string;
  organization_id: string;
  environment_id: string;
  workflow_id: string;
  tenant_id: string;
  active: boolean;
  preference_settings: ChannelSettings;
  created_at: Date;
  updated_at: Date;
}

/** Inserts unless the workflow and tenant have one already; undefined then. */
export async function insertWorkflowOverride(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; workflowId: string; tenantId: string; active: boolean; preferenceSettings: ChannelSettings },
): Promise<WorkflowOverrideRow | undefined> {
  const { rows } = await db.query<WorkflowOverrideRow>(
    `INSERT INTO triggers.workflow_overrides (environment_id, id, organization_id, workflow_id, tenant_id, active, preference_settings)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (environment_id, workflow_id, tenant_id) DO NOTHING
     RETURNING *`,
    [environmentId, row.id, row.organizationId, row.workflowId, row.tenantId, row.active, JSON.stringify(row.preferenceSettings)],
  );
  return rows[0];
}

export async function selectWorkflowOverride(db: Queryable, environmentId: string, id: string): Promise<WorkflowOverrideRow | undefined> {
  const { rows } = await db.query<WorkflowOverrideRow>("SELECT * FROM triggers.workflow_overrides WHERE environment_id = $1 AND id = $2", [environmentId, id]);
  return rows[0];
}

export async function selectWorkflowOverrideOf(
  db: Queryable,
  environmentId: string,
  workflowId: string,
  tenantId: string,
): Promise<WorkflowOverrideRow | undefined> {
  const { rows } = await db.query<WorkflowOverrideRow>(
    "SELECT * FROM triggers.workflow_overrides WHERE environment_id = $1 AND workflow_id = $2 AND tenant_id = $3",
    [environmentId, workflowId, tenantId],
  );
  return rows[0];
}

/** One page in creation order; fetches one extra row so the caller knows whether more follow. */
export async function selectWorkflowOverridePage(db: Queryable, environmentId: string, offset: number, limit: number): Promise<WorkflowOverrideRow[]> {
  const { rows } = await db.query<WorkflowOverrideRow>("SELECT * FROM triggers.workflow_overrides WHERE environment_id = $1 ORDER BY id LIMIT $2 OFFSET $3", [
    environmentId,
    limit + 1,
    offset,
  ]);
  return rows;
}

/**
 * Sets `active` when given, and the given channels over the stored ones; undefined when the
 * override is gone.
 */
export async function updateWorkflowOverride(
  db: Queryable,
  environmentId: string,
  id: string,
  changes: { active: boolean | undefined; preferenceSettings: Partial<ChannelSettings> },
): Promise<WorkflowOverrideRow | undefined> {
  const { rows } = await db.query<WorkflowOverrideRow>(
    `UPDATE triggers.workflow_overrides
        SET active = coalesce($3, active), preference_settings = preference_settings || $4::jsonb, updated_at = now()
      WHERE environment_id = $1 AND id = $2
      RETURNING *`,
    [environmentId, id, changes.active ?? null, JSON.stringify(changes.preferenceSettings)],
  );
  return rows[0];
}

export async function deleteWorkflowOverride(db: Queryable, environmentId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM triggers.workflow_overrides WHERE environment_id = $1 AND id = $2", [environmentId, id]);
  return rowCount === 1;
}

/** Whether the override of each (workflow, tenant) pair that has one is active. */
export async function selectOverridesActive(
  db: Queryable,
  environmentId: string,
  pairs: readonly { workflowId: string; tenantId: string }[],
): Promise<{ workflow_id: string; tenant_id: string; active: boolean }[]> {
  const { rows } = await db.query<{ workflow_id: string; tenant_id: string; active: boolean }>(
    `SELECT o.workflow_id, o.tenant_id, o.active
       FROM unnest($2::text[], $3::text[]) AS p(workflow_id, tenant_id)
       JOIN triggers.workflow_overrides o ON o.environment_id = $1 AND o.workflow_id = p.workflow_id AND o.tenant_id = p.tenant_id`,
    [environmentId, pairs.map((pair) => pair.workflowId), pairs.map((pair) => pair.tenantId)],
  );
  return rows;
}
