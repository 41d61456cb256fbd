import Handlebars from "handlebars";
import { cachedParser } from "./cache.js";
import { novuHelpers } from "./helpers.js";
import type { RenderContext } from "./render.js";

/**
 * Template rendering as Novu does it for v1 workflows: payload keys at the top level
 * (`{{firstName}}`) and, unlike Novu, also under `payload.` (`{{payload.firstName}}`), next to
 * `subscriber`, `actor`, `tenant`, `step` and `steps`, which win over payload keys of the same name.
 * Handlebars ≥ 4.6 refuses prototype access unless allowed; we never allow it.
 */
const handlebars = Handlebars.create();

handlebars.registerHelper(novuHelpers);

export function handlebarsData(context: RenderContext): Record<string, unknown> {
  return {
    ...context.payload,
    payload: context.payload,
    subscriber: context.subscriber,
    ...(context.actor ? { actor: context.actor } : {}),
    ...(context.tenant ? { tenant: context.tenant } : {}),
    ...(context.step ? { step: context.step } : {}),
    ...(context.steps ? { steps: context.steps } : {}),
  };
}

const compile = cachedParser((template) => handlebars.compile(template, { strict: false }));

/** Renders one template; a template that does not compile throws (the step then fails). */
export function renderHandlebars(template: string, data: Record<string, unknown>): string {
  // Handlebars escapes ' as &#x27;; Novu turns it back (in the template's own text too).
  const output = template.includes("{{") ? compile(template)(data) : template;
  return output.replace(/&#x27;/g, "'");
}
