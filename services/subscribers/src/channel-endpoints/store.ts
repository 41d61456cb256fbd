import type { Queryable } from "@notify/runtime";

/** A row of subscribers.channel_endpoints with its subscriber's external id, as pg returns it. */
export interface EndpointRow {
  id: string;
  organization_id: string;
  environment_id: string;
  identifier: string;
  /** The subscriber's internal id. */
  subscriber_id: string;
  external_subscriber_id: string;
  integration_identifier: string;
  provider_id: string;
  channel: string;
  connection_identifier: string | null;
  context_keys: string[];
  type: string;
  endpoint: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface NewEndpoint {
  id: string;
  organizationId: string;
  identifier: string;
  subscriberId: string;
  integrationIdentifier: string;
  providerId: string;
  channel: string;
  connectionIdentifier: string | null;
  contextKeys: readonly string[];
  type: string;
  endpoint: Record<string, unknown>;
}

const WITH_SUBSCRIBER = `SELECT e.*, s.subscriber_id AS external_subscriber_id
  FROM subscribers.channel_endpoints e JOIN subscribers.subscribers s ON s.id = e.subscriber_id`;

/** Inserts the endpoint; undefined when the environment already has its identifier. */
export async function insertEndpoint(db: Queryable, environmentId: string, endpoint: NewEndpoint): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO subscribers.channel_endpoints
       (id, organization_id, environment_id, identifier, subscriber_id, integration_identifier, provider_id, channel,
        connection_identifier, context_keys, type, endpoint)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (environment_id, identifier) DO NOTHING
     RETURNING id`,
    [
      endpoint.id,
      endpoint.organizationId,
      environmentId,
      endpoint.identifier,
      endpoint.subscriberId,
      endpoint.integrationIdentifier,
      endpoint.providerId,
      endpoint.channel,
      endpoint.connectionIdentifier,
      endpoint.contextKeys,
      endpoint.type,
      endpoint.endpoint,
    ],
  );
  return rows[0]?.id;
}

export async function selectEndpoint(db: Queryable, environmentId: string, identifier: string): Promise<EndpointRow | undefined> {
  const { rows } = await db.query<EndpointRow>(`${WITH_SUBSCRIBER} WHERE e.environment_id = $1 AND e.identifier = $2`, [environmentId, identifier]);
  return rows[0];
}

export interface EndpointFilters {
  subscriberId?: string | undefined;
  channel?: string | undefined;
  providerId?: string | undefined;
  integrationIdentifier?: string | undefined;
  connectionIdentifier?: string | undefined;
  /** Exactly these context keys (sorted), when given. */
  contextKeys?: readonly string[] | undefined;
}

const FILTER_CONDITIONS = (first: number) => `
    AND ($${first}::text IS NULL OR s.subscriber_id = $${first})
    AND ($${first + 1}::text IS NULL OR e.channel = $${first + 1})
    AND ($${first + 2}::text IS NULL OR e.provider_id = $${first + 2})
    AND ($${first + 3}::text IS NULL OR e.integration_identifier = $${first + 3})
    AND ($${first + 4}::text IS NULL OR e.connection_identifier = $${first + 4})
    AND ($${first + 5}::text[] IS NULL OR e.context_keys = $${first + 5})`;

const filterValues = (filters: EndpointFilters) => [
  filters.subscriberId ?? null,
  filters.channel ?? null,
  filters.providerId ?? null,
  filters.integrationIdentifier ?? null,
  filters.connectionIdentifier ?? null,
  filters.contextKeys ?? null,
];

/**
 * A page of the environment's endpoints from a cursor (an endpoint id, itself included when asked),
 * limit + 1 of them so the over-run says whether there is more. Ordered by creation (the id) or by last update then id; a
 * cursor naming no endpoint of the environment answers nothing.
 */
export async function selectEndpointPage(
  db: Queryable,
  environmentId: string,
  query: { cursor: string | undefined; towardsLower: boolean; inclusive: boolean; byUpdatedAt: boolean; limit: number; filters: EndpointFilters },
): Promise<EndpointRow[]> {
  // Only these fixed operators and column names are ever interpolated.
  const [comparison, order] = query.towardsLower ? ["<", "DESC"] : [">", "ASC"];
  const operator = `${comparison}${query.inclusive ? "=" : ""}`;
  const key = query.byUpdatedAt ? "(e.updated_at, e.id)" : "e.id";
  const cursorKey = query.byUpdatedAt ? "c.updated_at, c.id" : "c.id";
  const { rows } = await db.query<EndpointRow>(
    `${WITH_SUBSCRIBER}
      WHERE e.environment_id = $1
        AND ($2::text IS NULL OR ${key} ${operator} (
          SELECT ${cursorKey} FROM subscribers.channel_endpoints c WHERE c.environment_id = $1 AND c.id = $2))${FILTER_CONDITIONS(4)}
      ORDER BY ${query.byUpdatedAt ? `e.updated_at ${order}, ` : ""}e.id ${order}
      LIMIT $3`,
    [environmentId, query.cursor ?? null, query.limit + 1, ...filterValues(query.filters)],
  );
  return rows;
}

/** Counts at most `cap` endpoints matching the filters. */
export async function countEndpoints(db: Queryable, environmentId: string, cap: number, filters: EndpointFilters): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (
       SELECT 1 FROM subscribers.channel_endpoints e JOIN subscribers.subscribers s ON s.id = e.subscriber_id
        WHERE e.environment_id = $1${FILTER_CONDITIONS(3)} LIMIT $2
     ) capped`,
    [environmentId, cap, ...filterValues(filters)],
  );
  return rows[0]!.count;
}

/** Replaces the endpoint data; undefined when the identifier is unknown. */
export async function updateEndpoint(db: Queryable, environmentId: string, identifier: string, endpoint: Record<string, unknown>): Promise<boolean> {
  const { rowCount } = await db.query(
    "UPDATE subscribers.channel_endpoints SET endpoint = $3, updated_at = now() WHERE environment_id = $1 AND identifier = $2",
    [environmentId, identifier, endpoint],
  );
  return rowCount === 1;
}

export async function deleteEndpoint(db: Queryable, environmentId: string, identifier: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM subscribers.channel_endpoints WHERE environment_id = $1 AND identifier = $2", [environmentId, identifier]);
  return rowCount === 1;
}

/** The endpoints of these subscribers (internal ids) on a channel with exactly these context keys, oldest first. */
export async function selectRecipientEndpoints(
  db: Queryable,
  environmentId: string,
  subscriberIds: readonly string[],
  channel: string,
  contextKeys: readonly string[],
): Promise<EndpointRow[]> {
  const { rows } = await db.query<EndpointRow>(
    `${WITH_SUBSCRIBER}
      WHERE e.subscriber_id = ANY($2::text[]) AND e.environment_id = $1 AND e.channel = $3 AND e.context_keys = $4
      ORDER BY e.id`,
    [environmentId, subscriberIds, channel, contextKeys],
  );
  return rows;
}
