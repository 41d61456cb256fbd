import { escapeLike, type Queryable } from "@notify/runtime";

export interface LayoutRow {
  id: string;
  identifier: string;
  name: string;
  is_default: boolean;
  is_translation_enabled: boolean;
  email_body: string | null;
  email_editor_type: "block" | "html" | null;
  created_at: Date;
  updated_at: Date;
}

/** Where a layout key may point: its id or its identifier (an id that is also some identifier finds the id's layout). */
export interface LayoutLookup {
  id: string | undefined;
  identifier: string;
}

export interface LayoutContentColumns {
  email_body: string | null;
  email_editor_type: "block" | "html" | null;
}

export type LayoutOrderColumn = "created_at" | "updated_at" | "name";

const COLUMNS = "id, identifier, name, is_default, is_translation_enabled, email_body, email_editor_type, created_at, updated_at";

/**
 * Inserts a layout, the environment's default when it has none; undefined when the identifier
 * is taken. A concurrent first layout of the same environment makes this one fail on the
 * one-default index (the caller tries again, and then finds a default).
 */
export async function insertLayout(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; identifier: string; name: string; isTranslationEnabled: boolean } & LayoutContentColumns,
): Promise<LayoutRow | undefined> {
  const { rows } = await db.query<LayoutRow>(
    `INSERT INTO triggers.layouts (id, organization_id, environment_id, identifier, name, is_translation_enabled, email_body, email_editor_type, is_default)
     SELECT $2, $3, $1, $4, $5, $6, $7, $8, NOT EXISTS (SELECT 1 FROM triggers.layouts WHERE environment_id = $1 AND is_default)
     ON CONFLICT (environment_id, identifier) DO NOTHING
     RETURNING ${COLUMNS}`,
    [environmentId, row.id, row.organizationId, row.identifier, row.name, row.isTranslationEnabled, row.email_body, row.email_editor_type],
  );
  return rows[0];
}

/** Counts the environment's layouts, at most `cap`. */
export async function countEnvironmentLayouts(db: Queryable, environmentId: string, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM (SELECT 1 FROM triggers.layouts WHERE environment_id = $1 LIMIT $2) capped",
    [environmentId, cap],
  );
  return rows[0]!.count;
}

export async function selectLayout(db: Queryable, environmentId: string, lookup: LayoutLookup, lock = false): Promise<LayoutRow | undefined> {
  const { rows } = await db.query<LayoutRow>(
    `SELECT ${COLUMNS} FROM triggers.layouts
      WHERE environment_id = $1 AND (id = $2 OR identifier = $3)
      ORDER BY id = $2 DESC NULLS LAST LIMIT 1${lock ? " FOR UPDATE" : ""}`,
    [environmentId, lookup.id ?? null, lookup.identifier],
  );
  return rows[0];
}

/** The layouts with any of these identifiers or ids (what a batch of triggers names). */
export async function selectLayoutsByKeys(db: Queryable, environmentId: string, keys: readonly string[]): Promise<LayoutRow[]> {
  const { rows } = await db.query<LayoutRow>(
    `SELECT ${COLUMNS} FROM triggers.layouts WHERE environment_id = $1 AND (identifier = ANY($2::text[]) OR id = ANY($2::text[]))`,
    [environmentId, keys],
  );
  return rows;
}

/** What a list keeps: layouts whose name or identifier contains `query` (case-insensitive). */
const FILTER_CONDITION = "($2::text IS NULL OR name ILIKE '%' || $2 || '%' OR identifier ILIKE '%' || $2 || '%')";

const queryValue = (query: string | undefined) => (query === undefined ? null : escapeLike(query));

/** A page of the environment's layouts (limit + 1 rows, so the caller knows whether more follow). */
export async function selectLayoutPage(
  db: Queryable,
  environmentId: string,
  page: { offset: number; limit: number; query: string | undefined; orderBy: LayoutOrderColumn; ascending: boolean },
): Promise<LayoutRow[]> {
  // Only these fixed column names and directions are ever interpolated; id breaks ties.
  const direction = page.ascending ? "ASC" : "DESC";
  const { rows } = await db.query<LayoutRow>(
    `SELECT ${COLUMNS} FROM triggers.layouts
      WHERE environment_id = $1 AND ${FILTER_CONDITION}
      ORDER BY ${page.orderBy} ${direction}, id ${direction}
      LIMIT $3 OFFSET $4`,
    [environmentId, queryValue(page.query), page.limit + 1, page.offset],
  );
  return rows;
}

/** Counts at most `cap` layouts the query keeps. */
export async function countLayouts(db: Queryable, environmentId: string, query: string | undefined, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (SELECT 1 FROM triggers.layouts WHERE environment_id = $1 AND ${FILTER_CONDITION} LIMIT $3) capped`,
    [environmentId, queryValue(query), cap],
  );
  return rows[0]!.count;
}

/** Renames a layout and, unless `content` is undefined, replaces its content (null columns clear it). */
export async function updateLayout(
  db: Queryable,
  environmentId: string,
  id: string,
  change: { name: string; isTranslationEnabled: boolean; content: LayoutContentColumns | undefined },
): Promise<LayoutRow> {
  const { rows } = await db.query<LayoutRow>(
    `UPDATE triggers.layouts
        SET name = $3, is_translation_enabled = $4, updated_at = now(),
            email_body = CASE WHEN $5 THEN $6 ELSE email_body END,
            email_editor_type = CASE WHEN $5 THEN $7 ELSE email_editor_type END
      WHERE environment_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [
      environmentId,
      id,
      change.name,
      change.isTranslationEnabled,
      change.content !== undefined,
      change.content?.email_body ?? null,
      change.content?.email_editor_type ?? null,
    ],
  );
  return rows[0]!;
}

export async function deleteLayout(db: Queryable, environmentId: string, id: string): Promise<void> {
  await db.query("DELETE FROM triggers.layouts WHERE environment_id = $1 AND id = $2", [environmentId, id]);
}

/** Live workflows with a step whose template names the layout (its key in $2), as their email steps do. */
export const NAMES_LAYOUT = `jsonb_path_exists(steps, '$[*].template ? (@.layoutId == $layout)', jsonb_build_object('layout', $2::text))`;

/** The email steps that name the layout stop naming it. */
export async function unsetStepLayouts(db: Queryable, environmentId: string, identifier: string): Promise<void> {
  await db.query(
    `UPDATE triggers.workflows
        SET steps = (
              SELECT jsonb_agg(CASE WHEN step #>> '{template,layoutId}' = $2 THEN step #- '{template,layoutId}' ELSE step END ORDER BY position)
                FROM jsonb_array_elements(steps) WITH ORDINALITY AS stored (step, position)
            ),
            updated_at = now()
      WHERE environment_id = $1 AND NOT deleted AND ${NAMES_LAYOUT}`,
    [environmentId, identifier],
  );
}

/** At most `limit` live workflows with a step that names the layout, by name. */
export async function selectLayoutUsage(
  db: Queryable,
  environmentId: string,
  identifier: string,
  limit: number,
): Promise<{ name: string; trigger_identifier: string }[]> {
  const { rows } = await db.query<{ name: string; trigger_identifier: string }>(
    `SELECT name, trigger_identifier FROM triggers.workflows
      WHERE environment_id = $1 AND NOT deleted AND ${NAMES_LAYOUT}
      ORDER BY name, id LIMIT $3`,
    [environmentId, identifier, limit],
  );
  return rows;
}
