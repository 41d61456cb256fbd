import { workflowsV1 } from "@notify/proto";
import { ENVIRONMENT_ROOT, templateTexts, templateVariables } from "@notify/templates";
import { StepType, type FieldErrors } from "@notify/runtime";

/** Variables the engine provides itself (Novu's TemplateSystemVariables): never asked of a trigger. */
const SYSTEM_ROOTS = new Set(["subscriber", "step", "steps", "branding", "tenant", "context", "preheader", "actor"]);

/** The variables a JSON Logic rule reads (`{"var": "payload.plan"}`, or `{"var": ["payload.plan", default]}`). */
function* ruleVariables(rule: unknown): Generator<string> {
  if (Array.isArray(rule)) {
    for (const item of rule) yield* ruleVariables(item);
  } else if (rule !== null && typeof rule === "object") {
    for (const [key, value] of Object.entries(rule)) {
      const name = key === "var" ? (Array.isArray(value) ? value[0] : value) : undefined;
      if (typeof name === "string" && name !== "") yield name;
      else if (key !== "var") yield* ruleVariables(value);
    }
  }
}

/** Payload paths a step reads outside its templates: filter fields, its conditions, the delay path, the digest key, a throttle's keys. */
function* stepPaths(step: workflowsV1.Step): Generator<string> {
  for (const filter of step.filters) {
    for (const child of filter.children) if (child.on === "payload") yield child.field;
  }
  yield* ruleVariables(step.conditions);
  if (step.metadata?.type === "scheduled" && step.metadata.delayPath) yield step.metadata.delayPath;
  if (step.template?.type === StepType.DIGEST && step.metadata?.digestKey) yield step.metadata.digestKey;
  if (step.template?.type === StepType.THROTTLE) {
    if (step.metadata?.dynamicKey) yield step.metadata.dynamicKey;
    // A key written as a template ({{payload.userId}}) is rendered, not read as a path.
    if (step.metadata?.throttleKey && !step.metadata.throttleKey.includes("{{")) yield step.metadata.throttleKey;
  }
}

export interface StepVariables {
  /** Distinct, in order of first use, without system variables. */
  variables: string[];
  /** "phone" with an sms step, "email" with an email step (what Novu lists). */
  subscriberVariables: string[];
  /** The keys of the environment variables read (`env.KEY`), distinct. */
  environmentVariables: string[];
  /** Templates that do not parse, by field path. */
  errors: FieldErrors;
}

/** What a trigger of these steps may carry, and the templates that cannot be rendered. */
export function extractVariables(steps: readonly workflowsV1.Step[], engine: workflowsV1.TemplateEngine): StepVariables {
  const found: string[] = [];
  const errors: FieldErrors = {};
  /** A template's variables; none, and the reason under its field, when it does not parse. */
  const parse = (field: string, text: string): string[] => {
    try {
      return templateVariables(text, engine);
    } catch (error) {
      // Handlebars puts the excerpt between the first line ("Parse error on line 2:") and the last
      // ("Expecting …"); liquid says it all on one line.
      const lines = (error as Error).message.split("\n");
      const reason = lines.length > 1 ? `${lines[0]} ${lines.at(-1)}` : (lines[0] ?? "syntax error");
      errors[field] = { messages: [`${field.split(".").at(-1)} is not a valid template: ${reason}`], value: text };
      return [];
    }
  };
  const visit = (step: workflowsV1.Step, path: string) => {
    for (const [field, text] of templateTexts(step, path)) found.push(...parse(field, text));
    // Filter values are rendered before they are compared, so one that does not parse would fail
    // the step for every subscriber. What they read is not listed, as Novu lists template content only.
    for (const [filterIndex, filter] of step.filters.entries()) {
      for (const [childIndex, child] of filter.children.entries()) parse(`${path}.filters[${filterIndex}].children[${childIndex}].value`, child.value);
    }
    found.push(...stepPaths(step));
  };
  steps.forEach((step, index) => {
    visit(step, `steps[${index}]`);
    for (const [variantIndex, variant] of step.variants.entries()) visit(variant, `steps[${index}].variants[${variantIndex}]`);
  });
  // In handlebars (v1) templates, env is a payload field.
  const readsEnvironment = engine === workflowsV1.TemplateEngine.LIQUID;
  const variables: string[] = [];
  const environmentVariables = new Set<string>();
  for (const name of new Set(found)) {
    const [root, key] = name.split(".");
    if (readsEnvironment && root === ENVIRONMENT_ROOT) {
      if (key) environmentVariables.add(key);
    } else if (!SYSTEM_ROOTS.has(root!)) variables.push(name);
  }
  const types = new Set(steps.map((step) => step.template?.type));
  const subscriberVariables = [...(types.has(StepType.SMS) ? ["phone"] : []), ...(types.has(StepType.EMAIL) ? ["email"] : [])];
  return { variables, subscriberVariables, environmentVariables: [...environmentVariables], errors };
}
