import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { type commonV1, layoutsV1 } from "@notify/proto";
import type { LegacyLayoutRow, StoredVariable } from "./store.js";

export function legacyLayoutFromRow(row: LegacyLayoutRow): layoutsV1.LegacyLayout {
  return create(layoutsV1.LegacyLayoutSchema, {
    id: row.id,
    identifier: row.identifier,
    name: row.name,
    description: row.description,
    content: row.content,
    variables: row.variables.map((variable) => ({
      name: variable.name,
      type: variable.type,
      required: variable.required,
      ...(variable.defaultValue !== undefined ? { defaultValue: fromJson(ValueSchema, variable.defaultValue as JsonValue) } : {}),
    })),
    isDefault: row.is_default,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

export const storedVariables = (variables: readonly commonV1.TemplateVariable[]): StoredVariable[] =>
  variables.map((variable) => ({
    name: variable.name,
    type: variable.type || "String",
    required: variable.required,
    ...(variable.defaultValue !== undefined ? { defaultValue: toJson(ValueSchema, variable.defaultValue) } : {}),
  }));
