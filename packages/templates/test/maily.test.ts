import { create } from "@bufbuild/protobuf";
import { commonV1, workflowsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { mailyHtml, type MailyNode } from "../src/maily.js";
import { renderContent } from "../src/message.js";
import { renderer } from "../src/render.js";

const text = (value: string): MailyNode => ({ type: "text", text: value });
const variable = (id: string, extra: Record<string, unknown> = {}): MailyNode => ({ type: "variable", attrs: { id, ...extra } });
const paragraph = (...content: MailyNode[]): MailyNode => ({ type: "paragraph", attrs: { textAlign: "left" }, content });

/** A block-editor body as Novu's dashboard stores it. */
const body: MailyNode = {
  type: "doc",
  content: [
    paragraph(text("Hi "), variable("subscriber.firstName"), text(", "), variable("payload.missing", { fallback: "friend" })),
    { ...paragraph(text("Premium only")), attrs: { showIfKey: "payload.premium" } },
    { ...paragraph(text("Everyone")), attrs: { showIfKey: "payload.everyone" } },
    { type: "repeat", attrs: { each: "payload.items", iterations: 2 }, content: [paragraph(text("* "), variable("payload.items.name"))] },
    { type: "button", attrs: { text: "payload.cta", isTextVariable: true, url: "payload.link", isUrlVariable: true, alignment: "left" } },
    paragraph({
      type: "text",
      text: "Track {{ payload.order | upcase }}",
      marks: [{ type: "link", attrs: { href: "https://example.com/{{ payload.order }}" } }],
    }),
    paragraph(),
    paragraph(),
  ],
};

const template = (content: string) =>
  create(workflowsV1.MessageTemplateSchema, {
    type: commonV1.StepType.EMAIL,
    subject: "For {{ subscriber.firstName }}",
    content: { case: "text", value: content },
  });
const payload = {
  premium: false,
  everyone: "yes",
  items: [{ name: "<b>tea</b>" }, { name: "cake" }, { name: "jam" }],
  cta: "Open",
  link: "https://example.com/o",
  order: "a-7",
};
const run = (engine = workflowsV1.TemplateEngine.LIQUID) => renderer(engine, { payload, subscriber: { firstName: "Ada" } });

describe("block-editor (Maily) email bodies of liquid workflows", () => {
  it("resolves variables, fallbacks, conditions, repeats, buttons and links for the run, without trailing empty paragraphs", () => {
    const rendered = renderContent(template(JSON.stringify(body)), run());
    expect(rendered.subject).toBe("For Ada");
    expect(rendered.content).toEqual({
      case: "maily",
      value: {
        type: "doc",
        content: [
          paragraph(text("Hi "), { type: "text", attrs: { id: "Ada" }, text: "Ada" }, text(", "), {
            type: "text",
            attrs: { id: "friend", fallback: "friend" },
            text: "friend",
          }),
          { ...paragraph(text("Everyone")), attrs: {} },
          paragraph(text("* "), { type: "text", attrs: { id: "<b>tea</b>" }, text: "<b>tea</b>" }),
          paragraph(text("* "), { type: "text", attrs: { id: "cake" }, text: "cake" }),
          { type: "button", attrs: { text: "Open", isTextVariable: false, url: "https://example.com/o", isUrlVariable: false, alignment: "left" } },
          paragraph({ type: "text", text: "Track A-7", marks: [{ type: "link", attrs: { href: "https://example.com/a-7" } }] }),
        ],
      },
    });
  });

  it("renders the resolved document to an email's HTML, escaping what the payload put in", async () => {
    const rendered = renderContent(template(JSON.stringify(body)), run());
    if (rendered.content.case !== "maily") throw new Error("not a block-editor body");
    const html = await mailyHtml(rendered.content.value);
    expect(html).toMatch(/^<!DOCTYPE html/);
    expect(html).toContain("Hi <!-- -->Ada");
    expect(html).toContain("&lt;b&gt;tea&lt;/b&gt;");
    expect(html).toContain('href="https://example.com/o"');
    expect(html).not.toContain("Premium only");
  });

  it("fails the step when a repeat's list is not a list or the document nests too deep, and leaves other bodies alone", () => {
    const broken = { type: "doc", content: [{ type: "repeat", attrs: { each: "payload.cta" }, content: [paragraph(text("x"))] }] };
    expect(() => renderContent(template(JSON.stringify(broken)), run())).toThrow(/is not an array/);
    expect(renderContent(template("<p>{{ payload.cta }}</p>"), run()).content).toEqual({ case: "text", value: "<p>Open</p>" });
    // Deeper than any editor nests: refused with a reason, never walked until the stack runs out.
    const depth = 5_000;
    const deep = `{"type":"doc","content":[${'{"type":"paragraph","content":['.repeat(depth)}{"type":"text","text":"x"}${"]}".repeat(depth)}]}`;
    expect(() => renderContent(template(deep), run())).toThrow("the block-editor document nests deeper than 64 levels");
    // Repeats within repeats over a payload list: refused once the document would hold too many blocks.
    const list = Array.from({ length: 1_000 }, (_, index) => index);
    const rule: MailyNode = { type: "horizontalRule" };
    const repeated = {
      type: "doc",
      content: [{ type: "repeat", attrs: { each: "payload.list" }, content: [{ type: "repeat", attrs: { each: "payload.list" }, content: [rule] }] }],
    };
    const withList = renderer(workflowsV1.TemplateEngine.LIQUID, { payload: { list }, subscriber: {} });
    expect(() => renderContent(template(JSON.stringify(repeated)), withList)).toThrow(
      "the block-editor document grows beyond 20000 blocks when its repeats are resolved",
    );
    // A workflow written through v1 has HTML bodies, even one that reads as JSON.
    expect(renderContent(template('{"type":"doc"}'), run(workflowsV1.TemplateEngine.HANDLEBARS)).content).toEqual({ case: "text", value: '{"type":"doc"}' });
  });
});
