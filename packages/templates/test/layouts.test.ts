import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { commonV1, layoutsV1, workflowsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { emailHtml, v1StepRender } from "../src/email.js";
import { renderContent } from "../src/message.js";
import { stepLayoutId } from "../src/layouts.js";
import { renderer } from "../src/render.js";

const { HANDLEBARS, LIQUID } = workflowsV1.TemplateEngine;

const step = (type: commonV1.StepType, layoutId?: string) =>
  create(workflowsV1.StepSchema, { id: "0123456789abcdef01234567", stepId: "mail", template: { type, ...(layoutId ? { layoutId } : {}) } });

describe("the layout an email step is sent in", () => {
  const mail = step(commonV1.StepType.EMAIL, "own");

  it("is the step's own unless the trigger's overrides name another, the step's override first", () => {
    expect(stepLayoutId(mail, LIQUID, {})).toBe("own");
    expect(stepLayoutId(step(commonV1.StepType.EMAIL), LIQUID, {})).toBeUndefined();
    expect(stepLayoutId(mail, LIQUID, { layoutIdentifier: "old" })).toBe("old");
    expect(stepLayoutId(mail, LIQUID, { layoutIdentifier: "old", channels: { email: { layoutId: "channel" } } })).toBe("channel");
    const all = { layoutIdentifier: "old", channels: { email: { layoutId: "channel" } }, steps: { mail: { layoutId: "step" } } };
    expect(stepLayoutId(mail, LIQUID, all)).toBe("step");
    // A step is named by its stepId or its _id.
    expect(stepLayoutId(mail, LIQUID, { steps: { "0123456789abcdef01234567": { layoutId: "by-id" } } })).toBe("by-id");
  });

  it("is none when the first override that is set says null, and for steps that are not emails of a v2 workflow", () => {
    expect(stepLayoutId(mail, LIQUID, { channels: { email: { layoutId: null } }, layoutIdentifier: "old" })).toBeUndefined();
    expect(stepLayoutId(mail, LIQUID, { steps: { mail: { layoutId: "step" } }, channels: { email: { layoutId: null } } })).toBe("step");
    expect(stepLayoutId(mail, HANDLEBARS, { layoutIdentifier: "old" })).toBeUndefined();
    expect(stepLayoutId(step(commonV1.StepType.IN_APP, "own"), LIQUID, {})).toBeUndefined();
  });
});

describe("an email in its layout", () => {
  const template = create(workflowsV1.MessageTemplateSchema, { type: commonV1.StepType.EMAIL });
  const render = () => renderer(LIQUID, { payload: {}, subscriber: { firstName: "<b>Ada</b>" } });
  const html = (body: string) => create(layoutsV1.EmailLayoutContentSchema, { body, editorType: layoutsV1.EditorType.HTML });

  it("goes where the layout's content variable is, as it is, once the layout rendered; only what the email's body holds", async () => {
    const email = "<!DOCTYPE html><html><head><title>t</title></head><body><!-- c --><p>{{ subscriber.firstName }} &amp; co</p></body></html>";
    const layout = html("<html><body><h1>{{ subscriber.firstName }}</h1>{{ content }}<footer>f</footer></body></html>");
    const unsanitized = create(workflowsV1.MessageTemplateSchema, { type: commonV1.StepType.EMAIL, disableOutputSanitization: true });
    // The email's text is not rendered again: its own braces stay braces.
    expect(await emailHtml(unsanitized, { case: "text", value: email }, render(), layout)).toBe(
      "<html><body><h1><b>Ada</b></h1><p>{{ subscriber.firstName }} &amp; co</p><footer>f</footer></body></html>",
    );
  });

  it("is sanitized as a whole, layout included", async () => {
    const layout = html("<html><body><script>steal()</script>{{content}}<img src=x onerror=steal()></body></html>");
    expect(await emailHtml(template, { case: "text", value: "<p>Hi</p>" }, render(), layout)).toBe('<html><body><p>Hi</p><img src="x" /></body></html>');
  });

  it("goes into a block-editor layout at its content variable node", async () => {
    const body = JSON.stringify({
      type: "doc",
      content: [
        { type: "paragraph", content: [{ type: "text", text: "Top" }] },
        { type: "paragraph", content: [{ type: "variable", attrs: { id: "content" } }] },
        { type: "paragraph", content: [{ type: "text", text: "Bottom for {{ subscriber.firstName }}" }] },
      ],
    });
    const layout = create(layoutsV1.EmailLayoutContentSchema, { body, editorType: layoutsV1.EditorType.BLOCK });
    const sent = await emailHtml(template, { case: "text", value: "<p>Middle</p>" }, render(), layout);
    expect(sent).toMatch(/Top[\s\S]*<p>Middle<\/p>[\s\S]*Bottom for &lt;b&gt;Ada&lt;\/b&gt;/);
  });

  it("goes into a legacy layout at its {{{body}}}, whose variables' defaults stand in for what the payload lacks", async () => {
    const legacy = create(layoutsV1.LegacyLayoutSchema, {
      content: "<div>{{company}} {{{ body }}} {{plan}} {{subscriber.firstName}}</div>",
      variables: [
        { name: "company", type: "String", defaultValue: fromJson(ValueSchema, "Acme") },
        { name: "plan", type: "String", defaultValue: fromJson(ValueSchema, "free") },
      ],
    });
    const v1 = renderer(HANDLEBARS, { payload: { plan: "gold" }, subscriber: { firstName: "Ada" } });
    expect(await emailHtml(template, { case: "text", value: "<p>{{plan}}</p>" }, v1, legacy)).toBe("<div>Acme <p>{{plan}}</p> gold Ada</div>");
  });

  it("reads, with the v1 email's body, the step's rendered subject and preheader and the branding; the preheader hidden after the layout's <body>", async () => {
    const legacy = create(layoutsV1.LegacyLayoutSchema, {
      content: '<html><head><title>{{subject}}</title></head><body class="page">{{{body}}}<p style="color:{{branding.color}}">{{company}}</p></body></html>',
    });
    const mail = create(workflowsV1.MessageTemplateSchema, {
      type: commonV1.StepType.EMAIL,
      subject: " Order {{order}} ",
      preheader: "{{count}} items shipped",
      content: { case: "text", value: "<p>{{subject}} / {{preheader}}</p>" },
    });
    // The step's subject and preheader go over the payload's keys of the same names, as in Novu.
    const render = v1StepRender(mail, renderer(HANDLEBARS, { payload: { order: 7, count: 2, company: "Acme", subject: "payload's" }, subscriber: {} }), {
      color: "#f47373",
    });
    const rendered = renderContent(mail, render);
    if (rendered.content.case !== "text") throw new Error("not an HTML body");
    const html = await emailHtml(mail, rendered.content, render, legacy);
    expect(html).toMatch(
      /^<html><head><title>Order 7<\/title><\/head><body class="page"><div style="display: none; max-height: 0px; overflow: hidden;">2 items shipped(&nbsp;&zwnj;)+<\/div><p>Order 7 \/ 2 items shipped<\/p><p style="color:#f47373">Acme<\/p><\/body><\/html>$/,
    );
    // No preheader, nothing hidden; a v2 step reads none of these.
    const plain = create(workflowsV1.MessageTemplateSchema, { ...mail, preheader: undefined });
    expect(
      await emailHtml(plain, { case: "text", value: "<p>Hi</p>" }, v1StepRender(plain, renderer(HANDLEBARS, { payload: {}, subscriber: {} }), {}), legacy),
    ).not.toContain("display: none");
    const liquid = renderer(LIQUID, { payload: {}, subscriber: {} });
    expect(v1StepRender(mail, liquid, {})).toBe(liquid);
  });

  it("gives a v1 in-app step the branding over the payload's, and an SMS none, as Novu's compilers do", () => {
    const run = renderer(HANDLEBARS, { payload: { branding: { color: "payload's" } }, subscriber: {} });
    const branding = { logo: "https://cdn.example.com/logo.png", color: "#123456" };
    const inApp = create(workflowsV1.MessageTemplateSchema, { type: commonV1.StepType.IN_APP });
    expect(v1StepRender(inApp, run, branding)('<img src="{{branding.logo}}"> {{branding.color}}')).toBe('<img src="https://cdn.example.com/logo.png"> #123456');
    const sms = create(workflowsV1.MessageTemplateSchema, { type: commonV1.StepType.SMS });
    expect(v1StepRender(sms, run, branding)("{{branding.color}}")).toBe("payload's");
  });

  it("is not sent when the payload lacks a legacy layout's required variable, default or not, as in Novu", async () => {
    const legacy = create(layoutsV1.LegacyLayoutSchema, {
      content: "<div>{{{body}}} {{order.id}} {{subscriber.firstName}}</div>",
      variables: [
        { name: "order.id", type: "String", required: true },
        { name: "subscriber.firstName", type: "String", required: true },
      ],
    });
    const email = { case: "text" as const, value: "<p>Hi</p>" };
    const lacking = renderer(HANDLEBARS, { payload: { order: {} }, subscriber: {} });
    await expect(emailHtml(template, email, lacking, legacy)).rejects.toThrow("payload is missing required key(s) and type(s): order.id (Value)");
    const having = renderer(HANDLEBARS, { payload: { order: { id: "A-7" } }, subscriber: {} });
    expect(await emailHtml(template, email, having, legacy)).toBe("<div><p>Hi</p> A-7 </div>");
    const defaulted = create(layoutsV1.LegacyLayoutSchema, {
      content: "<div>{{{body}}} {{order.id}} {{order.currency}}</div>",
      variables: [
        { name: "order.id", type: "String", required: true, defaultValue: fromJson(ValueSchema, "none") },
        { name: "order.currency", type: "String", defaultValue: fromJson(ValueSchema, "EUR") },
      ],
    });
    await expect(emailHtml(template, email, lacking, defaulted)).rejects.toThrow("payload is missing required key(s) and type(s): order.id (Value)");
    // A dotted default fills in beside what the payload's object holds.
    expect(await emailHtml(template, email, having, defaulted)).toBe("<div><p>Hi</p> A-7 EUR</div>");
  });
});
