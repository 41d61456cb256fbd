import { describe, expect, it } from "vitest";
import { emailBlocksHtml, renderEmailBody } from "../src/index.js";

describe("email body", () => {
  it("renders editor blocks as paragraphs and button links, text alignment applied, content kept as is", () => {
    const { html, text } = renderEmailBody([
      { type: "text", content: "Hi <b>Ann</b> &amp; co", textAlign: "center" },
      { type: "text", content: "Second line" },
      { type: "button", content: "Open", url: "https://x.test/a?b=1&c=2", textAlign: "right" },
    ]);
    expect(html.startsWith("<!DOCTYPE html><html>")).toBe(true);
    expect(html.endsWith("</html>")).toBe(true);
    expect(html).toContain(`<p style="margin:0;text-align:center">Hi <b>Ann</b> &amp; co</p>`);
    expect(html).toContain(`<p style="margin:0;text-align:left">Second line</p>`);
    // As in Novu's editor template, a button is centred whatever alignment it was given, in Novu's default branding colour.
    expect(html).toMatch(
      /<td align="center"[^>]*text-align:center[^>]*><a href="https:\/\/x\.test\/a\?b=1&amp;c=2"[^>]*display:inline-block[^>]*background-color:#f47373[^>]*>Open<\/a>/,
    );
    expect(text).toBe("Hi Ann & co\n\nSecond line\n\nOpen [https://x.test/a?b=1&c=2]");
  });

  it("keeps alignments other than the editor's three and button URLs from breaking out of their attributes", () => {
    const { html } = renderEmailBody([
      { type: "text", content: "x", textAlign: 'left"><script>' },
      { type: "button", content: "Go", url: 'https://x.test/"><script>alert(1)</script>' },
    ]);
    expect(html).not.toContain("<script>");
    expect(html).toContain(`<p style="margin:0;text-align:left">x</p>`);
    expect(html).toContain(`href="https://x.test/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`);
  });

  it("draws editor blocks with the organization's logo and colour, and only a colour the API accepts reaches a style", () => {
    const blocks = [{ type: "button", content: "Open", url: "https://x.test/a" }];
    const { html, text } = renderEmailBody(blocks, { logo: 'https://cdn.example.com/logo.png?a=1&b="2"', color: "#0a7cff" });
    expect(html).toContain(`<img src="https://cdn.example.com/logo.png?a=1&amp;b=&quot;2&quot;" alt=""`);
    expect(html.indexOf("<img")).toBeLessThan(html.indexOf("Open"));
    expect(html).toContain("border-top:4px solid #0a7cff");
    expect(html).toMatch(/<a href="https:\/\/x\.test\/a"[^>]*background-color:#0a7cff/);
    // The logo is no text of the mail.
    expect(text).toBe("Open [https://x.test/a]");
    const unbranded = renderEmailBody(blocks).html;
    expect(unbranded).not.toContain("<img");
    expect(unbranded).toContain("border-top:4px solid #f47373");
    const hostile = renderEmailBody(blocks, { color: "red;background:url(https://x.test/t)" }).html;
    expect(hostile).not.toContain("url(");
    expect(hostile).toMatch(/background-color:#f47373/);
  });

  it("answers the blocks alone for a layout to hold: buttons in the branding's colour, no page, logo or edge", () => {
    const html = emailBlocksHtml(
      [
        { type: "text", content: "Hi" },
        { type: "button", content: "Open", url: "https://x.test/a" },
      ],
      {
        logo: "https://cdn.example.com/logo.png",
        color: "#0a7cff",
      },
    );
    expect(html).toMatch(/^<table role="presentation"[^>]*>.*<\/table>$/);
    expect(html).toContain("background-color:#0a7cff");
    expect(html).not.toMatch(/<html|<body|<img|border-top/);
  });

  it("uses custom HTML as is and derives its text alternative", () => {
    const custom =
      "<h1>Hello</h1><p>World, see <a href='https://a.test/x'>the link</a></p><ul><li>one</li><li>two</li></ul><img src='https://a.test/p.png' alt='pixel'>";
    const { html, text } = renderEmailBody(custom);
    expect(html).toBe(custom);
    expect(text).toBe("Hello\n\nWorld, see the link [https://a.test/x]\n\n * one\n * two");
  });

  it("writes a button's link once when its text is the link", () => {
    expect(renderEmailBody([{ type: "button", content: "https://x.test/a", url: "https://x.test/a" }]).text).toBe("https://x.test/a");
  });

  it("derives a text alternative from markup nested far deeper than any mail, keeping what it can reach", () => {
    const depth = 50_000;
    const { text } = renderEmailBody(`<p>Top</p>${"<div>".repeat(depth)}deep${"</div>".repeat(depth)}`);
    expect(text).toMatch(/^Top/);
    expect(text).not.toContain("deep");
  });

  it("answers empty text for empty content", () => {
    expect(renderEmailBody("").text).toBe("");
    expect(renderEmailBody([]).text).toBe("");
  });
});
