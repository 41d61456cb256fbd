import { type layoutsV1, workflowsV1 } from "@notify/proto";
import sanitizeHtml from "sanitize-html";
import { inLayout } from "./layouts.js";
import { mailyHtml, type MailyNode } from "./maily.js";
import type { Render } from "./render.js";

/**
 * What Novu keeps of a v2 email's HTML: sanitize-html's defaults plus `style` and `img` tags and
 * `style` attributes, so layout survives and scripts, handlers and frames do not. Style tags are
 * what sanitize-html calls vulnerable (old browsers ran script in CSS); mail clients do not.
 */
const NOVU_EMAIL_HTML: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, "style", "img"],
  allowedAttributes: {
    ...sanitizeHtml.defaults.allowedAttributes,
    "*": ["style"],
    img: ["src", "srcset", "alt", "title", "width", "height", "loading"],
  },
  allowVulnerableTags: true,
  parseStyleAttributes: false,
};

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
  return sanitized ? render.charge(() => sanitizeHtml(html, NOVU_EMAIL_HTML)) : html;
}
