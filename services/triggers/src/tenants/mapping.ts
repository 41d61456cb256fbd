import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { tenantsV1 } from "@notify/proto";
import type { TenantRow } from "./store.js";

export function tenantFromRow(row: TenantRow): tenantsV1.Tenant {
  return create(tenantsV1.TenantSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    identifier: row.identifier,
    ...(row.name === null ? {} : { name: row.name }),
    ...(row.data === null ? {} : { data: row.data as JsonObject }),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}
