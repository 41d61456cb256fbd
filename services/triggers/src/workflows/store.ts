import { escapeLike, type Queryable, type SeverityName } from "@notify/runtime";

export const GENERAL_GROUP = "General";

/** A row of triggers.notification_groups, as pg returns it. */
export interface GroupRow {
  id: string;
  organization_id: string;
  environment_id: string;
  name: string;
  parent_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A row of triggers.feeds, as pg returns it. */
export interface FeedRow {
  id: string;
  organization_id: string;
  environment_id: string;
  name: string;
  identifier: string;
  deleted: boolean;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface ChannelSettings {
  email: boolean;
  sms: boolean;
  in_app: boolean;
  chat: boolean;
  push: boolean;
}

/** The language of a workflow's templates, as the column holds it. */
export type TemplateEngineName = "handlebars" | "liquid";

/** What a workflow write stores; derived columns are computed by the service from the steps. */
export interface WorkflowColumns {
  name: string;
  description: string;
  trigger_identifier: string;
  active: boolean;
  draft: boolean;
  critical: boolean;
  tags: string[];
  preference_settings: ChannelSettings;
  /** Step messages in proto JSON. */
  steps: unknown[];
  active_channels: string[];
  variables: string[];
  subscriber_variables: string[];
  environment_variables: string[];
  notification_group_id: string;
  data: Record<string, unknown> | null;
  severity: SeverityName;
  validate_payload: boolean;
  payload_schema: Record<string, unknown> | null;
  /** PreferenceLevels in proto JSON; null when the workflow has v1's single level. */
  preference_levels: Record<string, unknown> | null;
  template_engine: TemplateEngineName;
}

/** A row of triggers.workflows joined with its notification group. */
export interface WorkflowRow extends WorkflowColumns {
  id: string;
  organization_id: string;
  environment_id: string;
  creator_id: string;
  deleted: boolean;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
  last_triggered_at: Date | null;
  group_name: string;
  group_parent_id: string | null;
  group_organization_id: string;
}

const WRITABLE = [
  "name",
  "description",
  "trigger_identifier",
  "active",
  "draft",
  "critical",
  "tags",
  "preference_settings",
  "steps",
  "active_channels",
  "variables",
  "subscriber_variables",
  "environment_variables",
  "notification_group_id",
  "data",
  "severity",
  "validate_payload",
  "payload_schema",
  "preference_levels",
  "template_engine",
] as const satisfies readonly (keyof WorkflowColumns)[];

/** jsonb parameters are serialised here: pg would send a JS array as a Postgres array. */
const JSONB_COLUMNS = new Set<string>(["preference_settings", "steps", "data", "payload_schema", "preference_levels"]);

const writableValues = (columns: WorkflowColumns) =>
  WRITABLE.map((column) => {
    const value = columns[column];
    return JSONB_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value;
  });

/** The workflow columns plus its group's, from a relation `w` holding workflow rows. */
const WITH_GROUP = `w.*, g.name AS group_name, g.parent_id AS group_parent_id, g.organization_id AS group_organization_id
   FROM w JOIN triggers.notification_groups g ON g.id = w.notification_group_id`;

// Notification groups

/** Creates the environment's "General" group unless it exists (the unique name makes this idempotent). */
export async function insertGeneralGroup(db: Queryable, environmentId: string, row: { id: string; organizationId: string }): Promise<void> {
  await db.query(
    `INSERT INTO triggers.notification_groups (environment_id, id, organization_id, name)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (environment_id, name) DO NOTHING`,
    [environmentId, row.id, row.organizationId, GENERAL_GROUP],
  );
}

export async function selectGroupByName(db: Queryable, environmentId: string, name: string): Promise<GroupRow | undefined> {
  const { rows } = await db.query<GroupRow>("SELECT * FROM triggers.notification_groups WHERE environment_id = $1 AND name = $2", [environmentId, name]);
  return rows[0];
}

export async function selectGroup(db: Queryable, environmentId: string, id: string): Promise<GroupRow | undefined> {
  const { rows } = await db.query<GroupRow>("SELECT * FROM triggers.notification_groups WHERE environment_id = $1 AND id = $2", [environmentId, id]);
  return rows[0];
}

/** Inserts unless the name is taken; undefined then. */
export async function insertGroup(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; name: string; parentId: string },
): Promise<GroupRow | undefined> {
  const { rows } = await db.query<GroupRow>(
    `INSERT INTO triggers.notification_groups (environment_id, id, organization_id, name, parent_id)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (environment_id, name) DO NOTHING
     RETURNING *`,
    [environmentId, row.id, row.organizationId, row.name, row.parentId],
  );
  return rows[0];
}

/** Renames the group; undefined when the environment has no group of that id. */
export async function updateGroupName(db: Queryable, environmentId: string, id: string, name: string): Promise<GroupRow | undefined> {
  const { rows } = await db.query<GroupRow>(
    "UPDATE triggers.notification_groups SET name = $3, updated_at = now() WHERE environment_id = $1 AND id = $2 RETURNING *",
    [environmentId, id, name],
  );
  return rows[0];
}

/** Deletes the group unless a workflow names it; answers whether it did. */
export async function deleteUnusedGroup(db: Queryable, environmentId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM triggers.notification_groups g
      WHERE g.environment_id = $1 AND g.id = $2
        AND NOT EXISTS (SELECT 1 FROM triggers.workflows w WHERE w.environment_id = $1 AND w.notification_group_id = g.id)`,
    [environmentId, id],
  );
  return (rowCount ?? 0) > 0;
}

/** The environment's groups in creation order, at most `limit`. */
export async function selectGroups(db: Queryable, environmentId: string, limit: number): Promise<GroupRow[]> {
  const { rows } = await db.query<GroupRow>("SELECT * FROM triggers.notification_groups WHERE environment_id = $1 ORDER BY id LIMIT $2", [
    environmentId,
    limit,
  ]);
  return rows;
}

// Feeds

/** The live feeds in creation order, all or those with the given identifiers, at most `limit`. */
export async function selectFeeds(db: Queryable, environmentId: string, identifiers: readonly string[] | undefined, limit: number): Promise<FeedRow[]> {
  const { rows } = await db.query<FeedRow>(
    `SELECT * FROM triggers.feeds
      WHERE environment_id = $1 AND NOT deleted AND ($2::text[] IS NULL OR identifier = ANY($2))
      ORDER BY id LIMIT $3`,
    [environmentId, identifiers ?? null, limit],
  );
  return rows;
}

/** Which of `ids` are live feeds of the environment. */
export async function selectLiveFeedIds(db: Queryable, environmentId: string, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM triggers.feeds WHERE environment_id = $1 AND NOT deleted AND id = ANY($2)", [
    environmentId,
    ids,
  ]);
  return new Set(rows.map((row) => row.id));
}

/**
 * Inserts unless the identifier is taken ("taken") or the environment already has `cap` live
 * feeds ("full").
 */
export async function insertFeed(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; name: string },
  cap: number,
): Promise<FeedRow | "taken" | "full"> {
  const { rows } = await db.query<FeedRow>(
    `INSERT INTO triggers.feeds (environment_id, id, organization_id, name, identifier)
     SELECT $1, $2, $3, $4, $4
      WHERE (SELECT count(*) FROM triggers.feeds WHERE environment_id = $1 AND NOT deleted) < $5
     ON CONFLICT (environment_id, identifier) WHERE NOT deleted DO NOTHING
     RETURNING *`,
    [environmentId, row.id, row.organizationId, row.name, cap],
  );
  if (rows[0]) return rows[0];
  const { rows: same } = await db.query("SELECT 1 FROM triggers.feeds WHERE environment_id = $1 AND NOT deleted AND identifier = $2", [
    environmentId,
    row.name,
  ]);
  return same.length > 0 ? "taken" : "full";
}

export async function softDeleteFeed(db: Queryable, environmentId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE triggers.feeds SET deleted = true, deleted_at = now(), updated_at = now()
      WHERE environment_id = $1 AND id = $2 AND NOT deleted
      RETURNING id`,
    [environmentId, id],
  );
  return rows[0]?.id;
}

// Workflows

/** Inserts unless a live workflow has the trigger identifier; undefined then. */
export async function insertWorkflow(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; creatorId: string; columns: WorkflowColumns },
): Promise<WorkflowRow | undefined> {
  const { rows } = await db.query<WorkflowRow>(
    `WITH w AS (
       INSERT INTO triggers.workflows (environment_id, id, organization_id, creator_id, ${WRITABLE.join(", ")})
       VALUES ($1, $2, $3, $4, ${WRITABLE.map((_, index) => `$${index + 5}`).join(", ")})
       ON CONFLICT (environment_id, trigger_identifier) WHERE NOT deleted DO NOTHING
       RETURNING *
     )
     SELECT ${WITH_GROUP}`,
    [environmentId, row.id, row.organizationId, row.creatorId, ...writableValues(row.columns)],
  );
  return rows[0];
}

/**
 * The live workflow that `key` names: by internal id first, then by trigger identifier, then by
 * the id a slug carries (`slugId`). `lock` takes a row lock for an update in the same transaction.
 */
export async function selectWorkflowByKey(
  db: Queryable,
  environmentId: string,
  key: { id?: string | undefined; identifier?: string | undefined; slugId?: string | undefined },
  lock = false,
): Promise<WorkflowRow | undefined> {
  const { rows } = await db.query<WorkflowRow>(
    `WITH w AS (
       SELECT * FROM triggers.workflows
        WHERE environment_id = $1 AND NOT deleted AND (id = $2 OR trigger_identifier = $3 OR id = $4)
        ORDER BY id = $2 DESC NULLS LAST, trigger_identifier = $3 DESC NULLS LAST
        LIMIT 1
        ${lock ? "FOR UPDATE" : ""}
     )
     SELECT ${WITH_GROUP}`,
    [environmentId, key.id ?? null, key.identifier ?? null, key.slugId ?? null],
  );
  return rows[0];
}

/** The live workflows among `ids`, in id order. */
export async function selectWorkflowsByIds(db: Queryable, environmentId: string, ids: readonly string[]): Promise<WorkflowRow[]> {
  const { rows } = await db.query<WorkflowRow>(
    `WITH w AS (
       SELECT * FROM triggers.workflows WHERE environment_id = $1 AND NOT deleted AND id = ANY($2)
     )
     SELECT ${WITH_GROUP} ORDER BY w.id`,
    [environmentId, ids],
  );
  return rows;
}

/** Replaces the writable columns of a live workflow; throws a unique violation on a taken identifier. */
export async function updateWorkflow(db: Queryable, environmentId: string, id: string, columns: WorkflowColumns): Promise<WorkflowRow> {
  const { rows } = await db.query<WorkflowRow>(
    `WITH w AS (
       UPDATE triggers.workflows
          SET ${WRITABLE.map((column, index) => `${column} = $${index + 3}`).join(", ")}, updated_at = now()
        WHERE environment_id = $1 AND id = $2
        RETURNING *
     )
     SELECT ${WITH_GROUP}`,
    [environmentId, id, ...writableValues(columns)],
  );
  return rows[0]!;
}

export async function updateWorkflowStatus(db: Queryable, environmentId: string, id: string, active: boolean): Promise<WorkflowRow | undefined> {
  const { rows } = await db.query<WorkflowRow>(
    `WITH w AS (
       UPDATE triggers.workflows
          SET active = $3, draft = NOT $3, updated_at = now()
        WHERE environment_id = $1 AND id = $2 AND NOT deleted
        RETURNING *
     )
     SELECT ${WITH_GROUP}`,
    [environmentId, id, active],
  );
  return rows[0];
}

export async function softDeleteWorkflow(db: Queryable, environmentId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE triggers.workflows SET deleted = true, deleted_at = now(), active = false, updated_at = now()
      WHERE environment_id = $1 AND id = $2 AND NOT deleted
      RETURNING id`,
    [environmentId, id],
  );
  return rows[0]?.id;
}

/** One page, newest first, optionally by name; fetches one extra row so the caller knows whether more follow. */
/** Which live workflows a list shows: by name or identifier, by tags, by status. */
export interface WorkflowFilter {
  query: string | undefined;
  tags: string[];
  active: boolean | undefined;
}

/** The filter's condition, its parameters numbered from `first`. */
function filterCondition(filter: WorkflowFilter, first: number) {
  const [query, tags, active] = [first, first + 1, first + 2].map((index) => `$${index}`);
  return {
    sql: `(${query}::text IS NULL OR name ILIKE '%' || ${query} || '%' OR trigger_identifier ILIKE '%' || ${query} || '%')
          AND (cardinality(${tags}::text[]) = 0 OR tags && ${tags}::text[])
          AND (${active}::boolean IS NULL OR active = ${active})`,
    values: [filter.query === undefined ? null : escapeLike(filter.query), filter.tags, filter.active ?? null],
  };
}

/** The columns a list orders by before the id, which breaks ties (names compare byte by byte, as Novu's store sorts them). */
export type WorkflowOrder = "created" | "updated" | "name" | "lastTriggered";
const ORDER_COLUMNS: Record<WorkflowOrder, string> = {
  created: "",
  updated: "updated_at",
  name: 'name COLLATE "C"',
  lastTriggered: "last_triggered_at",
};

export async function selectWorkflowPage(
  db: Queryable,
  environmentId: string,
  page: { offset: number; limit: number; filter: WorkflowFilter; oldestFirst: boolean; orderBy: WorkflowOrder },
): Promise<WorkflowRow[]> {
  const condition = filterCondition(page.filter, 4);
  const direction = page.oldestFirst ? "ASC" : "DESC";
  // Only these fixed column names and directions are interpolated.
  const column = ORDER_COLUMNS[page.orderBy];
  // A workflow never triggered sorts as the oldest, as Novu's store sorts an absent time.
  const nulls = page.oldestFirst ? "NULLS FIRST" : "NULLS LAST";
  const order = (table: string) => `${column ? `${table}.${column} ${direction} ${nulls}, ` : ""}${table}.id ${direction}`;
  const { rows } = await db.query<WorkflowRow>(
    `WITH w AS (
       SELECT * FROM triggers.workflows t
        WHERE environment_id = $1 AND NOT deleted AND ${condition.sql}
        ORDER BY ${order("t")} LIMIT $2 OFFSET $3
     )
     SELECT ${WITH_GROUP} ORDER BY ${order("w")}`,
    [environmentId, page.limit + 1, page.offset, ...condition.values],
  );
  return rows;
}

/** Counts at most `cap` live workflows the filter shows. */
export async function countWorkflows(db: Queryable, environmentId: string, cap: number, filter: WorkflowFilter): Promise<number> {
  const condition = filterCondition(filter, 3);
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (
       SELECT 1 FROM triggers.workflows
        WHERE environment_id = $1 AND NOT deleted AND ${condition.sql}
        LIMIT $2
     ) capped`,
    [environmentId, cap, ...condition.values],
  );
  return rows[0]!.count;
}

/** The distinct tags of the live workflows, alphabetically, the first `limit` of them. */
export async function selectWorkflowTags(db: Queryable, environmentId: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ tag: string }>(
    `SELECT DISTINCT tag FROM triggers.workflows, unnest(tags) AS tag
      WHERE environment_id = $1 AND NOT deleted
      ORDER BY tag LIMIT $2`,
    [environmentId, limit],
  );
  return rows.map((row) => row.tag);
}

/** At most `limit` live workflows whose steps read the environment variable, by name. */
export async function selectEnvironmentVariableReaders(
  db: Queryable,
  environmentId: string,
  key: string,
  limit: number,
): Promise<{ name: string; trigger_identifier: string }[]> {
  const { rows } = await db.query<{ name: string; trigger_identifier: string }>(
    `SELECT name, trigger_identifier FROM triggers.workflows
      WHERE environment_id = $1 AND NOT deleted AND $2 = ANY (environment_variables)
      ORDER BY name, id LIMIT $3`,
    [environmentId, key, limit],
  );
  return rows;
}

/** What preferences need of an active workflow; the steps themselves are not read. */
export type ActiveWorkflowRow = Pick<
  WorkflowRow,
  "id" | "name" | "trigger_identifier" | "critical" | "preference_settings" | "active_channels" | "tags" | "severity" | "updated_at"
>;

/** Active workflows after the `after` id, in id order; fetches one extra row to tell whether more follow. */
export async function selectActiveWorkflowPage(db: Queryable, environmentId: string, after: string | undefined, limit: number): Promise<ActiveWorkflowRow[]> {
  const { rows } = await db.query<ActiveWorkflowRow>(
    `SELECT id, name, trigger_identifier, critical, preference_settings, active_channels, tags, severity, updated_at
       FROM triggers.workflows
      WHERE environment_id = $1 AND active AND NOT deleted AND ($2::text IS NULL OR id > $2)
      ORDER BY id LIMIT $3`,
    [environmentId, after ?? null, limit + 1],
  );
  return rows;
}

/**
 * Marks workflows triggered now, unless one was marked within `interval`: a trigger does not wait
 * on more than one such write per workflow every few minutes. Not a change of the workflow (its
 * updatedAt stays).
 */
export async function markWorkflowsTriggered(db: Queryable, environmentId: string, workflowIds: readonly string[], interval: string): Promise<void> {
  await db.query(
    `UPDATE triggers.workflows SET last_triggered_at = now()
      WHERE environment_id = $1 AND id = ANY($2::text[]) AND (last_triggered_at IS NULL OR last_triggered_at < now() - $3::interval)`,
    [environmentId, workflowIds, interval],
  );
}
