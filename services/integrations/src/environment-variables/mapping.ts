import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { variablesV1 } from "@notify/proto";
import type { SecretBox } from "../secrets.js";
import type { VariableRow } from "./store.js";

/** What a secret's value reads as in every answer (Novu's mask). */
export const SECRET_MASK = "••••••••";

/** A value is sealed with its variable and environment, so it opens in that row only. */
const sealContext = (variableId: string, environmentId: string) => `${variableId}/${environmentId}`;

export const sealValue = (secrets: SecretBox, variableId: string, environmentId: string, value: string): Buffer =>
  secrets.seal({ value }, sealContext(variableId, environmentId));

export function openValue(secrets: SecretBox, variableId: string, environmentId: string, sealed: Buffer): string {
  const { value } = secrets.open(sealed, sealContext(variableId, environmentId));
  return typeof value === "string" ? value : "";
}

/** A variable as the caller's environment sees it: its own value only, a secret's masked. */
export function variableFromRow(row: VariableRow, environmentId: string, secrets: SecretBox): variablesV1.EnvironmentVariable {
  const values = row.value === null ? [] : [{ environmentId, value: row.is_secret ? SECRET_MASK : openValue(secrets, row.id, environmentId, row.value) }];
  return create(variablesV1.EnvironmentVariableSchema, {
    id: row.id,
    organizationId: row.organization_id,
    key: row.key,
    type: row.type,
    isSecret: row.is_secret,
    values,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}
