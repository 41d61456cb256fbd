import { create } from "@bufbuild/protobuf";
import { commonV1, workflowsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { emailHtml } from "../src/email.js";
import { renderContent } from "../src/message.js";
import { renderBudget, renderer } from "../src/render.js";

const { HANDLEBARS, LIQUID } = workflowsV1.TemplateEngine;
const BODY = '<html><head><style>p{color:#111}</style></head><body><p style="margin:0">Hi {{ payload.name }}{{name}}</p></body></html>';
const HOSTILE = '<b>Ada</b><script>alert(1)</script><img src="https://example.com/a.png" onerror="steal()"><a href="javascript:steal()">x</a>';

async function sent(engine: workflowsV1.TemplateEngine, disableOutputSanitization?: boolean) {
  const template = create(workflowsV1.MessageTemplateSchema, {
    type: commonV1.StepType.EMAIL,
    content: { case: "text", value: BODY },
    ...(disableOutputSanitization === undefined ? {} : { disableOutputSanitization }),
  });
  const render = renderer(engine, { payload: { name: HOSTILE }, subscriber: {} });
  const rendered = renderContent(template, render);
  if (rendered.content.case !== "text") throw new Error("not an HTML body");
  return emailHtml(template, rendered.content, render);
}

describe("the HTML an email step sends", () => {
  it("is sanitized for a liquid workflow as Novu sanitizes it: the page, styles and attributes stay, scripts, script links and (unlike Novu) handlers go", async () => {
    expect(await sent(LIQUID)).toBe(
      '<html><head><style>p{color:#111}</style></head><body><p style="margin:0">Hi <b>Ada</b><img src="https://example.com/a.png" /><a>x</a></p></body></html>',
    );
  });

  it("keeps a mail's doctype, head and table layout through sanitizing, as Novu does", async () => {
    const page =
      '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"><html dir="ltr" lang="en"><head><meta name="viewport" content="width=device-width" />' +
      '<title>News</title><link rel="stylesheet" href="https://example.com/a.css" /></head><body style="margin:0;background:#eee">' +
      '<table width="600" align="center" bgcolor="#ffffff" cellpadding="0" cellspacing="0" border="0" role="presentation" class="card"><tr><td valign="top">Hi</td></tr></table>' +
      '<iframe src="https://example.com"></iframe></body></html>';
    const template = create(workflowsV1.MessageTemplateSchema, { type: commonV1.StepType.EMAIL });
    expect(await emailHtml(template, { case: "text", value: page }, renderer(LIQUID, { payload: {}, subscriber: {} }))).toBe(
      page.replace(/<iframe.*<\/iframe>/, ""),
    );
  });

  it("is the rendered HTML as it is when the step turns sanitizing off, and for a v1 workflow (whose engine escaped the payload)", async () => {
    expect(await sent(LIQUID, true)).toContain("<script>alert(1)</script>");
    const v1 = await sent(HANDLEBARS);
    expect(v1).toMatch(/^<html><head><style>p\{color:#111\}<\/style><\/head><body><p style="margin:0">Hi &lt;b&gt;Ada&lt;\/b&gt;&lt;script&gt;/);
    expect(v1).not.toContain("<script>");
  });

  it("is sanitized within the job's rendering budget: HTML a spent budget would sanitize is refused", async () => {
    const template = create(workflowsV1.MessageTemplateSchema, { type: commonV1.StepType.EMAIL, content: { case: "text", value: BODY } });
    const budget = renderBudget();
    const render = renderer(LIQUID, { payload: { name: "Ada" }, subscriber: {} }, budget);
    const rendered = renderContent(template, render);
    if (rendered.content.case !== "text") throw new Error("not an HTML body");
    const spentBefore = budget.spentMs;
    await emailHtml(template, rendered.content, render);
    expect(budget.spentMs).toBeGreaterThan(spentBefore);
    budget.spent = true;
    await expect(emailHtml(template, rendered.content, render)).rejects.toThrow(/took too long for this job/);
  });
});
