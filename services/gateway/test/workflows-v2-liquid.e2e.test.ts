import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { eventually, startSmtpSink, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, delivered, settledMessage, sinkCredentials } from "./delivery-helpers.js";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  // The SMTP sink is local.
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

async function trigger(workflowId: string, to: string, payload: Record<string, unknown>, transactionId?: string) {
  const reply = await stack.request<Data<{ status: string }>>("POST", "/v1/events/trigger", { name: workflowId, to, payload, transactionId });
  expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
}

/** The in-app contents of a subscriber's messages, once there are `count` of them. */
async function contentsOnceThere(subscriberId: string, count: number): Promise<string[]> {
  return eventually(async () => {
    const reply = await stack.request<Data<{ content: string; channel: string }[]>>("GET", `/v1/messages?subscriberId=${subscriberId}&channel=in_app`);
    return reply.body.data.length >= count ? reply.body.data.map((message) => message.content) : undefined;
  }, 15_000);
}

/** The validation errors, as JSON text, of creating a one-step in-app workflow with these control values. */
async function refusedControls(workflowId: string, controlValues: Record<string, unknown>): Promise<string> {
  const refused = await failureOf(
    novu.workflows.create({ name: workflowId, workflowId, steps: [{ name: "Bell", type: "in_app", controlValues }] }, undefined, once),
  );
  expect(refused).toBeInstanceOf(errors.ValidationErrorDto);
  return JSON.stringify((refused as errors.ValidationErrorDto).errors);
}

describe("workflows written through v2 render their templates as liquid, as Novu's do", () => {
  it("sends in-app messages rendered with liquid's filters and tags and Novu's own", async () => {
    await novu.workflows.create(
      {
        name: "Liquid orders",
        workflowId: "liquid-orders",
        active: true,
        steps: [
          {
            name: "Bell",
            type: "in_app",
            controlValues: {
              subject: "{{ payload.items | pluralize: 'item' }} for {{ subscriber.firstName | capitalize }}",
              body: "{% for item in payload.items %}{{ item.name | upcase }}{% unless forloop.last %}, {% endunless %}{% endfor %} from {{ payload.sellers | toSentence }}{% if payload.total > 100 %} (free shipping){% endif %}; note: {{ payload.note | default: 'none' }}",
              redirect: { url: "/orders/{{ payload.id | url_encode }}" },
            },
          },
        ],
      },
      undefined,
      once,
    );
    await stack.request("POST", "/v1/subscribers", { subscriberId: "liquid-ada", firstName: "ada" });
    await trigger("liquid-orders", "liquid-ada", {
      id: "A 7",
      total: 120,
      items: [{ name: "tea" }, { name: "cake" }],
      sellers: ["Kim", "Lee", "Ola", "Pat"],
    });
    const [content] = await contentsOnceThere("liquid-ada", 1);
    expect(content).toBe("TEA, CAKE from Kim, Lee, and 2 others (free shipping); note: none");
    const reply = await stack.request<Data<{ subject: string; cta: { data: { url: string } } }[]>>("GET", "/v1/messages?subscriberId=liquid-ada");
    expect(reply.body.data[0]).toMatchObject({ subject: "2 items for Ada", cta: { data: { url: "/orders/A+7" } } });
  });

  it("gives the steps after a digest its events and their count under steps.<stepId>", async () => {
    await novu.workflows.create(
      {
        name: "Liquid digest",
        workflowId: "liquid-digest",
        active: true,
        steps: [
          { name: "Comments", stepId: "comments", type: "digest", controlValues: { amount: 2, unit: "seconds" } },
          {
            name: "Bell",
            type: "in_app",
            controlValues: {
              body: "{{ steps.comments.eventCount }} comments by {{ steps.comments.events | map: 'payload' | map: 'author' | sort | digest: 2 }}; first {{ steps.comments.events.first.id }} in {{ steps.comments.events.first.time | date: '%Y' }}",
            },
          },
        ],
      },
      undefined,
      once,
    );
    for (const [index, author] of ["Cy", "Al", "Bo"].entries()) await trigger("liquid-digest", "liquid-digested", { author }, `t-digest-${index}`);
    const [content] = await contentsOnceThere("liquid-digested", 1);
    // Events are in the order they reached the digest, which concurrent jobs may swap.
    expect(content).toMatch(new RegExp(`^3 comments by Al, Bo and 1 other; first t-digest-[012] in ${new Date().getUTCFullYear()}$`));
  });

  it("refuses a template that is not liquid with 422 naming it, and keeps a workflow written through v1 in handlebars", async () => {
    expect(await refusedControls("liquid-broken", { body: "{% if payload.x %}never closed" })).toContain(
      "is not a valid template: tag {% if payload.x %} not closed",
    );

    const group = (await stack.request<Data<{ _id: string }[]>>("GET", "/v1/notification-groups")).body.data[0]!._id;
    const written = await stack.request<Data<{ _id: string }>>("POST", "/v1/workflows", {
      name: "Handlebars kept",
      notificationGroupId: group,
      active: true,
      steps: [{ template: { type: "in_app", content: "{{#gt total 100}}Big{{else}}Small{{/gt}} order for {{titlecase name}}" } }],
    });
    expect(written.status, JSON.stringify(written.body)).toBe(201);
    // An update through v2 keeps the language the templates are written in.
    const updated = await stack.request<Data<{ origin: string; steps: { origin: string }[] }>>("PATCH", `/v2/workflows/${written.body.data._id}`, {
      name: "Handlebars still",
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    // Novu's origin of a workflow its v1 API made, which renders with handlebars.
    expect(updated.body.data.origin).toBe("novu-cloud-v1");
    expect(updated.body.data.steps.map((step) => step.origin)).toEqual(["novu-cloud-v1"]);
    const listed = await novu.workflows.list({ query: "Handlebars still" });
    expect(listed.result.workflows.map((workflow) => workflow.origin)).toEqual(["novu-cloud-v1"]);
    expect((await novu.workflows.get("liquid-orders")).result.origin).toBe("novu-cloud");
    await trigger("handlebars-kept", "liquid-hb", { total: 120, name: "ada" });
    expect(await contentsOnceThere("liquid-hb", 1)).toEqual(["Big order for Ada"]);
  });

  it("reads no server file through a partial: one named in the template is refused, one the payload names fails its step", async () => {
    expect(await refusedControls("liquid-include", { body: '{% include "package.json" %}' })).toContain('Failed to lookup \\"package.json\\"');

    await novu.workflows.create(
      {
        name: "Include by payload",
        workflowId: "liquid-include-payload",
        active: true,
        steps: [
          { name: "Leak", type: "in_app", controlValues: { body: "{% include payload.file %}" } },
          { name: "After", type: "in_app", controlValues: { body: "after {{ payload.file }}" } },
        ],
      },
      undefined,
      once,
    );
    await trigger("liquid-include-payload", "liquid-include", { file: "package.json" });
    expect(await contentsOnceThere("liquid-include", 1)).toEqual(["after package.json"]);
  });

  it("sends an email written in Novu's block editor as the HTML its document renders to", async () => {
    await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      identifier: "liquid-smtp",
      credentials: sinkCredentials(sink),
    });
    const paragraph = (...content: unknown[]) => ({ type: "paragraph", content });
    const document = {
      type: "doc",
      content: [
        paragraph({ type: "text", text: "Hi " }, { type: "variable", attrs: { id: "subscriber.firstName" } }, { type: "text", text: "," }),
        { ...paragraph({ type: "text", text: "VIP lounge" }), attrs: { showIfKey: "payload.vip" } },
        {
          type: "repeat",
          attrs: { each: "payload.items" },
          content: [paragraph({ type: "text", text: "Item: " }, { type: "variable", attrs: { id: "payload.items.name" } })],
        },
        { type: "button", attrs: { text: "Track {{ payload.order | upcase }}", url: "payload.link", isUrlVariable: true } },
      ],
    };
    await novu.workflows.create(
      {
        name: "Block receipt",
        workflowId: "block-receipt",
        active: true,
        steps: [
          {
            name: "Mail",
            type: "email",
            controlValues: { subject: "Receipt for {{ subscriber.firstName }}", body: JSON.stringify(document), editorType: "block" },
          },
        ],
      },
      undefined,
      once,
    );
    await stack.request("POST", "/v1/subscribers", { subscriberId: "block-ada", firstName: "Ada", email: "block-ada@example.com" });
    await trigger(
      "block-receipt",
      "block-ada",
      { vip: false, order: "a-7", link: "https://example.com/t/a-7", items: [{ name: "<i>tea</i>" }, { name: "cake" }] },
      "t-block-1",
    );
    await settledMessage(stack, "t-block-1", "email", delivered);
    const mail = sink.received.find((received) => received.envelope.to.includes("block-ada@example.com"))!;
    expect(mail.mail.subject).toBe("Receipt for Ada");
    const html = String(mail.mail.html);
    // Sanitized as Novu sends it: the whole page the document renders to, its doctype, head and table attributes kept.
    expect(html).toMatch(/^<!DOCTYPE html [^>]*><html[^>]*><head>/);
    expect(html).toContain('<meta name="viewport"');
    expect(html).toMatch(/<table align="center"[^>]*cellpadding="0"/);
    expect(html).toContain("&lt;i&gt;tea&lt;/i&gt;");
    expect(html).toContain('href="https://example.com/t/a-7"');
    expect(html).toContain("Track A-7");
    expect(html).not.toContain("VIP lounge");
    expect(mail.mail.text).toMatch(/Hi Ada,\s+Item: <i>tea<\/i>\s+Item: cake\s+Track A-7/);

    // The step's preview renders the same document.
    const preview = await novu.workflows.steps.generatePreview(
      {
        workflowId: "block-receipt",
        stepId: "mail",
        generatePreviewRequestDto: { previewPayload: { payload: { vip: true, order: "b-8", link: "https://example.com/t/b-8", items: [] } } },
      },
      once,
    );
    expect(preview.result.result).toMatchObject({ type: "email", preview: { subject: "Receipt for {{subscriber.firstName}}" } });
    const previewed = String((preview.result.result!.preview as { body: string }).body);
    expect(previewed).toContain("VIP lounge");
    expect(previewed).toContain("Track B-8");
    expect(previewed).not.toContain("Item:");
  });

  it("sanitizes an HTML email body unless the step's disableOutputSanitization says not to", async () => {
    const step = (disableOutputSanitization: boolean) => ({
      name: "Mail",
      type: "email" as const,
      controlValues: { subject: "Note", body: "<p>{{ payload.note }}</p>", editorType: "html", disableOutputSanitization },
    });
    for (const [workflowId, disabled] of [
      ["html-sanitized", false],
      ["html-as-is", true],
    ] as const) {
      const created = await novu.workflows.create({ name: workflowId, workflowId, active: true, steps: [step(disabled)] }, undefined, once);
      expect(created.result.steps[0]!.controlValues).toMatchObject({ disableOutputSanitization: disabled });
    }
    await stack.request("POST", "/v1/subscribers", { subscriberId: "html-ada", email: "html-ada@example.com" });
    const note = '<b>hi</b><script>alert(1)</script><a href="javascript:steal()" onclick="steal()">x</a>';
    for (const workflowId of ["html-sanitized", "html-as-is"]) {
      await trigger(workflowId, "html-ada", { note }, `t-${workflowId}`);
      await settledMessage(stack, `t-${workflowId}`, "email", delivered);
    }
    const bodies = sink.received.filter((received) => received.envelope.to.includes("html-ada@example.com")).map((received) => String(received.mail.html));
    expect(bodies).toHaveLength(2);
    expect(bodies).toContain("<p><b>hi</b><a>x</a></p>");
    expect(bodies).toContain(`<p>${note}</p>`);
  });

  it("runs a step only when its conditions (Novu's skip control) hold, and refuses conditions that are not JSON Logic", async () => {
    const pro = { "==": [{ var: "payload.plan" }, "pro"] };
    const big = { ">": [{ var: "payload.total" }, 100] };
    const created = await novu.workflows.create(
      {
        name: "Conditional",
        workflowId: "conditional",
        active: true,
        steps: [
          { name: "Pro", type: "in_app", controlValues: { body: "pro", skip: pro } },
          { name: "Big", type: "in_app", controlValues: { body: "big", skip: big } },
          { name: "Always", type: "in_app", controlValues: { body: "always", skip: {} } },
        ],
      },
      undefined,
      once,
    );
    expect(created.result.steps.map((step) => (step.controlValues as { skip?: unknown } | undefined)?.skip)).toEqual([pro, big, undefined]);
    await trigger("conditional", "conditional-ada", { plan: "pro", total: "50" });
    await contentsOnceThere("conditional-ada", 2);
    // A while longer, so a message of the step whose conditions fail would show.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await contentsOnceThere("conditional-ada", 2)).sort()).toEqual(["always", "pro"]);

    expect(await refusedControls("bad-conditions", { body: "x", skip: { a: 1, b: 2 } })).toContain("skip must be a JSON Logic rule");
  });
});
