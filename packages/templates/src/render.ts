import { workflowsV1 } from "@notify/proto";
import { handlebarsData, renderHandlebars } from "./handlebars.js";
import { liquidData, renderLiquid } from "./liquid.js";

/** What one run's templates may read. */
export interface RenderContext {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
  actor?: Record<string, unknown> | undefined;
  tenant?: Record<string, unknown> | undefined;
  /** v1 templates' `{{step.…}}`: a digest's events and count. */
  step?: Record<string, unknown> | undefined;
  /** What earlier steps produced, by stepId (v2 templates' `{{steps.<stepId>.…}}`). */
  steps?: Record<string, unknown> | undefined;
}

/** Renders one template text of a run; throws on a template that does not render (the step then fails). */
export type Render = ((template: string) => string) & { readonly engine: workflowsV1.TemplateEngine };

/** The renderer of a workflow's templates for one run, shared by sends and previews so a preview shows what a send would. */
export function renderer(engine: workflowsV1.TemplateEngine, context: RenderContext): Render {
  if (engine === workflowsV1.TemplateEngine.LIQUID) {
    const data = liquidData(context);
    return Object.assign((template: string) => renderLiquid(template, data), { engine });
  }
  const data = handlebarsData(context);
  return Object.assign((template: string) => renderHandlebars(template, data), { engine: workflowsV1.TemplateEngine.HANDLEBARS });
}
