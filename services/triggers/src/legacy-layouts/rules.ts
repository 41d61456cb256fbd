import { workflowsV1 } from "@notify/proto";
import { templateVariables } from "@notify/templates";
import type { StoredVariable } from "./store.js";

/** Where a legacy layout puts the email, as Novu requires it: handlebars' unescaped output. */
export const BODY_VARIABLE = "{{{body}}}";
/** Bounded as v2 layouts are: a layout travels in every trigger job that names it. */
export const MAX_CONTENT = 256 * 1024;

/** What is wrong with a layout's content (undefined: nothing). */
export function contentProblem(content: string): string | undefined {
  if (content.length > MAX_CONTENT) return `content must be at most ${MAX_CONTENT} characters`;
  if (!content.includes(BODY_VARIABLE)) return `Layout content must contain ${BODY_VARIABLE}`;
  try {
    templateVariables(content, workflowsV1.TemplateEngine.HANDLEBARS);
  } catch (error) {
    return `content is not a valid template: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

/**
 * The variables a new layout keeps, as Novu keeps them: those its content reads (the email's
 * `body` aside), each with the required flag and default value the caller gave it, if any.
 */
export function contentVariables(content: string, given: readonly StoredVariable[]): StoredVariable[] {
  const read = [...new Set(templateVariables(content, workflowsV1.TemplateEngine.HANDLEBARS))].filter((name) => name !== "body");
  const givenByName = new Map(given.map((variable) => [variable.name, variable]));
  return read.map((name) => {
    const stated = givenByName.get(name);
    return {
      name,
      type: "String",
      required: stated?.required ?? false,
      ...(stated?.defaultValue !== undefined ? { defaultValue: stated.defaultValue } : {}),
    };
  });
}
