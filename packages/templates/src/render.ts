import { workflowsV1 } from "@notify/proto";
import { handlebarsData, renderHandlebars } from "./handlebars.js";
import { liquidData, renderLiquid } from "./liquid.js";
import { valueAtPath, withDefaults } from "./payload.js";

/** What one run's templates may read. */
export interface RenderContext {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
  actor?: Record<string, unknown> | undefined;
  tenant?: Record<string, unknown> | undefined;
  /** The trigger's contexts by type, each `{id, data}` (`{{context.tenant.data.name}}`). */
  context?: Record<string, unknown> | undefined;
  /** v1 templates' `{{step.…}}`: a digest's events and count. */
  step?: Record<string, unknown> | undefined;
  /** What earlier steps produced, by stepId (v2 templates' `{{steps.<stepId>.…}}`). */
  steps?: Record<string, unknown> | undefined;
  /** The environment's variables by key (v2 templates' `{{env.KEY}}`). */
  env?: Record<string, unknown> | undefined;
  /** What a v1 email or in-app step's templates read over the payload's keys: Novu's `branding`, and an email's subject and preheader. */
  v1Values?: Record<string, unknown> | undefined;
}

/** Renders one template text of a run; throws on a template that does not render (the step then fails). */
export type Render = ((template: string) => string) & {
  readonly engine: workflowsV1.TemplateEngine;
  /** Runs work the rendered output needs (sanitizing its HTML) within the same budget as the renders. */
  readonly charge: <T>(work: () => T) => T;
  /** The same run's renderer, with these values in the payload where it has none (a legacy layout's variable defaults). */
  readonly withPayloadDefaults: (defaults: Record<string, unknown>) => Render;
  /** The run's payload's value at this dotted path. */
  readonly payloadAt: (path: string) => unknown;
  /** The same run's renderer, a v1 step's values (RenderContext.v1Values) over the payload's. */
  readonly withV1Values: (values: Record<string, unknown>) => Render;
};

/**
 * The rendering time the runs of one job share (step conditions count as rendering). A real
 * template renders in microseconds; one that loops without bound, or a condition over a huge list
 * in the payload, would hold the worker (every tenant's sends) for each of the job's subscribers.
 * So a job may spend a second, and beyond it RENDER_MS_PER_RUN per subscriber's run
 * (not per template: many small templates must not buy time for a slow one); a render that uses up
 * what is left spends the budget, and the rest of the job's renders fail at once instead of
 * running. One slow render (a pause of the process) fits in the second.
 */
export interface RenderBudget {
  spentMs: number;
  runs: number;
  spent: boolean;
}

const FREE_MS = 1_000;
const RENDER_MS_PER_RUN = 20;
/** The most one render may take, whatever the budget has left. */
const RENDER_LIMIT_MS = 200;

export const renderBudget = (): RenderBudget => ({ spentMs: 0, runs: 0, spent: false });

const allowanceMs = (budget: RenderBudget) => FREE_MS + RENDER_MS_PER_RUN * budget.runs - budget.spentMs;

/**
 * Runs what a tenant's workflow makes a run evaluate (a template's render, a step's conditions)
 * charged to the job's budget; refused once the budget is spent.
 */
export function withinBudget<T>(budget: RenderBudget, work: () => T): T {
  if (budget.spent) throw new Error("template rendering took too long for this job: a template or condition loops over too much");
  const allowance = allowanceMs(budget);
  const started = performance.now();
  try {
    return work();
  } finally {
    const elapsed = performance.now() - started;
    budget.spentMs += elapsed;
    if (elapsed >= allowance) budget.spent = true;
  }
}

/** `render` charged to the budget. */
const charged =
  (render: (template: string) => string, budget: RenderBudget) =>
  (template: string): string =>
    withinBudget(budget, () => render(template));

/**
 * The renderer of a workflow's templates for one run, shared by sends and previews so a preview
 * shows what a send would; the runs of one job share `budget`.
 */
export function renderer(engine: workflowsV1.TemplateEngine, context: RenderContext, budget = renderBudget()): Render {
  budget.runs += 1;
  return runRenderer(engine, context, budget);
}

/** A renderer of a run already counted in the budget. */
function runRenderer(engine: workflowsV1.TemplateEngine, context: RenderContext, budget: RenderBudget): Render {
  const withPayloadDefaults = (defaults: Record<string, unknown>) =>
    runRenderer(engine, { ...context, payload: withDefaults(defaults, context.payload) }, budget);
  const payloadAt = (path: string) => valueAtPath(context.payload, path);
  const withV1Values = (values: Record<string, unknown>) => runRenderer(engine, { ...context, v1Values: values }, budget);
  // Both engines stop a render at its limit: what the budget has left, and never more than RENDER_LIMIT_MS.
  const limitMs = () => Math.max(1, Math.min(RENDER_LIMIT_MS, allowanceMs(budget)));
  const charge = <T>(work: () => T): T => withinBudget(budget, work);
  if (engine === workflowsV1.TemplateEngine.LIQUID) {
    const data = liquidData(context);
    return Object.assign(
      charged((template: string) => renderLiquid(template, data, limitMs()), budget),
      { engine, charge, withPayloadDefaults, payloadAt, withV1Values },
    );
  }
  const data = handlebarsData(context);
  return Object.assign(
    charged((template: string) => renderHandlebars(template, data, limitMs()), budget),
    { engine: workflowsV1.TemplateEngine.HANDLEBARS, charge, withPayloadDefaults, payloadAt, withV1Values },
  );
}
