import { layoutsV1 } from "@notify/proto";
import type { FieldErrors } from "@notify/runtime";

const { EditorType } = layoutsV1;

/** The most layouts one environment holds (Novu's limit for self-hosted environments). */
export const MAX_LAYOUTS = 100;
export const MAX_NAME = 128;
export const MAX_IDENTIFIER = 255;
/** A layout is one email's HTML or block document: bounded like a template. */
export const MAX_BODY = 512 * 1024;

const CONTENT_VARIABLE = /\{\{\s*content\s*\}\}/;

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
    return CONTENT_VARIABLE.test(content.body) ? {} : refuse('The layout body should contain the "content" variable');
  }
  const document = mailyDocument(content.body);
  if (!document) return refuse("Content must be a valid Maily JSON content");
  return holdsContentVariable(document) ? {} : refuse('The layout body should contain the "content" variable');
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
