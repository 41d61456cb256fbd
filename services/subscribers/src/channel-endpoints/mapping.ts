import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { subscribersV1 } from "@notify/proto";
import type { EndpointRow } from "./store.js";

export function endpointFromRow(row: EndpointRow): subscribersV1.ChannelEndpoint {
  return create(subscribersV1.ChannelEndpointSchema, {
    id: row.id,
    identifier: row.identifier,
    internalSubscriberId: row.subscriber_id,
    subscriberId: row.external_subscriber_id,
    integrationIdentifier: row.integration_identifier,
    providerId: row.provider_id,
    channel: row.channel,
    ...(row.connection_identifier !== null ? { connectionIdentifier: row.connection_identifier } : {}),
    contextKeys: row.context_keys,
    type: row.type,
    endpoint: row.endpoint as JsonObject,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}
