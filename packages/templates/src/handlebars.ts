import Handlebars from "handlebars";
import { cachedParser } from "./cache.js";
import { novuHelpers } from "./helpers.js";
import { boundedOutput, MAX_RENDER_OUTPUT } from "./limits.js";
import type { RenderContext } from "./render.js";

/**
 * Template rendering as Novu does it for v1 workflows: payload keys at the top level
 * (`{{firstName}}`) and, unlike Novu, also under `payload.` (`{{payload.firstName}}`), next to
 * `subscriber`, `actor`, `tenant`, `context`, `step` and `steps`, which win over payload keys of the same name.
 * Handlebars ≥ 4.6 refuses prototype access unless allowed; we never allow it.
 */
const handlebars = Handlebars.create();

handlebars.registerHelper(novuHelpers);

/** The render under way (renders are synchronous: one at a time): when it must end, and how much its loops produced. */
let underWay: { deadline: number; output: number } | undefined;

/**
 * `each` (and the `{{#list}}` sections that call it) with a check after every iteration: only
 * loops can make a render run long, so ending them at the render's time limit or output limit
 * makes handlebars as stoppable as liquid, whose renders stop themselves.
 */
const builtinEach = handlebars.helpers.each!;
handlebars.registerHelper("each", function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
  const iteration = options.fn;
  const checked = (item: unknown, frame?: Handlebars.RuntimeOptions) => {
    const output = iteration(item, frame);
    if (underWay) {
      underWay.output += output.length;
      if (underWay.output > MAX_RENDER_OUTPUT) throw new Error(`the template's loops produce more than ${MAX_RENDER_OUTPUT} characters`);
      if (performance.now() > underWay.deadline) throw new Error("the template's loops took longer than a render may take");
    }
    return output;
  };
  return builtinEach.call(this, context, { ...options, fn: checked });
});

export function handlebarsData(context: RenderContext): Record<string, unknown> {
  return {
    ...context.payload,
    payload: context.payload,
    subscriber: context.subscriber,
    ...(context.actor ? { actor: context.actor } : {}),
    ...(context.tenant ? { tenant: context.tenant } : {}),
    ...(context.context ? { context: context.context } : {}),
    ...(context.step ? { step: context.step } : {}),
    ...(context.steps ? { steps: context.steps } : {}),
    // Over the payload's own keys of the same names, as Novu gives them.
    ...context.v1Values,
  };
}

const compile = cachedParser((template) => handlebars.compile(template, { strict: false }));

/** Renders one template within `limitMs`; a template that does not compile, or renders too long or too much, throws (the step then fails). */
export function renderHandlebars(template: string, data: Record<string, unknown>, limitMs: number): string {
  if (!template.includes("{{")) return template.replace(/&#x27;/g, "'");
  underWay = { deadline: performance.now() + limitMs, output: 0 };
  let output: string;
  try {
    output = compile(template)(data);
  } finally {
    underWay = undefined;
  }
  // Handlebars escapes ' as &#x27;; Novu turns it back (in the template's own text too).
  return boundedOutput(output).replace(/&#x27;/g, "'");
}
