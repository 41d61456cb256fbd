import type { JsonObject } from "@bufbuild/protobuf";
import type { Queryable } from "@notify/runtime";

/** A row of integrations.channel_connections, as pg returns it. */
export interface ConnectionRow {
  id: string;
  organization_id: string;
  environment_id: string;
  identifier: string;
  integration_id: string;
  integration_identifier: string;
  provider_id: string;
  channel: string;
  subscriber_id: string | null;
  context_keys: string[];
  workspace: JsonObject;
  /** The grant's open parts: expiresAt, refreshTokenExpiresAt. */
  auth: JsonObject;
  auth_secrets: Buffer;
  has_refresh_token: boolean;
  created_at: Date;
  updated_at: Date;
}

/** What a write sets besides the connection's scope. */
export interface ConnectionGrant {
  workspace: JsonObject;
  auth: JsonObject;
  authSecrets: Buffer;
  hasRefreshToken: boolean;
}

export interface NewConnection extends ConnectionGrant {
  id: string;
  organizationId: string;
  identifier: string;
  integrationId: string;
  integrationIdentifier: string;
  providerId: string;
  channel: string;
  subscriberId: string | null;
  contextKeys: readonly string[];
}

/**
 * The integration a connection is made through: a non-deleted one of the environment, locked
 * until the transaction ends so it cannot be deleted or renamed before the connection is written.
 */
export async function selectIntegrationByIdentifier(
  db: Queryable,
  environmentId: string,
  identifier: string,
): Promise<{ id: string; identifier: string; provider_id: string; channel: string } | undefined> {
  const { rows } = await db.query<{ id: string; identifier: string; provider_id: string; channel: string }>(
    "SELECT id, identifier, provider_id, channel FROM integrations.integrations WHERE environment_id = $1 AND identifier = $2 AND NOT deleted FOR SHARE",
    [environmentId, identifier],
  );
  return rows[0];
}

/** Inserts the connection (unique violations are the caller's to name). */
export async function insertConnection(db: Queryable, environmentId: string, row: NewConnection): Promise<ConnectionRow> {
  const { rows } = await db.query<ConnectionRow>(
    `INSERT INTO integrations.channel_connections
       (environment_id, id, organization_id, identifier, integration_id, integration_identifier, provider_id, channel,
        subscriber_id, context_keys, workspace, auth, auth_secrets, has_refresh_token)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     RETURNING *`,
    [
      environmentId,
      row.id,
      row.organizationId,
      row.identifier,
      row.integrationId,
      row.integrationIdentifier,
      row.providerId,
      row.channel,
      row.subscriberId,
      row.contextKeys,
      row.workspace,
      row.auth,
      row.authSecrets,
      row.hasRefreshToken,
    ],
  );
  return rows[0]!;
}

export async function selectConnection(db: Queryable, environmentId: string, identifier: string): Promise<ConnectionRow | undefined> {
  const { rows } = await db.query<ConnectionRow>("SELECT * FROM integrations.channel_connections WHERE environment_id = $1 AND identifier = $2", [
    environmentId,
    identifier,
  ]);
  return rows[0];
}

export interface ConnectionFilters {
  subscriberId: string | null;
  /** With subscriberId: the shared connections match too. */
  includeShared: boolean;
  channel: string | null;
  providerId: string | null;
  integrationIdentifier: string | null;
  /** Exactly these context keys (sorted, distinct); null: any. */
  contextKeys: readonly string[] | null;
  /** true: held by a subscriber; false: shared; null: either. */
  heldBySubscriber: boolean | null;
}

/** The filters' conditions, their parameters numbered from `first`. */
const filterConditions = (first: number) =>
  [
    `($${first}::text IS NULL OR subscriber_id = $${first} OR ($${first + 6}::boolean AND subscriber_id IS NULL))`,
    `($${first + 1}::text IS NULL OR channel = $${first + 1})`,
    `($${first + 2}::text IS NULL OR provider_id = $${first + 2})`,
    `($${first + 3}::text IS NULL OR integration_identifier = $${first + 3})`,
    `($${first + 4}::text[] IS NULL OR context_keys = $${first + 4})`,
    `($${first + 5}::boolean IS NULL OR (subscriber_id IS NOT NULL) = $${first + 5})`,
  ].join(" AND ");

const filterParameters = (filters: ConnectionFilters) => [
  filters.subscriberId,
  filters.channel,
  filters.providerId,
  filters.integrationIdentifier,
  filters.contextKeys,
  filters.heldBySubscriber,
  filters.includeShared,
];

/**
 * A keyset page walking from the cursor (a connection's id): limit + 1 rows, so the over-run says
 * whether there is more. A cursor naming no connection of the environment answers nothing.
 */
export async function selectConnectionPage(
  db: Queryable,
  environmentId: string,
  filters: ConnectionFilters,
  page: { byUpdatedAt: boolean; cursor: string | undefined; towardsLower: boolean; inclusive: boolean; limit: number },
): Promise<ConnectionRow[]> {
  // Only these fixed column names and operators are ever interpolated.
  const column = page.byUpdatedAt ? "updated_at" : "created_at";
  const operator = `${page.towardsLower ? "<" : ">"}${page.inclusive ? "=" : ""}`;
  const direction = page.towardsLower ? "DESC" : "ASC";
  const { rows } = await db.query<ConnectionRow>(
    `SELECT * FROM integrations.channel_connections
      WHERE environment_id = $1 AND ${filterConditions(4)}
        AND ($2::text IS NULL OR (${column}, id) ${operator}
             (SELECT ${column}, id FROM integrations.channel_connections WHERE environment_id = $1 AND id = $2))
      ORDER BY ${column} ${direction}, id ${direction}
      LIMIT $3`,
    [environmentId, page.cursor ?? null, page.limit + 1, ...filterParameters(filters)],
  );
  return rows;
}

/** Counts at most `cap` connections the filters match. */
export async function countConnections(db: Queryable, environmentId: string, filters: ConnectionFilters, cap: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (
       SELECT 1 FROM integrations.channel_connections WHERE environment_id = $1 AND ${filterConditions(3)} LIMIT $2
     ) capped`,
    [environmentId, cap, ...filterParameters(filters)],
  );
  return rows[0]!.count;
}

/** Replaces the workspace and the grant of the connection with this id (its tokens are sealed to it); undefined when it is gone. */
export async function updateConnection(db: Queryable, environmentId: string, id: string, grant: ConnectionGrant): Promise<ConnectionRow | undefined> {
  const { rows } = await db.query<ConnectionRow>(
    `UPDATE integrations.channel_connections
        SET workspace = $3, auth = $4, auth_secrets = $5, has_refresh_token = $6, updated_at = now()
      WHERE environment_id = $1 AND id = $2
      RETURNING *`,
    [environmentId, id, grant.workspace, grant.auth, grant.authSecrets, grant.hasRefreshToken],
  );
  return rows[0];
}

export async function deleteConnection(db: Queryable, environmentId: string, identifier: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM integrations.channel_connections WHERE environment_id = $1 AND identifier = $2", [
    environmentId,
    identifier,
  ]);
  return rowCount === 1;
}

/** The connection of that identifier made for exactly these contexts (sorted, distinct). */
export async function selectConnectionInContexts(
  db: Queryable,
  environmentId: string,
  identifier: string,
  contextKeys: readonly string[],
): Promise<ConnectionRow | undefined> {
  const { rows } = await db.query<ConnectionRow>(
    "SELECT * FROM integrations.channel_connections WHERE environment_id = $1 AND identifier = $2 AND context_keys = $3::text[]",
    [environmentId, identifier, contextKeys],
  );
  return rows[0];
}

/** Deletes the connections made through an integration (as it is deleted). */
export async function deleteIntegrationConnections(db: Queryable, environmentId: string, integrationId: string): Promise<void> {
  await db.query("DELETE FROM integrations.channel_connections WHERE environment_id = $1 AND integration_id = $2", [environmentId, integrationId]);
}

/** Follows an integration's new identifier. */
export async function renameIntegrationConnections(db: Queryable, environmentId: string, integrationId: string, identifier: string): Promise<void> {
  await db.query(
    `UPDATE integrations.channel_connections SET integration_identifier = $3
      WHERE environment_id = $1 AND integration_id = $2 AND integration_identifier <> $3`,
    [environmentId, integrationId, identifier],
  );
}
