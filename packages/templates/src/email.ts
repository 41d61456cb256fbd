import { commonV1, type layoutsV1, workflowsV1 } from "@notify/proto";
import sanitizeHtml from "sanitize-html";
import { inLayout } from "./layouts.js";
import { mailyHtml, type MailyNode } from "./maily.js";
import type { Render } from "./render.js";

/** An event handler attribute (onclick, onerror, …). */
const EVENT_HANDLER = /^on/i;

/**
 * What Novu keeps of a v2 email's HTML: sanitize-html's default tags plus the page around them
 * (html, head, body, meta, title, link), `style` and `img`, with their attributes, so a mail's
 * table layout and head survive while scripts, frames and `javascript:` links go. Unlike Novu,
 * event handler attributes go too: mail clients do not run them, but a browser showing the mail
 * (a preview, a web mail reader) would. Style tags are what sanitize-html calls vulnerable (old
 * browsers ran script in CSS); mail clients do not.
 */
const NOVU_EMAIL_HTML: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, "style", "img", "html", "head", "body", "link", "meta", "title"],
  allowedAttributes: false,
  transformTags: {
    "*": (tagName, attribs) => ({ tagName, attribs: Object.fromEntries(Object.entries(attribs).filter(([name]) => !EVENT_HANDLER.test(name))) }),
  },
  allowVulnerableTags: true,
  parseStyleAttributes: false,
};

/** sanitize-html drops the doctype, which mail clients read to choose how to lay the page out; Novu puts back one the HTML opens with. */
const OPENING_DOCTYPE = /^<!DOCTYPE .*?>/;

const sanitizedAsNovu = (html: string) => (OPENING_DOCTYPE.exec(html)?.[0] ?? "") + sanitizeHtml(html, NOVU_EMAIL_HTML);

/**
 * The renderer of a v1 step's templates: as Novu renders them, an email's body and layout and an
 * in-app message's content and buttons also read the organization's `branding`, and an email's
 * its `subject` and `preheader`, rendered first (with the raw preheader). Other steps render as
 * they are.
 */
export function v1StepRender(template: workflowsV1.MessageTemplate, render: Render, branding: Record<string, unknown>): Render {
  if (render.engine !== workflowsV1.TemplateEngine.HANDLEBARS) return render;
  if (template.type === commonV1.StepType.IN_APP) return render.withV1Values({ branding });
  if (template.type !== commonV1.StepType.EMAIL) return render;
  const heading = render.withV1Values({ preheader: template.preheader ?? "", branding });
  // Trimmed as Novu trims them: a subject or preheader written over several lines is one line.
  const rendered = (text: string | undefined) => (text ? heading(text).trim() : "");
  return render.withV1Values({ branding, subject: rendered(template.subject), preheader: rendered(template.preheader) });
}

/**
 * An email step's rendered body (its HTML, or its block-editor document) as the HTML that is sent,
 * in its layout when it has one.
 * Workflows written through v2 are sanitized as Novu sanitizes them, unless the step turns that
 * off: there the payload goes into the HTML unescaped. v1 bodies are sent as they are (handlebars
 * escaped the payload).
 */
export async function emailHtml(
  template: workflowsV1.MessageTemplate,
  content: { case: "text"; value: string } | { case: "maily"; value: MailyNode },
  render: Render,
  layout?: layoutsV1.EmailLayoutContent | layoutsV1.LegacyLayout,
): Promise<string> {
  const body = content.case === "maily" ? await mailyHtml(content.value) : content.value;
  const html = layout ? await inLayout(layout, body, render) : body;
  const sanitized = render.engine === workflowsV1.TemplateEngine.LIQUID && template.disableOutputSanitization !== true;
  // Sanitizing costs about as much as rendering a template over the same HTML: the budget counts it.
  return sanitized ? render.charge(() => sanitizedAsNovu(html)) : html;
}
