import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { contextsV1 } from "@notify/proto";
import type { ContextRow } from "../triggers/store.js";

export function contextFromRow(row: ContextRow): contextsV1.Context {
  return create(contextsV1.ContextSchema, {
    type: row.type,
    id: row.id,
    data: row.data,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}
