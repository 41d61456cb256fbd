import type { Queryable } from "@notify/runtime";
import { NAMES_LAYOUT } from "../layouts/store.js";

export interface LegacyLayoutRow {
  id: string;
  identifier: string;
  name: string;
  description: string;
  content: string;
  variables: StoredVariable[];
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface StoredVariable {
  name: string;
  type: string;
  required: boolean;
  defaultValue?: unknown;
}

export type LegacyOrderColumn = "created_at" | "updated_at" | "name" | "identifier";

const COLUMNS = "id, identifier, name, description, content, variables, is_default, created_at, updated_at";

/** Inserts unless the identifier is taken (undefined then). `variables` is JSON text. */
export async function insertLegacyLayout(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; identifier: string; name: string; description: string; content: string; variables: string; isDefault: boolean },
): Promise<LegacyLayoutRow | undefined> {
  const { rows } = await db.query<LegacyLayoutRow>(
    `INSERT INTO triggers.legacy_layouts (id, organization_id, environment_id, identifier, name, description, content, variables, is_default)
     VALUES ($2, $3, $1, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (environment_id, identifier) DO NOTHING
     RETURNING ${COLUMNS}`,
    [environmentId, row.id, row.organizationId, row.identifier, row.name, row.description, row.content, row.variables, row.isDefault],
  );
  return rows[0];
}

/** By id, else by identifier. */
export async function selectLegacyLayout(db: Queryable, environmentId: string, key: string, lock = false): Promise<LegacyLayoutRow | undefined> {
  const { rows } = await db.query<LegacyLayoutRow>(
    `SELECT ${COLUMNS} FROM triggers.legacy_layouts WHERE environment_id = $1 AND (id = $2 OR identifier = $2)
      ORDER BY id = $2 DESC LIMIT 1${lock ? " FOR UPDATE" : ""}`,
    [environmentId, key],
  );
  return rows[0];
}

/** The environment's default layout's id, if it has one. */
export async function selectDefaultLegacyLayoutId(db: Queryable, environmentId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM triggers.legacy_layouts WHERE environment_id = $1 AND is_default", [environmentId]);
  return rows[0]?.id;
}

/** The layouts whose id is one of `ids` or whose identifier is one of `identifiers` (what a batch of triggers names). */
export async function selectLegacyLayoutsByKeys(
  db: Queryable,
  environmentId: string,
  keys: { ids: readonly string[]; identifiers: readonly string[] },
): Promise<LegacyLayoutRow[]> {
  const { rows } = await db.query<LegacyLayoutRow>(
    `SELECT ${COLUMNS} FROM triggers.legacy_layouts WHERE environment_id = $1 AND (id = ANY($2::text[]) OR identifier = ANY($3::text[]))`,
    [environmentId, keys.ids, keys.identifiers],
  );
  return rows;
}

/** A page of the environment's layouts (limit + 1 rows, so the caller knows whether more follow). */
export async function selectLegacyLayoutPage(
  db: Queryable,
  environmentId: string,
  page: { offset: number; limit: number; orderBy: LegacyOrderColumn; ascending: boolean },
): Promise<LegacyLayoutRow[]> {
  // Only these fixed column names and directions are ever interpolated; id breaks ties.
  const direction = page.ascending ? "ASC" : "DESC";
  const { rows } = await db.query<LegacyLayoutRow>(
    `SELECT ${COLUMNS} FROM triggers.legacy_layouts WHERE environment_id = $1
      ORDER BY ${page.orderBy} ${direction}, id ${direction} LIMIT $2 OFFSET $3`,
    [environmentId, page.limit + 1, page.offset],
  );
  return rows;
}

/** Counts at most `cap` of the environment's layouts. */
export async function countLegacyLayouts(db: Queryable, environmentId: string, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM (SELECT 1 FROM triggers.legacy_layouts WHERE environment_id = $1 LIMIT $2) capped",
    [environmentId, cap],
  );
  return rows[0]!.count;
}

/** Writes a layout's fields as given (the caller merged the change into the row). */
export async function updateLegacyLayout(
  db: Queryable,
  environmentId: string,
  row: Pick<LegacyLayoutRow, "id" | "identifier" | "name" | "description" | "content"> & { variables: string },
): Promise<LegacyLayoutRow> {
  const { rows } = await db.query<LegacyLayoutRow>(
    `UPDATE triggers.legacy_layouts SET identifier = $3, name = $4, description = $5, content = $6, variables = $7, updated_at = now()
      WHERE environment_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [environmentId, row.id, row.identifier, row.name, row.description, row.content, row.variables],
  );
  return rows[0]!;
}

/** Makes the layout the environment's default, and no other. */
export async function setDefaultLegacyLayout(db: Queryable, environmentId: string, id: string): Promise<LegacyLayoutRow> {
  await db.query("UPDATE triggers.legacy_layouts SET is_default = false WHERE environment_id = $1 AND is_default AND id <> $2", [environmentId, id]);
  const { rows } = await db.query<LegacyLayoutRow>(
    `UPDATE triggers.legacy_layouts SET is_default = true WHERE environment_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [environmentId, id],
  );
  return rows[0]!;
}

export async function deleteLegacyLayout(db: Queryable, environmentId: string, id: string): Promise<void> {
  await db.query("DELETE FROM triggers.legacy_layouts WHERE environment_id = $1 AND id = $2", [environmentId, id]);
}

/** Whether a live workflow has a step whose template names the layout. */
export async function legacyLayoutInUse(db: Queryable, environmentId: string, id: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM triggers.workflows WHERE environment_id = $1 AND NOT deleted AND ${NAMES_LAYOUT} LIMIT 1`, [
    environmentId,
    id,
  ]);
  return rows.length > 0;
}
