import { randomBytes } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { commonV1, layoutsV1, workflowsV1 } from "@notify/proto";
import { cachedParser } from "./cache.js";
import { mailyDocumentOf, mailyHtml, renderMailyDocument, type MailyNode } from "./maily.js";
import { missingRequiredVariables, missingVariablesMessage, variableDefaults } from "./payload.js";
import type { Render } from "./render.js";

/**
 * Where the email goes while its layout renders: a text no template output holds by chance. The
 * email is put in after the layout rendered, so its HTML is neither rendered again nor escaped.
 */
const CONTENT_MARK = `notifylayoutcontent${randomBytes(12).toString("hex")}`;
const CONTENT_VARIABLE = /\{\{\s*content\s*\}\}/g;

/** The object at `key` of a JSON object (a trigger's overrides, say); {} when it is absent or not an object. */
export function objectAt(source: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = Object.hasOwn(source, key) ? source[key] : undefined;
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The layout an email step of a v2 workflow is sent in, as Novu picks it: the trigger's
 * `overrides.steps.<stepId>.layoutId`, else `overrides.channels.email.layoutId`, else the
 * deprecated `overrides.layoutIdentifier`, else the step's own. The first of them that is set
 * decides, and `null` sends the email without a layout. v1 workflows' steps name Novu's older
 * layouts, which are not served: they send without one.
 */
export function stepLayoutId(step: workflowsV1.Step, engine: workflowsV1.TemplateEngine, overrides: JsonObject): string | undefined {
  if (engine !== workflowsV1.TemplateEngine.LIQUID || step.template?.type !== commonV1.StepType.EMAIL) return undefined;
  const steps = objectAt(overrides, "steps");
  const named = [
    objectAt(steps, step.stepId ?? "")["layoutId"] ?? objectAt(steps, step.id)["layoutId"],
    objectAt(objectAt(overrides, "channels"), "email")["layoutId"],
    overrides["layoutIdentifier"],
  ].find((value) => value !== undefined);
  if (named === null) return undefined;
  if (typeof named === "string" && named !== "") return named;
  return step.template.layoutId || undefined;
}

/**
 * The legacy layouts an email step of a v1 workflow may be sent in, as Novu picks them: the one
 * the trigger's `overrides.layoutIdentifier` names if it exists, else the step's own (by id).
 * Undefined: no layout.
 */
export function legacyLayoutKeys(
  step: workflowsV1.Step,
  engine: workflowsV1.TemplateEngine,
  overrides: JsonObject,
): { identifier: string | undefined; id: string | undefined } | undefined {
  if (engine === workflowsV1.TemplateEngine.LIQUID || step.template?.type !== commonV1.StepType.EMAIL) return undefined;
  const named = overrides["layoutIdentifier"];
  const identifier = typeof named === "string" && named !== "" ? named : undefined;
  const id = step.template.layoutId || undefined;
  return identifier || id ? { identifier, id } : undefined;
}

/** A block layout with its `content` variable nodes as text of the mark, prepared as a step's document is (once per distinct body). */
const markedDocument = cachedParser((body: string): MailyNode | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const mark = (node: unknown): unknown => {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return node;
    const { type, attrs, content } = node as MailyNode;
    if (type === "variable" && attrs?.["id"] === "content") return { type: "text", text: CONTENT_MARK };
    return Array.isArray(content) ? { ...node, content: content.map(mark) } : node;
  };
  return mailyDocumentOf(JSON.stringify(mark(parsed)));
});

/** What of a rendered email goes into a layout: what its body holds, without a doctype or comments. */
function emailBody(html: string): string {
  const stripped = html.replace(/<!DOCTYPE[^>]*>/gi, "").replace(/<!--[\s\S]*?-->/g, "");
  const open = /<body[^>]*>/i.exec(stripped);
  const close = stripped.toLowerCase().lastIndexOf("</body>");
  return open && close > open.index ? stripped.slice(open.index + open[0].length, close) : stripped;
}

const LEGACY_BODY_VARIABLE = /\{\{\{\s*body\s*\}\}\}/g;

/** What follows a preheader: mail clients' preview then shows it alone, not run on into the mail's first lines. */
const PREHEADER_SPACER = "&nbsp;&zwnj;".repeat(150);

/** A legacy layout with the step's preheader hidden right after its `<body>`, where Novu puts it: mail clients show it as the preview. */
const withPreheader = (layoutHtml: string) =>
  layoutHtml.replace(
    /<body\b[^<>]*>/,
    (tag) => `${tag}{{#if preheader}}<div style="display: none; max-height: 0px; overflow: hidden;">{{preheader}}${PREHEADER_SPACER}</div>{{/if}}`,
  );

/**
 * The email's HTML placed into the layout where it goes (a v2 layout's `content` variable, a
 * legacy layout's `{{{body}}}`), the layout rendered with the run's variables.
 */
export async function inLayout(layout: layoutsV1.EmailLayoutContent | layoutsV1.LegacyLayout, email: string, render: Render): Promise<string> {
  let wrapped: string;
  if (layout.$typeName === "notify.layouts.v1.LegacyLayout") {
    // A required variable must be in the payload, or the email is not sent; defaults stand in for what else it lacks, as in Novu.
    const missing = missingRequiredVariables(layout.variables, render.payloadAt);
    if (missing.length > 0) throw new Error(missingVariablesMessage(missing));
    const defaults = variableDefaults(layout.variables);
    const layoutRender = Object.keys(defaults).length > 0 ? render.withPayloadDefaults(defaults) : render;
    wrapped = layoutRender(withPreheader(layout.content.replace(LEGACY_BODY_VARIABLE, CONTENT_MARK)));
  } else if (layout.editorType === layoutsV1.EditorType.HTML) {
    wrapped = render(layout.body.replace(CONTENT_VARIABLE, CONTENT_MARK));
  } else {
    const document = markedDocument(layout.body);
    if (!document) throw new Error("the layout's block-editor document is not valid");
    wrapped = await mailyHtml(renderMailyDocument(document, render));
  }
  return wrapped.split(CONTENT_MARK).join(emailBody(email));
}
