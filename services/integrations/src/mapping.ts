import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { integrationsV1 } from "@notify/proto";
import type { SecretBox } from "./secrets.js";
import type { IntegrationFields, IntegrationRow } from "./store.js";

const { ConfigurationsSchema, IntegrationCredentialsSchema, IntegrationSchema, StepFilterSchema } = integrationsV1;

/** Credential fields that are sealed at rest and withheld from other environments. */
export const SECRET_CREDENTIAL_FIELDS = [
  "apiKey",
  "apiToken",
  "secretKey",
  "token",
  "password",
  "serviceAccount",
  "accessKey",
  "authenticationTokenKey",
] as const;

/** Configuration fields treated the same way. */
export const SECRET_CONFIGURATION_FIELDS = ["inboundWebhookSigningKey"] as const;

/** The sealed half: the secret fields of the credentials and of the configurations. */
interface SecretParts {
  credentials: JsonObject;
  configurations: JsonObject;
}

const NO_SECRETS: SecretParts = { credentials: {}, configurations: {} };

/** Splits a JSON object into the listed keys and the rest. */
function split(object: JsonObject, secretKeys: readonly string[]): [open: JsonObject, secret: JsonObject] {
  const open: JsonObject = {};
  const secret: JsonObject = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === undefined) continue;
    (secretKeys.includes(key) ? secret : open)[key] = value;
  }
  return [open, secret];
}

/** The credential, configuration and secrets columns of an integration, its secrets sealed to `id`. */
export function credentialColumns(
  id: string,
  credentials: integrationsV1.IntegrationCredentials | undefined,
  configurations: integrationsV1.Configurations | undefined,
  box: SecretBox,
): Pick<IntegrationFields, "credentials" | "configurations" | "secrets"> {
  const [openCredentials, secretCredentials] = split(
    credentials ? (toJson(IntegrationCredentialsSchema, credentials) as JsonObject) : {},
    SECRET_CREDENTIAL_FIELDS,
  );
  const [openConfigurations, secretConfigurations] = split(
    configurations ? (toJson(ConfigurationsSchema, configurations) as JsonObject) : {},
    SECRET_CONFIGURATION_FIELDS,
  );
  const hasSecrets = Object.keys(secretCredentials).length + Object.keys(secretConfigurations).length > 0;
  const sealed: SecretParts = { credentials: secretCredentials, configurations: secretConfigurations };
  return {
    credentials: openCredentials,
    configurations: openConfigurations,
    secrets: hasSecrets ? box.seal(sealed as unknown as JsonObject, id) : null,
  };
}

export const conditionsToJson = (conditions: readonly integrationsV1.StepFilter[]): JsonValue[] => conditions.map((filter) => toJson(StepFilterSchema, filter));

/** The fields a write starts from: what the row holds now. */
export function fieldsOf(row: IntegrationRow): IntegrationFields {
  return {
    name: row.name,
    identifier: row.identifier,
    credentials: row.credentials,
    configurations: row.configurations,
    secrets: row.secrets,
    conditions: row.conditions,
    active: row.active,
    is_primary: row.is_primary,
    priority: row.priority,
  };
}

/**
 * The integration with its secrets opened by `box`; without a box (another environment's
 * integration) the secret fields are left out.
 */
export function integrationFromRow(row: IntegrationRow, box: SecretBox | undefined): integrationsV1.Integration {
  const secrets = row.secrets && box ? (box.open(row.secrets, row.id) as unknown as SecretParts) : NO_SECRETS;
  const options = { ignoreUnknownFields: true };
  return create(IntegrationSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    name: row.name,
    identifier: row.identifier,
    providerId: row.provider_id,
    channel: row.channel,
    credentials: fromJson(IntegrationCredentialsSchema, { ...row.credentials, ...secrets.credentials }, options),
    configurations: fromJson(ConfigurationsSchema, { ...row.configurations, ...secrets.configurations }, options),
    active: row.active,
    deleted: row.deleted,
    ...(row.deleted_at ? { deletedAt: timestampFromDate(row.deleted_at) } : {}),
    ...(row.deleted_by !== null ? { deletedBy: row.deleted_by } : {}),
    primary: row.is_primary,
    priority: row.priority,
    conditions: row.conditions.map((filter) => fromJson(StepFilterSchema, filter, options)),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}
