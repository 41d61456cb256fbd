import type { JsonValue } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { contextsV1 } from "@notify/proto";
import { alreadyExists, contextKeyOf, invalidField, keysetPage, notFound, scopeOf } from "@notify/runtime";
import type { ServiceDeps } from "../routes.js";
import { ensureContexts } from "../triggers/store.js";
import { contextFromRow } from "./mapping.js";
import { contextRefusal, contextsRefusal, type ContextRefusal } from "./rules.js";
import * as store from "./store.js";

/** Counts stop here, where Novu's do: an exact count over millions of rows would cost more than the page itself. */
export const COUNT_CAP = 50_000;
export const MAX_PAGE_SIZE = 100;

const contextNotFound = (type: string, id: string, environmentId: string) =>
  notFound(`Context with id '${id}' and type '${type}' not found in environment ${environmentId}`);
const contextExists = (type: string, id: string) => alreadyExists(`Context with type '${type}' and id '${id}' already exists`);

function refuse(refusal: ContextRefusal | undefined): void {
  if (refusal) throw invalidField(refusal.field, refusal.message, refusal.value as JsonValue);
}

/** A list cursor: a context's position in creation order, which clients must not read into. */
const cursorOf = (position: number) => Buffer.from(String(position)).toString("base64url");

/** The position a cursor names; anything but a cursor this service gave out is refused. */
function positionOf(field: "after" | "before", cursor: string): number {
  const position = Buffer.from(cursor, "base64url").toString();
  // At most 15 digits: a number that stays exact, and a bigint Postgres can compare.
  if (!/^[1-9]\d{0,14}$/.test(position)) throw invalidField(field, `${field} must be a cursor returned as next or previous`, cursor);
  return Number(position);
}

export function createContextService({ pool }: ServiceDeps): ServiceImpl<typeof contextsV1.ContextService> {
  return {
    async createContext(request, context) {
      const scope = scopeOf(context);
      refuse(contextRefusal("", request));
      const row = await store.insertContext(pool, scope.environmentId, {
        organizationId: scope.organizationId,
        type: request.type,
        id: request.id,
        data: JSON.stringify(request.data ?? {}),
      });
      if (!row) throw contextExists(request.type, request.id);
      return contextFromRow(row);
    },

    async getContext(request, context) {
      const scope = scopeOf(context);
      const row = await store.selectContext(pool, scope.environmentId, request.type, request.id);
      if (!row) throw contextNotFound(request.type, request.id, scope.environmentId);
      return contextFromRow(row);
    },

    async listContexts(request, context) {
      const scope = scopeOf(context);
      const limit = request.limit === 0 ? 10 : request.limit;
      if (limit < 1 || limit > MAX_PAGE_SIZE) throw invalidField("limit", `limit must be between 1 and ${MAX_PAGE_SIZE}`, request.limit);
      if (request.after !== undefined && request.before !== undefined) {
        throw invalidField("after", "after and before cannot be used together", request.after);
      }
      const cursor =
        request.after !== undefined ? positionOf("after", request.after) : request.before !== undefined ? positionOf("before", request.before) : undefined;
      const backwards = request.before !== undefined;
      const filter = { id: request.id ?? null, search: request.search ?? null };
      const [fetched, totalCount] = await Promise.all([
        store.selectContextPage(pool, scope.environmentId, filter, {
          cursor,
          towardsLower: request.descending !== backwards,
          inclusive: request.includeCursor,
          limit,
        }),
        store.countContexts(pool, scope.environmentId, filter, COUNT_CAP),
      ]);
      const { page, cursors } = keysetPage(
        fetched.map((row) => ({ id: cursorOf(row.position), row })),
        limit,
        request,
      );
      return { contexts: page.map(({ row }) => contextFromRow(row)), ...cursors, totalCount, totalCountCapped: totalCount >= COUNT_CAP };
    },

    async updateContext(request, context) {
      const scope = scopeOf(context);
      if (request.data === undefined) throw invalidField("data", "data must be an object");
      refuse(contextRefusal("", request));
      const row = await store.updateContextData(pool, scope.environmentId, request.type, request.id, JSON.stringify(request.data));
      if (!row) throw contextNotFound(request.type, request.id, scope.environmentId);
      return contextFromRow(row);
    },

    async deleteContext(request, context) {
      const scope = scopeOf(context);
      if (!(await store.deleteContext(pool, scope.environmentId, request.type, request.id))) {
        throw contextNotFound(request.type, request.id, scope.environmentId);
      }
      return {};
    },

    async ensureContexts(request, context) {
      const scope = scopeOf(context);
      refuse(contextsRefusal(request.contexts));
      if (request.contexts.length === 0) return { contexts: [] };
      const rows = await ensureContexts(
        pool,
        scope.environmentId,
        scope.organizationId,
        request.contexts.map(({ type, id, data }) => ({ type, id, data: data ? JSON.stringify(data) : null })),
      );
      // The statement answers the contexts it created first; the reply keeps the order asked.
      const byKey = new Map(rows.map((row) => [contextKeyOf(row), row]));
      return { contexts: request.contexts.map((input) => contextFromRow(byKey.get(contextKeyOf(input))!)) };
    },
  };
}
