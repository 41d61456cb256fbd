import { create } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { renderContent, renderCta, renderJson } from "../src/message.js";
import { renderer } from "../src/render.js";

const data = renderer(workflowsV1.TemplateEngine.HANDLEBARS, { payload: { name: "Ada", id: 7 }, subscriber: {} });

describe("renderContent", () => {
  it("renders subject, title and text content, leaving absent fields absent", () => {
    const template = create(workflowsV1.MessageTemplateSchema, { subject: "Hi {{name}}", content: { case: "text", value: "#{{payload.id}}" } });
    expect(renderContent(template, data)).toEqual({ subject: "Hi Ada", content: { case: "text", value: "#7" } });
  });

  it("renders each editor block's content and url, keeping its type and alignment", () => {
    const template = create(workflowsV1.MessageTemplateSchema, {
      title: "{{uppercase name}}",
      content: {
        case: "blocks",
        value: {
          blocks: [
            { type: "text", content: "Hello {{name}}", textAlign: "center" },
            { type: "button", content: "Open", url: "/o/{{id}}" },
          ],
        },
      },
    });
    expect(renderContent(template, data)).toEqual({
      title: "ADA",
      content: {
        case: "blocks",
        value: [
          { type: "text", content: "Hello Ada", textAlign: "center" },
          { type: "button", content: "Open", url: "/o/7" },
        ],
      },
    });
  });

  it("renders an email step's sender name with the same variables, without the whitespace around it", () => {
    const template = create(workflowsV1.MessageTemplateSchema, { senderName: " {{name}} at Acme\n", content: { case: "text", value: "Hi" } });
    expect(renderContent(template, data)).toEqual({ senderName: "Ada at Acme", content: { case: "text", value: "Hi" } });
  });

  it("throws on a template that does not render", () => {
    expect(() => renderContent(create(workflowsV1.MessageTemplateSchema, { subject: "{{#if x}}" }), data)).toThrow();
  });
});

describe("renderCta and renderJson", () => {
  it("render the redirect url, button texts and every string of the data", () => {
    const cta = create(workflowsV1.MessageCtaSchema, {
      type: "redirect",
      data: { url: "/orders/{{id}}" },
      action: { status: "pending", buttons: [{ type: "primary", content: "Pay {{name}}", resultContent: "Paid {{id}}" }] },
    });
    expect(renderCta(cta, data)).toEqual({
      type: "redirect",
      url: "/orders/7",
      action: { status: "pending", buttons: [{ type: "primary", content: "Pay Ada", resultContent: "Paid 7" }] },
    });
    expect(renderJson({ who: "{{name}}", list: ["{{id}}", 3, null], nested: { flag: true } }, data)).toEqual({
      who: "Ada",
      list: ["7", 3, null],
      nested: { flag: true },
    });
  });
});
