import { cachedParser } from "./cache.js";
import type { Render } from "./render.js";

/**
 * Email bodies written in Novu's block editor: a Maily (tiptap) document as JSON. Novu renders
 * one in three passes, and so does this module: the variables the editor marks are written as
 * liquid outputs; `showIfKey` conditions drop blocks and `each` repeats their content once per
 * item of a list; then every text is rendered as liquid and the document becomes HTML.
 */

/** A node of a Maily document (or a mark of one: marks have attrs but no content). */
export interface MailyNode {
  type?: string;
  text?: string;
  attrs?: Record<string, unknown>;
  content?: MailyNode[];
  marks?: MailyNode[];
  [key: string]: unknown;
}

/** Deeper than any editor nests (sections, columns, repeats): what is deeper is refused, not walked. */
const MAX_DEPTH = 64;

/** How deep the document's nodes and marks nest, counted without recursion (a hostile body may nest thousands deep). */
function depthOf(document: MailyNode): number {
  let deepest = 0;
  const pending: [MailyNode, number][] = [[document, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    deepest = Math.max(deepest, depth);
    if (depth > MAX_DEPTH) break;
    for (const child of [...(Array.isArray(node.content) ? node.content : []), ...(Array.isArray(node.marks) ? node.marks : [])]) {
      if (child !== null && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** Attributes that hold a variable's path when their flag is set, per node or mark type; the editor's own keys flag themselves. */
const VARIABLE_ATTRIBUTES: Record<string, [attribute: string, flag: string][]> = {
  button: [
    ["text", "isTextVariable"],
    ["url", "isUrlVariable"],
  ],
  image: [
    ["src", "isSrcVariable"],
    ["externalLink", "isExternalLinkVariable"],
  ],
  link: [["href", "isUrlVariable"]],
};
const SELF_FLAGGED = ["id", "showIfKey", "each"];

const liquidOutput = (path: string, fallback: unknown) =>
  `{{ ${path}${typeof fallback === "string" && fallback !== "" ? ` | default: '${fallback.replace(/'/g, "")}'` : ""} }}`;

/** A copy of the node with each flagged variable written as a liquid output (with its fallback, if any). */
function withLiquidVariables(node: MailyNode, isMark = false): MailyNode {
  const copy: MailyNode = { ...node };
  if (node.attrs) {
    const attrs = { ...node.attrs };
    for (const [attribute, flag] of [...(VARIABLE_ATTRIBUTES[node.type ?? ""] ?? []), ...SELF_FLAGGED.map((key) => [key, key] as const)]) {
      const value = attrs[attribute];
      if (!attrs[flag] || typeof value !== "string" || value === "") continue;
      const aliasFor = !isMark && typeof attrs["aliasFor"] === "string" && attrs["aliasFor"] ? attrs["aliasFor"] : undefined;
      attrs[attribute] = liquidOutput(aliasFor ?? value, attrs["fallback"]);
      if (flag !== attribute) attrs[flag] = false;
    }
    copy.attrs = attrs;
  }
  if (node.content) copy.content = node.content.map((child) => withLiquidVariables(child));
  if (node.marks) copy.marks = node.marks.map((mark) => withLiquidVariables(mark, true));
  return copy;
}

/**
 * The document in a body, when the body is one (Novu takes any JSON body for one), with its
 * flagged variables written as liquid outputs; throws on a document nested deeper than MAX_DEPTH.
 * Prepared once per body: every recipient of a send renders the same one, and the result is
 * never changed (resolving a document copies what it changes).
 */
export const mailyDocumentOf = cachedParser((body: string): MailyNode | undefined => {
  if (!body.trimStart().startsWith("{")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  if (depthOf(parsed as MailyNode) > MAX_DEPTH) throw new Error(`the block-editor document nests deeper than ${MAX_DEPTH} levels`);
  return withLiquidVariables(parsed as MailyNode);
});

/** A rendered condition as Novu reads it: "false", "null", "undefined", "" and what JSON reads as falsy are false. */
function truthy(rendered: string): boolean {
  const value = rendered.trim().toLowerCase();
  if (value === "false" || value === "null" || value === "undefined") return false;
  try {
    return Boolean(JSON.parse(value));
  } catch {
    return value !== "";
  }
}

/** `{{ payload.items }}` → `payload.items`: the expression inside a liquid output. */
const expressionOf = (output: string) => output.replace(/\{\{|\}\}/g, "").trim();

/**
 * `{{ payload.items.name }}` read in the repeat of `payload.items`, for item `index`:
 * `{{ payload.items[index].name }}`. An expression that already indexes is left as it is.
 */
function indexed(text: string, listPath: string, index: number): string {
  const output = /\{\{\s*(.*?)\s*\}\}/.exec(text);
  if (!output) return text;
  const [path = "", ...filters] = output[1]!.split("|").map((part) => part.trim());
  if (path.includes("[")) return text;
  const itemPath = path.replace(listPath, `${listPath}[${index}]`);
  return filters.length > 0 ? `{{ ${itemPath} | ${filters.join(" | ")} }}` : `{{ ${itemPath} }}`;
}

const INDEXED_ATTRIBUTES = ["text", "url", "src", "externalLink", "href", "id", "showIfKey"];

/** A repeat's content for item `index`: every variable it reads under the list's path points at that item. */
function forItem(node: MailyNode, listPath: string, index: number): MailyNode {
  const copy: MailyNode = { ...node };
  if (node.attrs) {
    copy.attrs = Object.fromEntries(
      Object.entries(node.attrs).map(([key, value]) => [
        key,
        INDEXED_ATTRIBUTES.includes(key) && typeof value === "string" ? indexed(value, listPath, index) : value,
      ]),
    );
  }
  if (typeof node.text === "string") copy.text = indexed(node.text, listPath, index);
  if (node.content) copy.content = node.content.map((child) => forItem(child, listPath, index));
  if (node.marks) copy.marks = node.marks.map((mark) => forItem(mark, listPath, index));
  return copy;
}

/** How many items the repeat of `each` runs over (at most `iterations` when set); a value that is not a list fails the step, as in Novu. */
function itemCount(each: string, iterations: unknown, render: Render): number {
  const expression = expressionOf(each);
  if (!render(`{{ ${expression} | json }}`).startsWith("[")) throw new Error(`Iterable "${each}" is not an array`);
  const count = Number(render(`{{ ${expression} | size }}`));
  return typeof iterations === "number" && iterations > 0 ? Math.min(count, iterations) : count;
}

/**
 * Blocks a resolved document may hold. Repeats multiply their content by the length of a payload
 * list, nested repeats by the product of lengths, and blocks without text cost no rendering time:
 * without a bound, a document could grow past what the HTML renderer can make in any time.
 */
const MAX_RESOLVED_NODES = 20_000;

/** Blocks a document being resolved may still become. */
interface NodeAllowance {
  left: number;
}

/** The nodes a node becomes: none when its condition fails, its content once per item when it repeats, else itself with its children resolved. */
function resolved(node: MailyNode, render: Render, allowance: NodeAllowance): MailyNode[] {
  allowance.left -= 1;
  if (allowance.left < 0) throw new Error(`the block-editor document grows beyond ${MAX_RESOLVED_NODES} blocks when its repeats are resolved`);
  const attrs = node.attrs ?? {};
  let current = node;
  const condition = attrs["showIfKey"];
  if (condition !== undefined && condition !== null) {
    if (!truthy(render(String(condition)))) return [];
    const { showIfKey: _shown, ...rest } = attrs;
    current = { ...node, attrs: rest };
  }
  const each = attrs["each"];
  if ((current.type === "repeat" || current.type === "for") && typeof each === "string") {
    const listPath = expressionOf(each).split("|")[0]!.trim();
    const items = Array.from({ length: itemCount(each, attrs["iterations"], render) }, (_, index) => index);
    return items.flatMap((index) => (current.content ?? []).flatMap((child) => resolved(forItem(child, listPath, index), render, allowance)));
  }
  if (current.type === "variable" && typeof attrs["id"] === "string") {
    current = { ...current, type: "text", text: attrs["id"] };
  }
  const rendered: MailyNode = { ...current };
  if (typeof current.text === "string") rendered.text = render(current.text);
  if (current.attrs) rendered.attrs = renderedAttributes(current.attrs, render);
  if (current.content) rendered.content = current.content.flatMap((child) => resolved(child, render, allowance));
  if (current.marks) rendered.marks = current.marks.map((mark) => (mark.attrs ? { ...mark, attrs: renderedAttributes(mark.attrs, render) } : mark));
  return [rendered];
}

const renderedAttributes = (attrs: Record<string, unknown>, render: Render) =>
  Object.fromEntries(Object.entries(attrs).map(([key, value]) => [key, typeof value === "string" ? render(value) : value]));

const isEmptyParagraph = (node: MailyNode) => node.type === "paragraph" && !node.text && (node.content?.length ?? 0) === 0;

/** The document (as mailyDocumentOf prepares it) with its conditions, repeats and variables resolved for one run, without trailing empty paragraphs. */
export function renderMailyDocument(document: MailyNode, render: Render): MailyNode {
  const [root = { type: "doc", content: [] }] = resolved(document, render, { left: MAX_RESOLVED_NODES });
  const content = root.content ?? [];
  let end = content.length;
  while (end > 0 && isEmptyParagraph(content[end - 1]!)) end -= 1;
  return { ...root, content: content.slice(0, end) };
}

/** Every text of the document (as mailyDocumentOf prepares it) a run renders, texts and attributes: what its templates read. */
export function mailyTexts(document: MailyNode): string[] {
  const texts: string[] = [];
  const visit = (node: MailyNode) => {
    if (typeof node.text === "string") texts.push(node.text);
    for (const value of Object.values(node.attrs ?? {})) if (typeof value === "string") texts.push(value);
    for (const child of [...(node.content ?? []), ...(node.marks ?? [])]) visit(child);
  };
  visit(document);
  return texts;
}

/** Loaded on first use: React and its email components take a second to load, which only block-editor mails need. */
let mailyModule: Promise<typeof import("@maily-to/render")> | undefined;

/** Documents many recipients share (no per-recipient variable) render to HTML once. */
const htmlOf = cachedParser(async (json: string) => {
  mailyModule ??= import("@maily-to/render");
  return (await mailyModule).render(JSON.parse(json));
});

/** A resolved document as the email's HTML. */
export function mailyHtml(document: MailyNode): Promise<string> {
  return htmlOf(JSON.stringify(document));
}
