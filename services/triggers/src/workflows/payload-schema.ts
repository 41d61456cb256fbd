import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isDeepStrictEqual } from "node:util";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import formats from "ajv-formats";

/**
 * One validator for every payload schema, as Novu checks them (all errors, declared defaults
 * filled into the payload, `format`s such as email and date-time enforced). Schemas are compiled
 * once per workflow version and removed from ajv's own cache at once, so workflows that come and
 * go leave nothing behind in it.
 */
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
// The package is CommonJS: its plugin is its default export's own default.
formats.default(ajv);

const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: JsonObject): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

/** Why `schema` is not a JSON schema ajv can check payloads with; undefined when it is one. */
export function payloadSchemaProblem(schema: JsonObject): string | undefined {
  try {
    compile(schema);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export interface PayloadError {
  field: string;
  message: string;
  value: JsonValue;
  schemaPath: string;
}

/**
 * The schema Novu gives a workflow created without one: any object. A payload always is one, so
 * payloads are not run through it.
 */
export const ANY_PAYLOAD_SCHEMA: JsonObject = { type: "object", additionalProperties: true, properties: {} };

/** The payload's failures against `schema` (its defaults filled in when none), compiled once per schema object. */
export function payloadErrors(schema: JsonObject, payload: JsonObject): PayloadError[] {
  if (isDeepStrictEqual(schema, ANY_PAYLOAD_SCHEMA)) return [];
  let validate = compiled.get(schema);
  if (!validate) {
    validate = compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(payload)) return [];
  return (validate.errors ?? []).map((error) => payloadError(error, payload));
}

function payloadError(error: ErrorObject, payload: JsonObject): PayloadError {
  const path = error.instancePath.split("/").slice(1);
  const missing = typeof error.params["missingProperty"] === "string" ? [error.params["missingProperty"]] : [];
  const field = [...path, ...missing].join(".") || "root";
  return { field, message: error.message ?? "is invalid", value: valueAt(payload, path), schemaPath: error.schemaPath };
}

function valueAt(payload: JsonObject, path: string[]): JsonValue {
  let value: JsonValue | undefined = payload;
  for (const key of path) {
    value = value !== null && typeof value === "object" ? (value as Record<string, JsonValue>)[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
  }
  return value ?? null;
}

/** Novu's message: every failure as `field: message`. */
export const payloadErrorMessage = (errors: readonly PayloadError[]) =>
  `Payload validation failed: ${errors.map((error) => `${error.field}: ${error.message}`).join("; ")}`;
