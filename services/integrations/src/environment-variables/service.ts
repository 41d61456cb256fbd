import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { variablesV1 } from "@notify/proto";
import {
  Code,
  ConnectError,
  alreadyExists,
  failedPrecondition,
  isUniqueViolation,
  notFound,
  objectId,
  scopeOf,
  withTransaction,
  type Pool,
  type Queryable,
  type Scope,
} from "@notify/runtime";
import type { SecretBox } from "../secrets.js";
import { Checks } from "../validation.js";
import { SECRET_MASK, openValue, sealValue, variableFromRow } from "./mapping.js";
import * as store from "./store.js";

/** The most variables an organization holds, as Novu allows. */
export const MAX_VARIABLES = 10;
const MAX_KEY = 256;
const MAX_VALUE = 256;
const KEY_SHAPE = /^[A-Za-z][A-Za-z0-9_]*$/;
const TYPES = ["string"];

export interface EnvironmentVariableServiceDeps {
  pool: Pool;
  secrets: SecretBox;
}

const variableNotFound = (key: string) => notFound(`Environment variable with key "${key}" not found`);

const otherEnvironment = () =>
  new ConnectError(
    "An API key is scoped to its environment and cannot target a different `_environmentId`. Use a key of the target environment.",
    Code.PermissionDenied,
  );

/** Checks a variable's key and type, and the values a request sets: only the caller environment's, never the mask. */
function checkRequest(
  scope: Scope,
  fields: { key?: string | undefined; type?: string | undefined; values: readonly variablesV1.EnvironmentValue[] },
  rules: { maskRefusal: string; distinctEnvironments: boolean },
): void {
  const checks = new Checks();
  const { key, type } = fields;
  if (key !== undefined && (key.length > MAX_KEY || !KEY_SHAPE.test(key))) {
    checks.fail("key", `Key must start with a letter and contain only letters, digits, and underscores, in at most ${MAX_KEY} characters`, key);
  }
  if (type !== undefined && !TYPES.includes(type)) checks.fail("type", `type must be one of: ${TYPES.join(", ")}`, type);
  for (const [index, { value }] of fields.values.entries()) {
    if (value.length > MAX_VALUE) checks.fail(`values[${index}].value`, `value must be at most ${MAX_VALUE} characters`, value);
  }
  const environments = fields.values.map((entry) => entry.environmentId);
  if (rules.distinctEnvironments && new Set(environments).size < environments.length)
    checks.fail("values", "Duplicate _environmentId in values", environments.join(", "));
  checks.throwIfAny();
  if (fields.values.some((entry) => entry.environmentId !== scope.environmentId)) throw otherEnvironment();
  if (fields.values.some((entry) => entry.value === SECRET_MASK)) throw failedPrecondition(rules.maskRefusal);
}

/** The value a request sets for the caller's environment: the last one given (an update may repeat it). */
const valueSet = (values: readonly variablesV1.EnvironmentValue[]) => values.at(-1)?.value;

export function createEnvironmentVariableService({
  pool,
  secrets,
}: EnvironmentVariableServiceDeps): ServiceImpl<typeof variablesV1.EnvironmentVariableService> {
  async function existing(scope: Scope, key: string, db: Queryable = pool): Promise<store.VariableRow> {
    const row = await store.selectVariable(db, scope.organizationId, scope.environmentId, key);
    if (!row) throw variableNotFound(key);
    return row;
  }

  return {
    async createEnvironmentVariable(request, context) {
      const scope = scopeOf(context);
      checkRequest(scope, request, {
        maskRefusal: "Submitted value matches the secret mask placeholder; provide the real value or omit the entry.",
        distinctEnvironments: true,
      });
      const id = objectId();
      try {
        const row = await withTransaction(pool, async (tx) => {
          await store.lockOrganization(tx, scope.organizationId);
          if ((await store.countVariables(tx, scope.organizationId)) >= MAX_VARIABLES) {
            throw failedPrecondition(`Environment variables limit exceeded. Maximum allowed variables is ${MAX_VARIABLES}.`);
          }
          await store.insertVariable(tx, {
            id,
            organizationId: scope.organizationId,
            key: request.key,
            type: request.type ?? "string",
            isSecret: request.isSecret,
          });
          const value = valueSet(request.values);
          if (value !== undefined) {
            await store.upsertValue(tx, scope.environmentId, {
              organizationId: scope.organizationId,
              variableId: id,
              value: sealValue(secrets, id, scope.environmentId, value),
            });
          }
          return existing(scope, request.key, tx);
        });
        return variableFromRow(row, scope.environmentId, secrets);
      } catch (error) {
        if (isUniqueViolation(error)) throw alreadyExists(`Environment variable with key "${request.key}" already exists`);
        throw error;
      }
    },

    async getEnvironmentVariable(request, context) {
      const scope = scopeOf(context);
      return variableFromRow(await existing(scope, request.key), scope.environmentId, secrets);
    },

    async listEnvironmentVariables(request, context) {
      const scope = scopeOf(context);
      const rows = await store.selectVariables(pool, scope.organizationId, scope.environmentId, request.search, MAX_VARIABLES);
      return create(variablesV1.ListEnvironmentVariablesResponseSchema, {
        variables: rows.map((row) => variableFromRow(row, scope.environmentId, secrets)),
      });
    },

    async updateEnvironmentVariable(request, context) {
      const scope = scopeOf(context);
      checkRequest(
        scope,
        { type: request.type, values: request.values },
        {
          maskRefusal: "Submitted value matches the secret mask placeholder; provide the real value or omit the entry to keep the existing one.",
          distinctEnvironments: false,
        },
      );
      const row = await withTransaction(pool, async (tx) => {
        // A delete of the variable's last value must not remove the variable under this write.
        await store.lockOrganization(tx, scope.organizationId);
        const current = await existing(scope, request.key, tx);
        const changesShared =
          (request.newKey !== undefined && request.newKey !== current.key) ||
          (request.type !== undefined && request.type !== current.type) ||
          (request.isSecret !== undefined && request.isSecret !== current.is_secret);
        if (changesShared) {
          throw new ConnectError(
            "An API key is scoped to its environment and cannot update shared environment variable metadata (key, type, isSecret). Only its environment's value can be updated.",
            Code.PermissionDenied,
          );
        }
        const value = valueSet(request.values);
        if (value === undefined) return current;
        await store.upsertValue(tx, scope.environmentId, {
          organizationId: scope.organizationId,
          variableId: current.id,
          value: sealValue(secrets, current.id, scope.environmentId, value),
        });
        return existing(scope, request.key, tx);
      });
      return variableFromRow(row, scope.environmentId, secrets);
    },

    async deleteEnvironmentVariable(request, context) {
      const scope = scopeOf(context);
      await withTransaction(pool, async (tx) => {
        await store.lockOrganization(tx, scope.organizationId);
        const current = await existing(scope, request.key, tx);
        const hadValue = await store.deleteValue(tx, scope.environmentId, current.id);
        // A variable no environment has a value of goes too: nothing else could ever delete it.
        const deleted = await store.deleteVariableWithoutValues(tx, scope.organizationId, current.id);
        if (!hadValue && !deleted) throw notFound(`Environment variable with key "${request.key}" has no value for the authenticated environment`);
      });
      return create(variablesV1.DeleteEnvironmentVariableResponseSchema, {});
    },

    async resolveEnvironmentVariables(_request, context) {
      const scope = scopeOf(context);
      const rows = await store.selectEnvironmentValues(pool, scope.organizationId, scope.environmentId);
      return create(variablesV1.ResolveEnvironmentVariablesResponseSchema, {
        values: Object.fromEntries(rows.map((row) => [row.key, openValue(secrets, row.id, scope.environmentId, row.value)])),
      });
    },
  };
}
