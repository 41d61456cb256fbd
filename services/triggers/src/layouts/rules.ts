import { layoutsV1, workflowsV1 } from "@notify/proto";
import { templateVariables } from "@notify/templates";
import { invalidField, type FieldErrors } from "@notify/runtime";

const { EditorType } = layoutsV1;

/** The most layouts one environment holds (Novu's limit for self-hosted environments). */
export const MAX_LAYOUTS = 100;
export const MAX_NAME = 128;
export const MAX_IDENTIFIER = 255;
/** A layout travels in every trigger job that names it, which must stay well under a stream message. */
export const MAX_BODY = 256 * 1024;

/** Refuses a text that is blank or longer than `max`, naming its field. */
export function checkText(field: string, value: string, max: number): void {
  if (value.trim().length === 0 || value.length > max) throw invalidField(field, `${field} must be between 1 and ${max} characters`, value);
}

const CONTENT_VARIABLE = /\{\{\s*content\s*\}\}/;

/** What a layout may read, as in Novu: it wraps every email of every workflow, so nothing of one trigger's payload or steps. */
const LAYOUT_ROOTS = new Set(["subscriber", "context", "env", "content"]);

type Node = { type?: unknown; attrs?: { id?: unknown }; content?: unknown };

/** A block-editor (Maily) document: JSON of a `doc` node with a content array. */
function mailyDocument(body: string): Node | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const node = parsed as Node;
  return parsed !== null && typeof parsed === "object" && node.type === "doc" && Array.isArray(node.content) ? node : undefined;
}

/** Whether a document has the `content` variable node somewhere (iteratively: a document may nest deep). */
function holdsContentVariable(document: Node): boolean {
  const pending: unknown[] = [document];
  while (pending.length > 0) {
    const node = pending.pop() as Node | null;
    if (node === null || typeof node !== "object") continue;
    if (node.type === "variable" && node.attrs?.id === "content") return true;
    if (Array.isArray(node.content)) pending.push(...node.content);
  }
  return false;
}

/** Novu's test of a whole HTML document. */
const isHtmlDocument = (body: string) => ["<html", "</html>", "<body", "</body>"].every((part) => body.includes(part));

/**
 * What is wrong with a layout's content, as field errors (none when it can wrap an email): the
 * body must be a document of its editor's kind, and hold the `content` variable where the
 * email goes.
 */
export function contentErrors(content: layoutsV1.EmailLayoutContent): FieldErrors {
  const field = "controlValues.email.body";
  const refuse = (message: string): FieldErrors => ({ [field]: { messages: [message], value: content.body.slice(0, 200) } });
  if (content.body.length > MAX_BODY) return refuse(`The layout body must be at most ${MAX_BODY} characters`);
  if (content.editorType === EditorType.HTML) {
    if (!isHtmlDocument(content.body)) return refuse("Content must be a valid HTML content");
    return CONTENT_VARIABLE.test(content.body) ? variableErrors(content.body, refuse) : refuse('The layout body should contain the "content" variable');
  }
  const document = mailyDocument(content.body);
  if (!document) return refuse("Content must be a valid Maily JSON content");
  return holdsContentVariable(document) ? variableErrors(content.body, refuse) : refuse('The layout body should contain the "content" variable');
}

/** A layout's liquid must parse, and read only what every email it wraps has. */
function variableErrors(body: string, refuse: (message: string) => FieldErrors): FieldErrors {
  let variables: string[];
  try {
    variables = templateVariables(body, workflowsV1.TemplateEngine.LIQUID);
  } catch (error) {
    return refuse(`body is not a valid template: ${error instanceof Error ? error.message : String(error)}`);
  }
  const unsupported = variables.find((variable) => !LAYOUT_ROOTS.has(variable.split(".")[0]!));
  return unsupported === undefined ? {} : refuse(`Variable "${unsupported}" is not supported`);
}

/** What a new layout holds until it is given content: a block document of the `content` variable alone, as Novu starts one. */
export const STARTER_CONTENT: { body: string; editorType: layoutsV1.EditorType } = {
  body: JSON.stringify({
    type: "doc",
    content: [
      { type: "paragraph", attrs: { textAlign: "left" }, content: [{ type: "text", text: " " }] },
      {
        type: "paragraph",
        attrs: { textAlign: "left" },
        content: [{ type: "variable", attrs: { id: "content", label: null, fallback: null, required: false, aliasFor: null } }],
      },
      { type: "paragraph", attrs: { textAlign: "left" }, content: [{ type: "text", text: " " }] },
    ],
  }),
  editorType: EditorType.BLOCK,
};
