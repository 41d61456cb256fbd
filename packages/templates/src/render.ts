import Handlebars from "handlebars";
import { novuHelpers } from "./helpers.js";

/**
 * Template rendering as Novu does it for v1 workflows, shared by the worker's sends and the gateway's
 * previews so that a preview shows what a send would: payload keys at the top level
 * (`{{firstName}}`) and, unlike Novu, also under `payload.` (`{{payload.firstName}}`), next to
 * `subscriber`, `actor`, `tenant`, `step` and `steps`, which win over payload keys of the same name.
 * Handlebars ≥ 4.6 refuses prototype access unless allowed; we never allow it.
 */
const handlebars = Handlebars.create();

handlebars.registerHelper(novuHelpers);

export interface RenderContext {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
  actor?: Record<string, unknown> | undefined;
  tenant?: Record<string, unknown> | undefined;
  step?: Record<string, unknown> | undefined;
  /** What earlier steps produced, by stepId (v2 templates' `{{steps.<stepId>.…}}`); only previews supply it. */
  steps?: Record<string, unknown> | undefined;
}

export function templateData(context: RenderContext): Record<string, unknown> {
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

const compiled = new Map<string, HandlebarsTemplateDelegate>();
const MAX_CACHED = 1_000;

function compile(template: string): HandlebarsTemplateDelegate {
  const cached = compiled.get(template);
  if (cached) return cached;
  const delegate = handlebars.compile(template, { strict: false });
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(template, delegate);
  return delegate;
}

/** Renders one template; a template that does not compile throws (the step then fails). */
export function render(template: string, data: Record<string, unknown>): string {
  // Handlebars escapes ' as &#x27;; Novu turns it back (in the template's own text too).
  const output = template.includes("{{") ? compile(template)(data) : template;
  return output.replace(/&#x27;/g, "'");
}
