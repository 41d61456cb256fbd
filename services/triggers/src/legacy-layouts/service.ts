import type { ServiceImpl } from "@connectrpc/connect";
import { layoutsV1, workflowsV1 } from "@notify/proto";
import {
  alreadyExists,
  failedPrecondition,
  invalidField,
  isUniqueViolation,
  objectId,
  readOffsetPage,
  scopeOf,
  StepType,
  withTransaction,
  type Queryable,
} from "@notify/runtime";
import { checkText } from "../layouts/rules.js";
import { layoutNotFound } from "../layouts/service.js";
import type { ServiceDeps } from "../routes.js";
import { legacyLayoutFromRow, storedVariables } from "./mapping.js";
import { contentProblem, contentVariables } from "./rules.js";
import * as store from "./store.js";

export const MAX_PAGE_SIZE = 1000;
const COUNT_CAP = 10_000;
const MAX_TEXT = 255;
const MAX_DESCRIPTION = 1000;

const ORDER_COLUMNS: Record<layoutsV1.LegacyLayoutOrder, store.LegacyOrderColumn> = {
  [layoutsV1.LegacyLayoutOrder.UNSPECIFIED]: "created_at",
  [layoutsV1.LegacyLayoutOrder.CREATED_AT]: "created_at",
  [layoutsV1.LegacyLayoutOrder.UPDATED_AT]: "updated_at",
  [layoutsV1.LegacyLayoutOrder.NAME]: "name",
  [layoutsV1.LegacyLayoutOrder.IDENTIFIER]: "identifier",
};

const identifierTaken = (identifier: string, environmentId: string) =>
  alreadyExists(`Layout with identifier: ${identifier} already exists under environment ${environmentId}`);

function checkContent(content: string): void {
  const problem = contentProblem(content);
  if (problem) throw invalidField("content", problem, content.slice(0, 200));
}

function checkDescription(description: string): void {
  if (description.length > MAX_DESCRIPTION) throw invalidField("description", `description must be at most ${MAX_DESCRIPTION} characters`, description.length);
}

export function createLegacyLayoutService({ pool }: ServiceDeps): ServiceImpl<typeof layoutsV1.LegacyLayoutService> {
  async function existing(db: Queryable, environmentId: string, key: string, lock = false): Promise<store.LegacyLayoutRow> {
    const row = await store.selectLegacyLayout(db, environmentId, key, lock);
    if (!row) throw layoutNotFound(key, environmentId);
    return row;
  }

  return {
    async createLegacyLayout(request, context) {
      const scope = scopeOf(context);
      checkText("identifier", request.identifier, MAX_TEXT);
      checkText("name", request.name, MAX_TEXT);
      checkDescription(request.description);
      checkContent(request.content);
      const variables = contentVariables(request.content, storedVariables(request.variables));
      try {
        return await withTransaction(pool, async (tx) => {
          const row = await store.insertLegacyLayout(tx, scope.environmentId, {
            id: objectId(),
            organizationId: scope.organizationId,
            identifier: request.identifier,
            name: request.name,
            description: request.description,
            content: request.content,
            variables: JSON.stringify(variables),
            isDefault: false,
          });
          if (!row) throw identifierTaken(request.identifier, scope.environmentId);
          return legacyLayoutFromRow(request.isDefault ? await store.setDefaultLegacyLayout(tx, scope.environmentId, row.id) : row);
        });
      } catch (error) {
        // Another layout became the default at the same moment; this one was not made.
        if (isUniqueViolation(error)) throw failedPrecondition("Another layout became the default at the same time: retry");
        throw error;
      }
    },

    async getLegacyLayout(request, context) {
      const scope = scopeOf(context);
      return legacyLayoutFromRow(await existing(pool, scope.environmentId, request.layoutId));
    },

    async listLegacyLayouts(request, context) {
      const scope = scopeOf(context);
      const limit = request.pageSize === 0 ? 10 : request.pageSize;
      if (limit < 1 || limit > MAX_PAGE_SIZE) throw invalidField("pageSize", `pageSize must be between 1 and ${MAX_PAGE_SIZE}`, request.pageSize);
      const { rows, totalCount } = await readOffsetPage(
        { page: request.page, limit, countCap: COUNT_CAP },
        (offset) =>
          store.selectLegacyLayoutPage(pool, scope.environmentId, { offset, limit, orderBy: ORDER_COLUMNS[request.orderBy], ascending: request.ascending }),
        (cap) => store.countLegacyLayouts(pool, scope.environmentId, cap),
      );
      return { layouts: rows.map(legacyLayoutFromRow), totalCount };
    },

    async updateLegacyLayout(request, context) {
      const scope = scopeOf(context);
      if (request.identifier !== undefined) checkText("identifier", request.identifier, MAX_TEXT);
      if (request.name !== undefined) checkText("name", request.name, MAX_TEXT);
      if (request.description !== undefined) checkDescription(request.description);
      if (request.content !== undefined) checkContent(request.content);
      try {
        return await withTransaction(pool, async (tx) => {
          const row = await existing(tx, scope.environmentId, request.layoutId, true);
          if (request.isDefault === false && row.is_default) throw failedPrecondition("One default layout is required");
          const updated = await store.updateLegacyLayout(tx, scope.environmentId, {
            id: row.id,
            identifier: request.identifier ?? row.identifier,
            name: request.name ?? row.name,
            description: request.description ?? row.description,
            content: request.content ?? row.content,
            variables: JSON.stringify(request.variables ? storedVariables(request.variables.variables) : row.variables),
          });
          return legacyLayoutFromRow(request.isDefault && !row.is_default ? await store.setDefaultLegacyLayout(tx, scope.environmentId, row.id) : updated);
        });
      } catch (error) {
        if (isUniqueViolation(error) && request.identifier !== undefined) throw identifierTaken(request.identifier, scope.environmentId);
        throw error;
      }
    },

    async deleteLegacyLayout(request, context) {
      const scope = scopeOf(context);
      await withTransaction(pool, async (tx) => {
        const row = await existing(tx, scope.environmentId, request.layoutId, true);
        if (await store.legacyLayoutInUse(tx, scope.environmentId, row.id)) {
          throw failedPrecondition(`Layout with id ${request.layoutId} is being used so it can not be deleted`);
        }
        if (row.is_default) throw failedPrecondition(`Layout with id ${request.layoutId} is being used as your default layout, so it can not be deleted`);
        await store.deleteLegacyLayout(tx, scope.environmentId, row.id);
      });
      return {};
    },

    async setDefaultLegacyLayout(request, context) {
      const scope = scopeOf(context);
      return withTransaction(pool, async (tx) => {
        const row = await existing(tx, scope.environmentId, request.layoutId, true);
        return legacyLayoutFromRow(row.is_default ? row : await store.setDefaultLegacyLayout(tx, scope.environmentId, row.id));
      });
    },
  };
}

/**
 * Binds the email steps of a v1 workflow that name no layout to the environment's default
 * layout, as Novu binds them when a step is saved (a later default does not move them); a step
 * that named one before keeps it when the update names none, as Novu's update does. A layout a
 * step newly names must exist (by id or identifier; kept by id): Novu only finds out when it
 * sends, and then every email of the step fails. One named before, and kept, is not looked up
 * again: workflows saved before notify served layouts may name Novu's, and still save.
 */
export async function bindLegacyLayouts(
  db: Queryable,
  environmentId: string,
  steps: readonly workflowsV1.Step[],
  engine: workflowsV1.TemplateEngine,
  previous: readonly workflowsV1.Step[] = [],
): Promise<void> {
  if (engine === workflowsV1.TemplateEngine.LIQUID) return;
  const before = new Map(previous.map((step) => [step.id, step.template?.layoutId]));
  let defaultId: Promise<string | undefined> | undefined;
  for (const step of steps) {
    const template = step.template;
    if (template?.type !== StepType.EMAIL) continue;
    const kept = before.get(step.id);
    if (!template.layoutId) {
      const layoutId = kept || (await (defaultId ??= store.selectDefaultLegacyLayoutId(db, environmentId)));
      if (layoutId) template.layoutId = layoutId;
    } else if (template.layoutId !== kept) {
      const row = await store.selectLegacyLayout(db, environmentId, template.layoutId);
      if (!row) throw layoutNotFound(template.layoutId, environmentId);
      template.layoutId = row.id;
    }
  }
}
