import type { variablesV1 } from "@notify/proto";
import { z } from "zod";
import { iso, isoDateResponse } from "./common.js";
import { flag, list, text } from "./workflows.js";

// Requests (the key's shape, the values' lengths and whose they may be are the service's rules)

export const variableKeyParam = z.object({ variableKey: text("variableKey", 256) });

const values = list("values", z.object({ _environmentId: text("_environmentId", 64), value: z.string({ error: "value must be a string" }) }), 50);

/** POST /v1/environment-variables (CreateEnvironmentVariableRequestDto). */
export const createVariableBody = z.object({
  key: z.string({ error: "key must be a string" }),
  type: z.string({ error: "type must be a string" }).optional(),
  isSecret: flag("isSecret").optional(),
  values: values.optional(),
});

/** PATCH /v1/environment-variables/{variableKey} (UpdateEnvironmentVariableRequestDto). */
export const updateVariableBody = z
  .object({
    key: z.string({ error: "key must be a string" }).optional(),
    type: z.string({ error: "type must be a string" }).optional(),
    isSecret: flag("isSecret").optional(),
    values: values.optional(),
  })
  .refine((body) => Object.values(body).some((field) => field !== undefined), "At least one field must be provided to update");

/** GET /v1/environment-variables: keys containing `search`, in any case. */
export const listVariablesQuery = z.object({ search: text("search", 256).optional() });

const valuesOf = (given: z.output<typeof values> | undefined) => (given ?? []).map((entry) => ({ environmentId: entry._environmentId, value: entry.value }));

export function createVariableRequestOf(body: z.output<typeof createVariableBody>) {
  return { key: body.key, isSecret: body.isSecret ?? false, values: valuesOf(body.values), ...(body.type === undefined ? {} : { type: body.type }) };
}

export function updateVariableRequestOf(key: string, body: z.output<typeof updateVariableBody>) {
  return {
    key,
    values: valuesOf(body.values),
    ...(body.key === undefined ? {} : { newKey: body.key }),
    ...(body.type === undefined ? {} : { type: body.type }),
    ...(body.isSecret === undefined ? {} : { isSecret: body.isSecret }),
  };
}

// Responses

/** A variable as Novu answers one (EnvironmentVariableResponseDto): the caller environment's value only, a secret's masked. */
export function variableToJson(variable: variablesV1.EnvironmentVariable) {
  return {
    _id: variable.id,
    _organizationId: variable.organizationId,
    key: variable.key,
    type: variable.type,
    isSecret: variable.isSecret,
    values: variable.values.map((entry) => ({ _environmentId: entry.environmentId, value: entry.value })),
    createdAt: iso(variable.createdAt),
    updatedAt: iso(variable.updatedAt),
  };
}

export const variableResponse = z
  .object({
    _id: z.string(),
    _organizationId: z.string(),
    key: z.string(),
    type: z.literal("string"),
    isSecret: z.boolean(),
    values: z.array(z.object({ _environmentId: z.string(), value: z.string() })),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "EnvironmentVariable" });

/** What a preview renders `env` with: the environment's values as its answers show them (a secret's masked). */
export const previewEnvironment = (reply: variablesV1.ListEnvironmentVariablesResponse): Record<string, string> =>
  Object.fromEntries(reply.variables.flatMap((variable) => variable.values.map((entry) => [variable.key, entry.value] as const)));
