import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Queryable } from "@notify/runtime";

/** A row of integrations.integrations, as pg returns it. */
export interface IntegrationRow {
  id: string;
  organization_id: string;
  environment_id: string;
  provider_id: string;
  channel: string;
  name: string;
  identifier: string;
  credentials: JsonObject;
  configurations: JsonObject;
  secrets: Buffer | null;
  conditions: JsonValue[];
  active: boolean;
  is_primary: boolean;
  priority: number;
  deleted: boolean;
  deleted_at: Date | null;
  deleted_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a write sets. */
export type IntegrationFields = Pick<
  IntegrationRow,
  "name" | "identifier" | "credentials" | "configurations" | "secrets" | "conditions" | "active" | "is_primary" | "priority"
>;

const FIELD_COLUMNS = [
  "name",
  "identifier",
  "credentials",
  "configurations",
  "secrets",
  "conditions",
  "active",
  "is_primary",
  "priority",
] as const satisfies readonly (keyof IntegrationFields)[];

// jsonb parameters are sent as JSON text: pg would turn a JS array into a Postgres array.
const fieldValues = (fields: IntegrationFields) =>
  FIELD_COLUMNS.map((column) => (column === "conditions" ? JSON.stringify(fields.conditions) : fields[column]));

/** Records that the environment is set up; false when it already was (then nothing changes). */
export async function insertEnvironmentIfMissing(db: Queryable, environmentId: string, organizationId: string): Promise<boolean> {
  const { rowCount } = await db.query("INSERT INTO integrations.environments (environment_id, organization_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
    environmentId,
    organizationId,
  ]);
  return rowCount === 1;
}

/**
 * Serialises the integration writes of one environment until the transaction ends, so primaries
 * and priorities are always computed from a state nobody else is changing.
 */
export async function lockEnvironment(db: Queryable, environmentId: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('notify.integrations.' || $1, 0))", [environmentId]);
}

export async function insertIntegration(
  db: Queryable,
  environmentId: string,
  row: { id: string; organizationId: string; providerId: string; channel: string; fields: IntegrationFields },
): Promise<IntegrationRow> {
  const { rows } = await db.query<IntegrationRow>(
    `INSERT INTO integrations.integrations
       (environment_id, id, organization_id, provider_id, channel, ${FIELD_COLUMNS.join(", ")})
     VALUES ($1, $2, $3, $4, $5, ${FIELD_COLUMNS.map((_, index) => `$${index + 6}`).join(", ")})
     RETURNING *`,
    [environmentId, row.id, row.organizationId, row.providerId, row.channel, ...fieldValues(row.fields)],
  );
  return rows[0]!;
}

export async function selectIntegration(db: Queryable, environmentId: string, id: string): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>("SELECT * FROM integrations.integrations WHERE environment_id = $1 AND id = $2 AND NOT deleted", [
    environmentId,
    id,
  ]);
  return rows[0];
}

/** The environment's integrations in creation order, optionally of one channel and only active ones. */
export async function selectIntegrations(
  db: Queryable,
  environmentId: string,
  filter: { channel: string | null; activeOnly: boolean },
  limit: number,
): Promise<IntegrationRow[]> {
  const { rows } = await db.query<IntegrationRow>(
    `SELECT * FROM integrations.integrations
      WHERE environment_id = $1 AND NOT deleted
        AND ($2::text IS NULL OR channel = $2) AND (active OR NOT $3)
      ORDER BY created_at, id
      LIMIT $4`,
    [environmentId, filter.channel, filter.activeOnly, limit],
  );
  return rows;
}

/** Active integrations of every environment of the organization (the one organization-wide read). */
export async function selectOrganizationActiveIntegrations(db: Queryable, organizationId: string, limit: number): Promise<IntegrationRow[]> {
  const { rows } = await db.query<IntegrationRow>(
    `SELECT * FROM integrations.integrations
      WHERE organization_id = $1 AND active AND NOT deleted
      ORDER BY created_at, id
      LIMIT $2`,
    [organizationId, limit],
  );
  return rows;
}

export async function selectPrimaryIntegration(db: Queryable, environmentId: string, channel: string): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>(
    "SELECT * FROM integrations.integrations WHERE environment_id = $1 AND channel = $2 AND is_primary AND NOT deleted",
    [environmentId, channel],
  );
  return rows[0];
}

/** The highest priority among the channel's active integrations; 0 when there are none. */
export async function selectHighestActivePriority(db: Queryable, environmentId: string, channel: string): Promise<number> {
  const { rows } = await db.query<{ priority: number }>(
    `SELECT coalesce(max(priority), 0) AS priority FROM integrations.integrations
      WHERE environment_id = $1 AND channel = $2 AND active AND NOT deleted`,
    [environmentId, channel],
  );
  return rows[0]!.priority;
}

/** Writes every field column. */
export async function updateIntegration(db: Queryable, environmentId: string, id: string, fields: IntegrationFields): Promise<IntegrationRow> {
  const { rows } = await db.query<IntegrationRow>(
    `UPDATE integrations.integrations
        SET ${FIELD_COLUMNS.map((column, index) => `${column} = $${index + 3}`).join(", ")}, updated_at = now()
      WHERE environment_id = $1 AND id = $2
      RETURNING *`,
    [environmentId, id, ...fieldValues(fields)],
  );
  return rows[0]!;
}

export async function updatePriority(db: Queryable, environmentId: string, id: string, priority: number): Promise<void> {
  await db.query("UPDATE integrations.integrations SET priority = $3, updated_at = now() WHERE environment_id = $1 AND id = $2", [environmentId, id, priority]);
}

/** Clears the primary flag of the channel's integrations; they stay active. */
export async function demotePrimaries(db: Queryable, environmentId: string, channel: string): Promise<void> {
  await db.query(
    `UPDATE integrations.integrations SET is_primary = false, updated_at = now()
      WHERE environment_id = $1 AND channel = $2 AND is_primary AND NOT deleted`,
    [environmentId, channel],
  );
}

/**
 * Renumbers the channel's active integrations N..1 in their current priority order, with
 * `firstId` (when given) on top; inactive ones keep their priority.
 */
export async function renumberPriorities(db: Queryable, environmentId: string, channel: string, firstId: string | null): Promise<void> {
  await db.query(
    `UPDATE integrations.integrations AS target
        SET priority = ranked.priority, updated_at = now()
       FROM (SELECT id,
                    (count(*) OVER () + 1 - row_number() OVER (
                       ORDER BY coalesce(id = $3, false) DESC, priority DESC, created_at DESC, id DESC))::integer AS priority
               FROM integrations.integrations
              WHERE environment_id = $1 AND channel = $2 AND active AND NOT deleted) AS ranked
      WHERE target.environment_id = $1 AND target.id = ranked.id AND target.priority <> ranked.priority`,
    [environmentId, channel, firstId],
  );
}

export async function softDeleteIntegration(db: Queryable, environmentId: string, id: string, deletedBy: string): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>(
    `UPDATE integrations.integrations
        SET deleted = true, deleted_at = now(), deleted_by = $3, updated_at = now()
      WHERE environment_id = $1 AND id = $2 AND NOT deleted
      RETURNING *`,
    [environmentId, id, deletedBy],
  );
  return rows[0];
}

/** The newest active integration of a provider, restricted to one identifier when given. */
export async function selectNewestActiveOfProvider(
  db: Queryable,
  environmentId: string,
  providerId: string,
  identifier: string | null,
): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>(
    `SELECT * FROM integrations.integrations
      WHERE environment_id = $1 AND provider_id = $2 AND active AND NOT deleted
        AND ($3::text IS NULL OR identifier = $3)
      ORDER BY created_at DESC, id DESC
      LIMIT 1`,
    [environmentId, providerId, identifier],
  );
  return rows[0];
}

/** The newest active integration of a channel, optionally only the primary or only one identifier. */
export async function selectNewestActiveOfChannel(
  db: Queryable,
  environmentId: string,
  channel: string,
  filter: { identifier: string | null; primaryOnly: boolean },
): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>(
    `SELECT * FROM integrations.integrations
      WHERE environment_id = $1 AND channel = $2 AND active AND NOT deleted
        AND ($3::text IS NULL OR identifier = $3) AND (is_primary OR NOT $4)
      ORDER BY created_at DESC, id DESC
      LIMIT 1`,
    [environmentId, channel, filter.identifier, filter.primaryOnly],
  );
  return rows[0];
}

/** The channel's active integrations that carry conditions, highest priority first. */
export async function selectConditionalIntegrations(db: Queryable, environmentId: string, channel: string, limit: number): Promise<IntegrationRow[]> {
  const { rows } = await db.query<IntegrationRow>(
    `SELECT * FROM integrations.integrations
      WHERE environment_id = $1 AND channel = $2 AND active AND NOT deleted AND conditions <> '[]'::jsonb
      ORDER BY priority DESC, created_at DESC, id DESC
      LIMIT $3`,
    [environmentId, channel, limit],
  );
  return rows;
}
