import type { JsonObject } from "@bufbuild/protobuf";
import type { layoutsV1, triggersV1, workflowsV1 } from "@notify/proto";
import type { Queryable } from "@notify/runtime";
import { legacyLayoutKeys, stepLayoutId } from "@notify/templates";
import { legacyLayoutFromRow } from "../legacy-layouts/mapping.js";
import { selectLegacyLayoutsByKeys } from "../legacy-layouts/store.js";
import { layoutFromRow } from "./mapping.js";
import { selectLayoutsByKeys } from "./store.js";

type LegacyKey = NonNullable<ReturnType<typeof legacyLayoutKeys>>;

/**
 * For each event of a trigger batch, the layouts its job carries: those its workflow's email
 * steps and its overrides name (v2 layouts for a v2 workflow, legacy ones for a v1 workflow), as
 * they are now. At most one query of each kind for the whole batch, none when nothing is named.
 */
export async function batchLayouts(
  db: Queryable,
  environmentId: string,
  events: readonly triggersV1.TriggerEvent[],
  workflows: ReadonlyMap<string, workflowsV1.Workflow | undefined>,
): Promise<{ layouts: layoutsV1.Layout[]; legacyLayouts: layoutsV1.LegacyLayout[] }[]> {
  const named = events.map((event) => {
    const workflow = workflows.get(event.name);
    const overrides = (event.overrides ?? {}) as JsonObject;
    const steps = workflow?.steps ?? [];
    return {
      keys: [...new Set(steps.flatMap((step) => stepLayoutId(step, workflow!.templateEngine, overrides) ?? []))],
      legacy: steps.flatMap((step): LegacyKey[] => {
        const key = legacyLayoutKeys(step, workflow!.templateEngine, overrides);
        return key ? [key] : [];
      }),
    };
  });
  const keys = [...new Set(named.flatMap((event) => event.keys))];
  const ids = [...new Set(named.flatMap((event) => event.legacy.flatMap((key) => key.id ?? [])))];
  const identifiers = [...new Set(named.flatMap((event) => event.legacy.flatMap((key) => key.identifier ?? [])))];
  const [layouts, legacyLayouts] = await Promise.all([
    keys.length > 0 ? selectLayoutsByKeys(db, environmentId, keys).then((rows) => rows.map(layoutFromRow)) : [],
    ids.length + identifiers.length > 0 ? selectLegacyLayoutsByKeys(db, environmentId, { ids, identifiers }).then((rows) => rows.map(legacyLayoutFromRow)) : [],
  ]);
  return named.map((event) => ({
    layouts: layouts.filter((layout) => event.keys.includes(layout.identifier) || event.keys.includes(layout.id)),
    legacyLayouts: legacyLayouts.filter((layout) => event.legacy.some((key) => key.id === layout.id || key.identifier === layout.identifier)),
  }));
}
