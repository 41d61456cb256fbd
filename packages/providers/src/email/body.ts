import { compile } from "html-to-text";

/** One block of an email step's editor content, its `content` already rendered by the template engine. */
export interface EmailBlock {
  /** `text` or `button`. */
  type: string;
  content: string;
  url?: string | undefined;
  /** `left`, `center` or `right`. */
  textAlign?: string | undefined;
}

export interface EmailBody {
  html: string;
  /** The plain-text alternative of `html`. */
  text: string;
}

const ALIGNMENTS = new Set(["left", "center", "right"]);

const escapeAttribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Only the three alignments the editor offers reach a style attribute, so no content can widen it. */
const alignOf = (block: EmailBlock) => (block.textAlign !== undefined && ALIGNMENTS.has(block.textAlign) ? block.textAlign : "left");

/** Novu's branding colour of an organization that set none. */
export const NOVU_BRANDING_COLOR = "#f47373";

/** The organization's branding an editor email is drawn with: its logo above the content, its colour on the buttons and the top edge. */
export interface EmailBranding {
  logo?: string | undefined;
  color?: string | undefined;
}

/** Colours the API accepts (#rgb … #rrggbbaa): only such a value reaches a style attribute. */
const HEX_COLOR = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

const colorOf = (branding: EmailBranding) => (branding.color !== undefined && HEX_COLOR.test(branding.color) ? branding.color : NOVU_BRANDING_COLOR);

/**
 * A block's content is kept as rendered: the template engine has already escaped what the payload put
 * in, and what the author wrote (links, emphasis) is the author's HTML.
 */
function blockHtml(block: EmailBlock, color: string): string {
  if (block.type === "button") {
    const href = escapeAttribute(block.url ?? "");
    // Novu centres every button: the editor's alignment applies to text blocks only.
    return (
      `<tr><td align="center" style="padding:12px 0;text-align:center">` +
      `<a href="${href}" target="_blank" style="display:inline-block;padding:12px 24px;border-radius:4px;background-color:${color};color:#ffffff;font-weight:600;text-decoration:none">${block.content}</a>` +
      `</td></tr>`
    );
  }
  const align = alignOf(block);
  return `<tr><td style="padding:8px 0;text-align:${align}"><p style="margin:0;text-align:${align}">${block.content}</p></td></tr>`;
}

/** The logo above the content, as Novu's editor layout shows it; nothing without one. */
const logoHtml = (logo: string | undefined) =>
  logo
    ? `<tr><td align="left" style="padding:0 0 24px 0"><img src="${escapeAttribute(logo)}" alt="" width="200" style="display:block;border:0;width:50%;max-width:240px;height:auto"></td></tr>`
    : "";

/**
 * The blocks alone, buttons in the branding's colour: what a layout of the author's holds, as
 * Novu puts bare blocks in a custom layout (the page, logo and all, is the layout's).
 */
export function emailBlocksHtml(blocks: readonly EmailBlock[], branding: EmailBranding = {}): string {
  const color = colorOf(branding);
  const rows = blocks.map((block) => blockHtml(block, color)).join("");
  return `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0">${rows}</table>`;
}

/** A page of its own around the blocks, with the logo and colour: tables and inline styles, what mail clients render alike. */
function blocksHtml(blocks: readonly EmailBlock[], branding: EmailBranding): string {
  return (
    `<!DOCTYPE html>` +
    `<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"></head>` +
    `<body style="margin:0;padding:0;background-color:#f5f5f5">` +
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f5f5f5"><tr><td align="center" style="padding:24px 12px">` +
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:600px">` +
    logoHtml(branding.logo) +
    `<tr><td><table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#ffffff;border-top:4px solid ${colorOf(branding)};font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:1.5;color:#222222">` +
    `<tr><td style="padding:24px">${emailBlocksHtml(blocks, branding)}</td></tr></table></td></tr></table>` +
    `</td></tr></table></body></html>`
  );
}

/**
 * Compiled once: the selectors and options are the same for every mail. The walk of the parsed
 * HTML recurses per level, so below a depth no real mail reaches it stops (markup nested tens of
 * thousands deep would otherwise exhaust the stack, after seconds of work).
 */
const toText = compile({
  wordwrap: false,
  limits: { maxDepth: 100 },
  selectors: [
    { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
    { selector: "img", format: "skip" },
    { selector: "table", format: "block" },
    { selector: "tr", format: "block" },
    { selector: "td", format: "block" },
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
});

/** Content without markup or entities is its own text; parsing is kept for what has some (it dominates the cost of a mail). */
const fragmentText = (html: string) => (/[<&]/.test(html) ? toText(html) : html).trim();

/** The text of editor blocks, from the blocks themselves rather than from the layout around them. */
function blocksText(blocks: readonly EmailBlock[]): string {
  return blocks
    .map((block) => {
      const text = fragmentText(block.content);
      return block.type === "button" && block.url && block.url !== text ? `${text} [${block.url}]` : text;
    })
    .filter((text) => text.length > 0)
    .join("\n\n");
}

/**
 * An email step's content (editor blocks, drawn with the organization's branding, or the author's
 * own HTML used as is) as HTML with its text alternative.
 */
export function renderEmailBody(content: readonly EmailBlock[] | string, branding: EmailBranding = {}): EmailBody {
  if (typeof content === "string") return { html: content, text: fragmentText(content) };
  return { html: blocksHtml(content, branding), text: blocksText(content) };
}
