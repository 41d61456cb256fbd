import Handlebars from "handlebars";
import { workflowsV1 } from "@notify/proto";
import { liquidVariables } from "./liquid.js";
import { mailyDocumentOf, mailyTexts } from "./maily.js";

/** Block helpers whose body reads the item, not the payload. */
const CONTEXT_HELPERS = new Set(["each", "with"]);

type Expression = hbs.AST.Expression;

function pathName(expression: Expression): string | undefined {
  if (expression.type !== "PathExpression") return undefined;
  const path = expression as hbs.AST.PathExpression;
  // @index, @root.x and ../x are not payload variables of the trigger.
  if (path.data || path.depth > 0 || path.parts.length === 0) return undefined;
  return path.parts.join(".");
}

function collectArguments(params: Expression[], hash: hbs.AST.Hash | undefined, out: string[]): void {
  for (const param of [...params, ...(hash?.pairs.map((pair) => pair.value) ?? [])]) {
    if (param.type === "SubExpression") {
      const sub = param as hbs.AST.SubExpression;
      collectArguments(sub.params, sub.hash, out);
      continue;
    }
    const name = pathName(param);
    if (name) out.push(name);
  }
}

function collectProgram(program: hbs.AST.Program | undefined, out: string[]): void {
  for (const statement of program?.body ?? []) {
    if (statement.type === "MustacheStatement") {
      const mustache = statement as hbs.AST.MustacheStatement;
      const helperCall = mustache.params.length > 0 || (mustache.hash?.pairs.length ?? 0) > 0;
      if (helperCall) collectArguments(mustache.params, mustache.hash, out);
      else {
        const name = pathName(mustache.path);
        if (name) out.push(name);
      }
    } else if (statement.type === "BlockStatement") {
      const block = statement as hbs.AST.BlockStatement;
      const helper = block.path.type === "PathExpression" ? (block.path as hbs.AST.PathExpression).original : "";
      if (block.params.length === 0) {
        // A section ({{#items}}…{{/items}}): the path is the variable and the body reads its items.
        const name = pathName(block.path);
        if (name) out.push(name);
      } else {
        collectArguments(block.params, block.hash, out);
        if (!CONTEXT_HELPERS.has(helper)) collectProgram(block.program, out);
      }
      collectProgram(block.inverse, out);
    }
  }
}

/** The variables one template text reads, in order of appearance; throws on a syntax error. */
export function templateVariables(text: string, engine: workflowsV1.TemplateEngine): string[] {
  if (engine === workflowsV1.TemplateEngine.LIQUID) {
    const document = mailyDocumentOf(text);
    return document ? mailyTexts(document).flatMap(liquidVariables) : liquidVariables(text);
  }
  const out: string[] = [];
  collectProgram(Handlebars.parseWithoutProcessing(text), out);
  return out;
}

/** The root v2 (liquid) templates read the environment's variables at: `{{ env.KEY }}`. */
export const ENVIRONMENT_ROOT = "env";

/** Whether a liquid text (or block document) reads the environment's variables; false for one that does not parse. */
export function readsEnvironment(text: string): boolean {
  try {
    return templateVariables(text, workflowsV1.TemplateEngine.LIQUID).some((name) => name.split(".")[0] === ENVIRONMENT_ROOT);
  } catch {
    return false;
  }
}

/** Every template text of a step with the public path (under `path`) of the field it sits in. */
export function* templateTexts(step: workflowsV1.Step, path: string): Generator<[string, string]> {
  const template = step.template;
  if (!template) return;
  const at = `${path}.template`;
  for (const field of ["subject", "title"] as const) {
    const value = template[field];
    if (value !== undefined) yield [`${at}.${field}`, value];
  }
  if (template.content.case === "text") yield [`${at}.content`, template.content.value];
  if (template.content.case === "blocks") {
    for (const [index, block] of template.content.value.blocks.entries()) {
      yield [`${at}.content[${index}].content`, block.content];
      if (block.url !== undefined) yield [`${at}.content[${index}].url`, block.url];
    }
  }
  for (const field of ["preheader", "senderName"] as const) {
    const value = template[field];
    if (value !== undefined) yield [`${at}.${field}`, value];
  }
  const url = template.cta?.data?.url;
  if (url !== undefined) yield [`${at}.cta.data.url`, url];
  for (const [index, button] of (template.cta?.action?.buttons ?? []).entries()) {
    yield [`${at}.cta.action.buttons[${index}].content`, button.content];
  }
}
