import type { ServiceImpl } from "@connectrpc/connect";
import { layoutsV1, workflowsV1 } from "@notify/proto";
import {
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  invalidField,
  isObjectId,
  isUniqueViolation,
  notFound,
  objectId,
  readOffsetPage,
  scopeOf,
  StepType,
  withTransaction,
  type Queryable,
} from "@notify/runtime";
import type { ServiceDeps } from "../routes.js";
import { idFromSlug, slugify } from "../workflows/slug.js";
import { contentColumns, layoutFromRow } from "./mapping.js";
import { checkText, contentErrors, MAX_IDENTIFIER, MAX_LAYOUTS, MAX_NAME, STARTER_CONTENT } from "./rules.js";
import * as store from "./store.js";

export const MAX_PAGE_SIZE = 100;
/** The most workflows a usage lists: a bound on the answer, far above what one layout is used by in practice. */
export const MAX_USAGE = 1000;

const ORDER_COLUMNS: Record<layoutsV1.LayoutOrder, store.LayoutOrderColumn> = {
  [layoutsV1.LayoutOrder.UNSPECIFIED]: "created_at",
  [layoutsV1.LayoutOrder.CREATED_AT]: "created_at",
  [layoutsV1.LayoutOrder.UPDATED_AT]: "updated_at",
  [layoutsV1.LayoutOrder.NAME]: "name",
};

export const layoutNotFound = (key: string, environmentId: string) => notFound(`Layout not found for id ${key} in the environment ${environmentId}`);

/** Where a layout key may point: an id, an identifier or a layout slug. */
export function layoutLookup(key: string): store.LayoutLookup {
  return { id: isObjectId(key) ? key : idFromSlug(key, "layout"), identifier: key };
}

export function createLayoutService({ pool }: ServiceDeps): ServiceImpl<typeof layoutsV1.LayoutService> {
  async function existing(db: Queryable, environmentId: string, key: string, lock = false): Promise<store.LayoutRow> {
    const row = await store.selectLayout(db, environmentId, layoutLookup(key), lock);
    if (!row) throw layoutNotFound(key, environmentId);
    return row;
  }

  /** Inserts a layout unless the environment is full or the identifier taken. */
  async function insert(
    scope: { organizationId: string; environmentId: string },
    layout: { identifier: string; name: string; isTranslationEnabled: boolean } & store.LayoutContentColumns,
  ): Promise<layoutsV1.Layout> {
    if ((await store.countEnvironmentLayouts(pool, scope.environmentId, MAX_LAYOUTS)) >= MAX_LAYOUTS) {
      throw failedPrecondition(`Layout limit exceeded: an environment holds at most ${MAX_LAYOUTS} layouts`);
    }
    const row = { id: objectId(), organizationId: scope.organizationId, ...layout };
    let inserted: store.LayoutRow | undefined;
    try {
      inserted = await store.insertLayout(pool, scope.environmentId, row);
    } catch (error) {
      // Another first layout of the environment became its default meanwhile: this one is not.
      if (!isUniqueViolation(error)) throw error;
      inserted = await store.insertLayout(pool, scope.environmentId, row);
    }
    if (!inserted) throw alreadyExists(`Layout with identifier: ${layout.identifier} already exists under environment ${scope.environmentId}`);
    return layoutFromRow(inserted);
  }

  return {
    async createLayout(request, context) {
      const scope = scopeOf(context);
      checkText("layoutId", request.identifier, MAX_IDENTIFIER);
      checkText("name", request.name, MAX_NAME);
      return insert(scope, {
        identifier: request.identifier,
        name: request.name,
        isTranslationEnabled: request.isTranslationEnabled,
        ...contentColumns(STARTER_CONTENT),
      });
    },

    async getLayout(request, context) {
      const scope = scopeOf(context);
      return layoutFromRow(await existing(pool, scope.environmentId, request.layoutId));
    },

    async listLayouts(request, context) {
      const scope = scopeOf(context);
      const limit = request.limit === 0 ? 50 : request.limit;
      if (limit < 1 || limit > MAX_PAGE_SIZE) throw invalidField("limit", `limit must be between 1 and ${MAX_PAGE_SIZE}`, request.limit);
      const query = request.query || undefined;
      const { rows, totalCount } = await readOffsetPage(
        { page: 0, offset: request.offset, limit, countCap: MAX_LAYOUTS + 1 },
        (offset) =>
          store.selectLayoutPage(pool, scope.environmentId, { offset, limit, query, orderBy: ORDER_COLUMNS[request.orderBy], ascending: request.ascending }),
        (cap) => store.countLayouts(pool, scope.environmentId, query, cap),
      );
      return { layouts: rows.map(layoutFromRow), totalCount };
    },

    async updateLayout(request, context) {
      const scope = scopeOf(context);
      checkText("name", request.name, MAX_NAME);
      const content = request.content;
      if (content.case === "email") {
        const errors = contentErrors(content.value);
        if (Object.keys(errors).length > 0) throw invalidArgument("Layout has validation issues", errors);
      }
      const row = await existing(pool, scope.environmentId, request.layoutId);
      const updated = await store.updateLayout(pool, scope.environmentId, row.id, {
        name: request.name,
        isTranslationEnabled: request.isTranslationEnabled,
        content:
          content.case === "email"
            ? contentColumns(content.value)
            : content.case === "clearContent"
              ? { email_body: null, email_editor_type: null }
              : undefined,
      });
      return layoutFromRow(updated);
    },

    async deleteLayout(request, context) {
      const scope = scopeOf(context);
      await withTransaction(pool, async (tx) => {
        const row = await existing(tx, scope.environmentId, request.layoutId, true);
        if (row.is_default) {
          throw failedPrecondition(`Layout with id ${request.layoutId} is being used as a default layout, it can not be deleted`);
        }
        // The steps that named it send without a layout from now on, as Novu's do.
        await store.unsetStepLayouts(tx, scope.environmentId, row.identifier);
        await store.deleteLayout(tx, scope.environmentId, row.id);
      });
      return {};
    },

    async duplicateLayout(request, context) {
      const scope = scopeOf(context);
      checkText("name", request.name, MAX_NAME);
      const identifier = request.identifier ?? slugify(request.name);
      checkText("layoutId", identifier, MAX_IDENTIFIER);
      const source = await existing(pool, scope.environmentId, request.layoutId);
      return insert(scope, {
        identifier,
        name: request.name,
        isTranslationEnabled: request.isTranslationEnabled,
        email_body: source.email_body,
        email_editor_type: source.email_editor_type,
      });
    },

    async getLayoutUsage(request, context) {
      const scope = scopeOf(context);
      const row = await existing(pool, scope.environmentId, request.layoutId);
      const workflows = await store.selectLayoutUsage(pool, scope.environmentId, row.identifier, MAX_USAGE);
      return { workflows: workflows.map((workflow) => ({ name: workflow.name, identifier: workflow.trigger_identifier })) };
    },
  };
}

/**
 * Points the email steps of a v2 workflow at their layouts by identifier, however a step named
 * its layout (id, identifier or slug), as Novu stores them; a layout the environment does not
 * have is refused. v1 workflows' layout ids name Novu's older layouts, which are not served:
 * they are kept as given and never applied.
 */
export async function nameStepLayouts(db: Queryable, environmentId: string, steps: readonly workflowsV1.Step[], engine: workflowsV1.TemplateEngine) {
  if (engine !== workflowsV1.TemplateEngine.LIQUID) return;
  for (const step of steps) {
    const template = step.template;
    if (template?.type !== StepType.EMAIL || !template.layoutId) continue;
    const row = await store.selectLayout(db, environmentId, layoutLookup(template.layoutId));
    if (!row) throw layoutNotFound(template.layoutId, environmentId);
    template.layoutId = row.identifier;
  }
}
