import type { JsonValue } from "@bufbuild/protobuf";
import { commonV1, workflowsV1 } from "@notify/proto";
import { mailyDocumentOf, renderMailyDocument, type MailyNode } from "./maily.js";
import type { Render } from "./render.js";

/** Only workflows written through v2 have block-editor bodies: a v1 body is HTML, whatever it looks like. */
const isMailyBody = (template: workflowsV1.MessageTemplate, render: Render) =>
  render.engine === workflowsV1.TemplateEngine.LIQUID && template.type === commonV1.StepType.EMAIL;

/** An email editor block with its content and url rendered. */
export interface RenderedBlock {
  type: string;
  content: string;
  url?: string;
  textAlign?: string;
}

/** A step's subject, title, sender name and content, rendered. */
export interface RenderedContent {
  subject?: string;
  title?: string;
  /** An email step's From name: it goes before the integration's, and the trigger's overrides before it. */
  senderName?: string;
  content:
    | { case: "text"; value: string }
    | { case: "blocks"; value: RenderedBlock[] }
    /** A block-editor email body of a liquid workflow, resolved for the run; mailyHtml makes it the email's HTML. */
    | { case: "maily"; value: MailyNode }
    | { case: undefined };
}

export interface RenderedCta {
  type?: string;
  url?: string;
  target?: string;
  action?: { status?: string; buttons: { type: string; content: string; resultContent?: string; url?: string; target?: string }[] };
}

/** The template's subject, title, sender name and content (text, or email editor blocks) rendered; throws on a template that does not render. */
export function renderContent(template: workflowsV1.MessageTemplate, render: Render): RenderedContent {
  const content = template.content;
  const rendered: RenderedContent = { content: { case: undefined } };
  if (template.subject !== undefined) rendered.subject = render(template.subject);
  if (template.title !== undefined) rendered.title = render(template.title);
  // Trimmed as Novu trims it: a name a template writes over several lines is still one header line.
  if (template.senderName !== undefined) rendered.senderName = render(template.senderName).trim();
  const document = content.case === "text" && isMailyBody(template, render) ? mailyDocumentOf(content.value) : undefined;
  if (document) rendered.content = { case: "maily", value: renderMailyDocument(document, render) };
  else if (content.case === "text") rendered.content = { case: "text", value: render(content.value) };
  if (content.case === "blocks") {
    rendered.content = {
      case: "blocks",
      value: content.value.blocks.map((block) => ({
        type: block.type,
        content: render(block.content),
        ...(block.url !== undefined ? { url: render(block.url) } : {}),
        ...(block.textAlign !== undefined ? { textAlign: block.textAlign } : {}),
      })),
    };
  }
  return rendered;
}

/** An in-app step's call to action: its redirect url and its buttons' texts and urls rendered. */
export function renderCta(cta: workflowsV1.MessageCta, render: Render): RenderedCta {
  return {
    ...(cta.type !== undefined ? { type: cta.type } : {}),
    ...(cta.data?.url !== undefined ? { url: render(cta.data.url) } : {}),
    ...(cta.data?.target !== undefined ? { target: cta.data.target } : {}),
    ...(cta.action
      ? {
          action: {
            ...(cta.action.status !== undefined ? { status: cta.action.status } : {}),
            buttons: cta.action.buttons.map((button) => ({
              type: button.type,
              content: render(button.content),
              ...(button.resultContent !== undefined ? { resultContent: render(button.resultContent) } : {}),
              ...(button.url !== undefined ? { url: render(button.url) } : {}),
              ...(button.target !== undefined ? { target: button.target } : {}),
            })),
          },
        }
      : {}),
  };
}

/** An in-app step's data with every string in it rendered (keys and other values as they are). */
export function renderJson(value: JsonValue, render: Render): JsonValue {
  if (typeof value === "string") return render(value);
  if (Array.isArray(value)) return value.map((item) => renderJson(item, render));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderJson(item, render)]));
  return value;
}
