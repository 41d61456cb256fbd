import { randomBytes } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { commonV1, type subscribersV1 } from "@notify/proto";
import {
  alreadyExists,
  boundBatch,
  checkContextKeys,
  keysetPage,
  keysetRead,
  notFound,
  objectId,
  scopeOf,
  subscriberNotFound,
  type Pool,
} from "@notify/runtime";
import * as subscriberStore from "../store.js";
import { endpointFromRow } from "./mapping.js";
import * as store from "./store.js";

/** Counts stop here, as Novu's do. */
export const ENDPOINT_COUNT_CAP = 50_000;
/** Subscribers per ListRecipientEndpoints call: one fan-out page. */
export const MAX_RECIPIENT_IDS = 1000;

const endpointNotFound = (identifier: string) => notFound(`Channel endpoint with identifier '${identifier}' not found`);

/** An identifier for an endpoint made without one, in Novu's form. */
const generatedIdentifier = () => `chendp_${randomBytes(9).toString("base64url")}`;

type EndpointHandlers = Pick<
  ServiceImpl<typeof subscribersV1.SubscriberService>,
  "createChannelEndpoint" | "getChannelEndpoint" | "listChannelEndpoints" | "updateChannelEndpoint" | "deleteChannelEndpoint" | "listRecipientEndpoints"
>;

/**
 * Channel endpoints. The gateway checks the endpoint data against its type and resolves the
 * integration and the contexts; this keeps them, per environment, with their subscriber.
 */
export function createChannelEndpointHandlers(deps: { pool: Pool }): EndpointHandlers {
  const { pool } = deps;
  return {
    async createChannelEndpoint(request, context) {
      const scope = scopeOf(context);
      const subscriber = await subscriberStore.selectSubscriber(pool, scope.environmentId, request.subscriberId);
      if (!subscriber) throw subscriberNotFound(request.subscriberId);
      const identifier = request.identifier || generatedIdentifier();
      const id = await store.insertEndpoint(pool, scope.environmentId, {
        id: objectId(),
        organizationId: scope.organizationId,
        identifier,
        subscriberId: subscriber.id,
        integrationIdentifier: request.integrationIdentifier,
        providerId: request.providerId,
        channel: request.channel,
        connectionIdentifier: request.connectionIdentifier ?? null,
        contextKeys: checkContextKeys(request.contextKeys),
        type: request.type,
        endpoint: request.endpoint ?? {},
      });
      if (!id) throw alreadyExists(`Channel endpoint with identifier '${identifier}' already exists`);
      return endpointFromRow((await store.selectEndpoint(pool, scope.environmentId, identifier))!);
    },

    async getChannelEndpoint(request, context) {
      const row = await store.selectEndpoint(pool, scopeOf(context).environmentId, request.identifier);
      if (!row) throw endpointNotFound(request.identifier);
      return endpointFromRow(row);
    },

    async listChannelEndpoints(request, context) {
      const scope = scopeOf(context);
      const read = keysetRead({ ...request, descending: request.direction !== commonV1.SortDirection.ASC });
      const filters: store.EndpointFilters = {
        subscriberId: request.subscriberId,
        channel: request.channel,
        providerId: request.providerId,
        integrationIdentifier: request.integrationIdentifier,
        connectionIdentifier: request.connectionIdentifier,
        ...(request.filterContextKeys ? { contextKeys: checkContextKeys(request.contextKeys) } : {}),
      };
      const [fetched, totalCount] = await Promise.all([
        store.selectEndpointPage(pool, scope.environmentId, { ...read, byUpdatedAt: request.byUpdatedAt, filters }),
        store.countEndpoints(pool, scope.environmentId, ENDPOINT_COUNT_CAP, filters),
      ]);
      const { page, cursors } = keysetPage(fetched, read.limit, request);
      return { endpoints: page.map(endpointFromRow), ...cursors, totalCount, totalCountCapped: totalCount >= ENDPOINT_COUNT_CAP };
    },

    async updateChannelEndpoint(request, context) {
      const scope = scopeOf(context);
      if (!(await store.updateEndpoint(pool, scope.environmentId, request.identifier, request.endpoint ?? {}))) {
        throw endpointNotFound(request.identifier);
      }
      return endpointFromRow((await store.selectEndpoint(pool, scope.environmentId, request.identifier))!);
    },

    async deleteChannelEndpoint(request, context) {
      if (!(await store.deleteEndpoint(pool, scopeOf(context).environmentId, request.identifier))) throw endpointNotFound(request.identifier);
      return {};
    },

    async listRecipientEndpoints(request, context) {
      boundBatch("internalSubscriberIds", request.internalSubscriberIds.length, MAX_RECIPIENT_IDS);
      const rows = await store.selectRecipientEndpoints(
        pool,
        scopeOf(context).environmentId,
        request.internalSubscriberIds,
        request.channel,
        checkContextKeys(request.contextKeys),
      );
      return { endpoints: rows.map(endpointFromRow) };
    },
  };
}
