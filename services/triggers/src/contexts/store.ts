import { escapeLike, type Queryable } from "@notify/runtime";
import type { ContextRow } from "../triggers/store.js";

/** A context with its place in creation order, which list cursors name. */
export interface ContextPageRow extends ContextRow {
  position: number;
}

/** What a list keeps: contexts whose id is `id` and whose type or id contains `search` (case-insensitive). */
export interface ContextFilter {
  id: string | null;
  search: string | null;
}

const COLUMNS = "type, id, data, created_at, updated_at";

const FILTER_CONDITIONS = `($2::text IS NULL OR id = $2) AND ($3::text IS NULL OR type ILIKE '%' || $3 || '%' OR id ILIKE '%' || $3 || '%')`;

const filterValues = (filter: ContextFilter) => [filter.id, filter.search === null ? null : escapeLike(filter.search)];

/** Inserts unless a context of that type and id exists; undefined then. `data` is JSON text. */
export async function insertContext(
  db: Queryable,
  environmentId: string,
  row: { organizationId: string; type: string; id: string; data: string },
): Promise<ContextRow | undefined> {
  const { rows } = await db.query<ContextRow>(
    `INSERT INTO triggers.contexts (environment_id, organization_id, type, id, data)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (environment_id, type, id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [environmentId, row.organizationId, row.type, row.id, row.data],
  );
  return rows[0];
}

export async function selectContext(db: Queryable, environmentId: string, type: string, id: string): Promise<ContextRow | undefined> {
  const { rows } = await db.query<ContextRow>(`SELECT ${COLUMNS} FROM triggers.contexts WHERE environment_id = $1 AND type = $2 AND id = $3`, [
    environmentId,
    type,
    id,
  ]);
  return rows[0];
}

/** Replaces the data (JSON text); undefined when there is no such context. */
export async function updateContextData(db: Queryable, environmentId: string, type: string, id: string, data: string): Promise<ContextRow | undefined> {
  const { rows } = await db.query<ContextRow>(
    `UPDATE triggers.contexts SET data = $4, updated_at = now() WHERE environment_id = $1 AND type = $2 AND id = $3 RETURNING ${COLUMNS}`,
    [environmentId, type, id, data],
  );
  return rows[0];
}

/** False when there was no such context. */
export async function deleteContext(db: Queryable, environmentId: string, type: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM triggers.contexts WHERE environment_id = $1 AND type = $2 AND id = $3", [environmentId, type, id]);
  return rowCount === 1;
}

/**
 * Keyset page of the contexts the filter keeps, after (or, with `towardsLower`, below) the
 * `cursor` position in creation order; `inclusive` takes the context at the cursor too. Fetches
 * limit + 1 rows so the caller knows whether the page has a neighbour in that direction.
 */
export async function selectContextPage(
  db: Queryable,
  environmentId: string,
  filter: ContextFilter,
  page: { cursor: number | undefined; towardsLower: boolean; inclusive: boolean; limit: number },
): Promise<ContextPageRow[]> {
  // Only these fixed operators and directions are ever interpolated.
  const operator = `${page.towardsLower ? "<" : ">"}${page.inclusive ? "=" : ""}`;
  const direction = page.towardsLower ? "DESC" : "ASC";
  const { rows } = await db.query<ContextPageRow>(
    `SELECT ${COLUMNS}, position FROM triggers.contexts
      WHERE environment_id = $1 AND ${FILTER_CONDITIONS} AND ($4::bigint IS NULL OR position ${operator} $4)
      ORDER BY position ${direction}
      LIMIT $5`,
    [environmentId, ...filterValues(filter), page.cursor ?? null, page.limit + 1],
  );
  return rows;
}

/** Counts at most `cap` contexts the filter keeps. */
export async function countContexts(db: Queryable, environmentId: string, filter: ContextFilter, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (SELECT 1 FROM triggers.contexts WHERE environment_id = $1 AND ${FILTER_CONDITIONS} LIMIT $4) capped`,
    [environmentId, ...filterValues(filter), cap],
  );
  return rows[0]!.count;
}
