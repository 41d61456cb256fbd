import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { workflowsV1 } from "@notify/proto";
import { channelPreferences } from "../workflows/mapping.js";
import type { WorkflowOverrideRow } from "./store.js";

export function workflowOverrideFromRow(row: WorkflowOverrideRow): workflowsV1.WorkflowOverride {
  return create(workflowsV1.WorkflowOverrideSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    workflowId: row.workflow_id,
    tenantId: row.tenant_id,
    active: row.active,
    preferenceSettings: channelPreferences(row.preference_settings),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}
