import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { tenantsV1 } from "@notify/proto";
import {
  alreadyExists,
  invalidArgument,
  invalidField,
  isUniqueViolation,
  notFound,
  objectId,
  readOffsetPage,
  scopeOf,
  type FieldErrors,
  pageLimit,
} from "@notify/runtime";
import type { ServiceDeps } from "../routes.js";
import { tenantFromRow } from "./mapping.js";
import * as store from "./store.js";

/** Counts stop here: an exact count over millions of rows would cost more than the page itself. */
export const COUNT_CAP = 10_000;
export const MAX_PAGE_SIZE = 100;
export const MAX_BATCH = 1000;
const MAX_TEXT = 255;

const tenantNotFound = (identifier: string, environmentId: string) =>
  notFound(`Tenant with identifier: ${identifier} does not exist under environment ${environmentId}`);
const tenantExists = (identifier: string, environmentId: string) =>
  alreadyExists(`Tenant with identifier: ${identifier} already exists under environment ${environmentId}`);

/** Length rules the table enforces too; checked here so a bad value is a 422, never a 500. */
function checkTenantWrite(fields: { identifier?: string | undefined; name?: string | undefined }): void {
  const errors: FieldErrors = {};
  if (fields.identifier !== undefined && (fields.identifier.length === 0 || fields.identifier.length > MAX_TEXT)) {
    errors.identifier = { messages: [`identifier must be between 1 and ${MAX_TEXT} characters`], value: fields.identifier };
  }
  if (fields.name !== undefined && fields.name.length > MAX_TEXT) {
    errors.name = { messages: [`name must be at most ${MAX_TEXT} characters`], value: fields.name };
  }
  if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
}

/** JSON with object keys sorted: jsonb does not keep the caller's key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, child]) => `${JSON.stringify(key)}:${canonical(child)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

const sameData = (a: unknown, b: unknown) => canonical(a) === canonical(b);

export function createTenantService({ pool }: ServiceDeps): ServiceImpl<typeof tenantsV1.TenantService> {
  return {
    async createTenant(request, context) {
      const scope = scopeOf(context);
      checkTenantWrite(request);
      const inserted = await store.insertTenant(pool, scope.environmentId, {
        id: objectId(),
        organizationId: scope.organizationId,
        identifier: request.identifier,
        name: request.name,
        data: request.data ?? null,
      });
      if (!inserted) throw tenantExists(request.identifier, scope.environmentId);
      return tenantFromRow(inserted);
    },

    async getTenant(request, context) {
      const scope = scopeOf(context);
      const row = await store.selectTenant(pool, scope.environmentId, request.identifier);
      if (!row) throw tenantNotFound(request.identifier, scope.environmentId);
      return tenantFromRow(row);
    },

    async listTenants(request, context) {
      const scope = scopeOf(context);
      const limit = pageLimit(request.limit, { fallback: 10, max: MAX_PAGE_SIZE });
      const { rows, ...page } = await readOffsetPage(
        { page: request.page, limit, countCap: COUNT_CAP },
        (offset) => store.selectTenantPage(pool, scope.environmentId, offset, limit),
        (cap) => store.countTenants(pool, scope.environmentId, cap),
      );
      return { tenants: rows.map(tenantFromRow), ...page };
    },

    async updateTenant(request, context) {
      const scope = scopeOf(context);
      checkTenantWrite({ identifier: request.newIdentifier, name: request.name });
      let row: store.TenantRow | undefined;
      try {
        row = await store.updateTenant(pool, scope.environmentId, request.identifier, {
          identifier: request.newIdentifier,
          name: request.name,
          data: request.data,
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw tenantExists(request.newIdentifier ?? request.identifier, scope.environmentId);
        throw error;
      }
      if (!row) throw tenantNotFound(request.identifier, scope.environmentId);
      return tenantFromRow(row);
    },

    async deleteTenant(request, context) {
      const scope = scopeOf(context);
      const id = await store.deleteTenant(pool, scope.environmentId, request.identifier);
      if (!id) throw tenantNotFound(request.identifier, scope.environmentId);
      return { id };
    },

    async batchGetTenants(request, context) {
      const scope = scopeOf(context);
      if (request.identifiers.length > MAX_BATCH) {
        throw invalidField("identifiers", `at most ${MAX_BATCH} identifiers per call`, request.identifiers.length);
      }
      if (request.identifiers.length === 0) return { tenants: [] };
      const rows = await store.selectTenantsByIdentifiers(pool, scope.environmentId, request.identifiers);
      return { tenants: rows.map(tenantFromRow) };
    },

    async upsertTenant(request, context) {
      const scope = scopeOf(context);
      checkTenantWrite(request);
      const data = request.data as JsonObject | undefined;
      // Two rounds cover one concurrent create (then we update it) or delete (then we create it).
      for (let round = 0; round < 2; round++) {
        const existing = await store.selectTenant(pool, scope.environmentId, request.identifier);
        if (!existing) {
          const inserted = await store.insertTenant(pool, scope.environmentId, {
            id: objectId(),
            organizationId: scope.organizationId,
            identifier: request.identifier,
            name: request.name ?? null,
            data: data ?? null,
          });
          if (inserted) return { tenant: tenantFromRow(inserted), created: true };
          continue;
        }
        const nameChanged = request.name !== undefined && request.name !== existing.name;
        const dataChanged = data !== undefined && !sameData(data, existing.data);
        // Triggers carry the tenant object on every call: write only when something differs.
        if (!nameChanged && !dataChanged) return { tenant: tenantFromRow(existing), created: false };
        const updated = await store.updateTenant(pool, scope.environmentId, request.identifier, {
          name: nameChanged ? request.name : undefined,
          data: dataChanged ? data : undefined,
        });
        if (updated) return { tenant: tenantFromRow(updated), created: false };
      }
      throw new ConnectError("the tenant changed concurrently, retry", Code.Aborted);
    },
  };
}
