import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { createPool } from "@notify/runtime";
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
  await createIntegration(stack, {
    providerId: "nodemailer",
    channel: "email",
    identifier: "layouts-smtp",
    credentials: sinkCredentials(sink),
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

const htmlLayout = (header: string) =>
  `<html><head><title>Brand</title></head><body><h1>${header} {{ subscriber.firstName }}</h1>{{content}}<p>Acme Inc, 1 Main St</p></body></html>`;

/** A block-editor layout: a banner, the email, a footer. */
const blockLayout = JSON.stringify({
  type: "doc",
  content: [
    { type: "paragraph", content: [{ type: "text", text: "Block banner for {{ subscriber.lastName }}" }] },
    { type: "paragraph", content: [{ type: "variable", attrs: { id: "content" } }] },
    { type: "paragraph", content: [{ type: "text", text: "Block footer" }] },
  ],
});

/** A layout made with this content (a new one starts as a block document holding only the email). */
async function layoutWith(layoutId: string, name: string, email: { body: string; editorType: "html" | "block" }) {
  await novu.layouts.create({ layoutId, name }, undefined, once);
  return (await novu.layouts.update({ name, controlValues: { email } }, layoutId, undefined, once)).result;
}

/** The HTML of the one mail the sink received for this address and subject. */
async function mailTo(address: string, transactionId: string): Promise<string> {
  await settledMessage(stack, transactionId, "email", delivered);
  const mails = sink.received.filter((received) => received.envelope.to.includes(address) && received.mail.subject === transactionId);
  expect(mails).toHaveLength(1);
  return String(mails[0]!.mail.html);
}

/** The layout a workflow's first step names, as the API answers it. */
const layoutIdOf = (workflow: { steps: { controls: { values: object } }[] }) => (workflow.steps[0]!.controls.values as { layoutId?: string }).layoutId;

async function trigger(workflowId: string, to: string, transactionId: string, overrides?: Record<string, unknown>) {
  const reply = await stack.request<Data<{ status: string }>>("POST", "/v1/events/trigger", {
    name: workflowId,
    to,
    payload: { order: transactionId },
    transactionId,
    ...(overrides ? { overrides } : {}),
  });
  expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
}

describe("email layouts (Novu's /v2/layouts)", () => {
  it("creates, lists, reads, changes, duplicates and deletes layouts as Novu's API does", async () => {
    const first = (await novu.layouts.create({ layoutId: "crud-main", name: "Main brand" }, undefined, once)).result;
    // The environment's first layout is its default, and starts as a block document holding the email.
    expect(first).toMatchObject({ layoutId: "crud-main", name: "Main brand", isDefault: true, origin: "novu-cloud", type: "BRIDGE" });
    expect(first.controls.values.email?.editorType).toBe("block");
    expect(first.controls.values.email?.body).toContain('"id":"content"');
    const second = (await novu.layouts.create({ layoutId: "crud-other", name: "Other brand" }, undefined, once)).result;
    expect(second.isDefault).toBe(false);

    const taken = await failureOf(novu.layouts.create({ layoutId: "crud-main", name: "Again" }, undefined, once));
    expect(taken).toBeInstanceOf(errors.ErrorDto);
    expect((taken as errors.ErrorDto).statusCode).toBe(409);

    // A layout is found by its id, its identifier or its slug.
    for (const key of [first.id, "crud-main", first.slug]) expect((await novu.layouts.retrieve(key, undefined, once)).result.id).toBe(first.id);
    const missing = await failureOf(novu.layouts.retrieve("crud-none", undefined, once));
    expect((missing as errors.ErrorDto).statusCode).toBe(404);

    const changed = (
      await novu.layouts.update(
        { name: "Main brand v2", controlValues: { email: { body: htmlLayout("Hello"), editorType: "html" } } },
        "crud-main",
        undefined,
        once,
      )
    ).result;
    expect(changed).toMatchObject({ name: "Main brand v2", isDefault: true, controls: { values: { email: { editorType: "html" } } } });
    // A body without the email's place, or not a document of its editor's kind, is refused and nothing changes.
    for (const [email, message] of [
      [{ body: "<html><body>No place</body></html>", editorType: "html" }, 'should contain the \\"content\\" variable'],
      [{ body: "<p>{{content}}</p>", editorType: "html" }, "valid HTML content"],
      [{ body: "{{content}}", editorType: "block" }, "valid Maily JSON content"],
    ] as const) {
      const refused = await failureOf(novu.layouts.update({ name: "Broken", controlValues: { email } }, "crud-main", undefined, once));
      expect(refused).toBeInstanceOf(errors.ValidationErrorDto);
      expect(JSON.stringify((refused as errors.ValidationErrorDto).errors)).toContain(message);
    }
    expect((await novu.layouts.retrieve("crud-main", undefined, once)).result.name).toBe("Main brand v2");

    const copy = (await novu.layouts.duplicate({ name: "Main Brand Copy" }, "crud-main", undefined, once)).result;
    expect(copy).toMatchObject({ layoutId: "main-brand-copy", isDefault: false, controls: { values: { email: { body: htmlLayout("Hello") } } } });

    const listed = (await novu.layouts.list({ query: "BRAND", orderBy: "name", orderDirection: "ASC", limit: 2 }, once)).result;
    expect(listed.totalCount).toBe(3);
    expect(listed.layouts.map((layout) => layout.layoutId)).toEqual(["main-brand-copy", "crud-main"]);
    // A list does not carry the layouts' content, as Novu's does not.
    expect(listed.layouts[1]!.controls.values).toEqual({});
    const rest = (await novu.layouts.list({ query: "brand", orderBy: "name", orderDirection: "ASC", limit: 2, offset: 2 }, once)).result;
    expect(rest.layouts.map((layout) => layout.layoutId)).toEqual(["crud-other"]);

    const preview = (await novu.layouts.generatePreview({ previewPayload: { subscriber: { firstName: "Ada" } } }, "crud-main", undefined, once)).result;
    expect(preview.result.preview?.body).toMatch(/<h1>Hello Ada<\/h1>.*Dynamic placeholder content.*Acme Inc/s);
    // What the layout reads and was not given shows as its own variable, as Novu's examples do.
    const example = (await novu.layouts.generatePreview({}, "crud-main", undefined, once)).result;
    expect(example.previewPayloadExample).toEqual({ subscriber: { firstName: "{{subscriber.firstName}}" } });
    expect(example.result.preview?.body).toContain("<h1>Hello {{subscriber.firstName}}</h1>");

    // The default layout stays; another goes.
    const refused = await failureOf(novu.layouts.delete("crud-main", undefined, once));
    expect((refused as errors.ErrorDto).statusCode).toBe(400);
    expect((refused as errors.ErrorDto).message).toContain("default layout");
    await novu.layouts.delete("main-brand-copy", undefined, once);
    expect(((await failureOf(novu.layouts.retrieve("main-brand-copy", undefined, once))) as errors.ErrorDto).statusCode).toBe(404);
  });

  it("wraps an email step's body in its layout, and lets a trigger's overrides choose another or none", async () => {
    const html = await layoutWith("send-html", "Send html", { body: htmlLayout("Dear"), editorType: "html" });
    await layoutWith("send-block", "Send block", { body: blockLayout, editorType: "block" });

    // A layout named by its id is kept by its identifier, as Novu keeps it.
    const workflow = (
      await novu.workflows.create(
        {
          name: "Layout receipt",
          workflowId: "layout-receipt",
          active: true,
          steps: [
            {
              name: "Mail",
              stepId: "mail",
              type: "email",
              controlValues: { subject: "{{ payload.order }}", body: "<p>Order {{ payload.order }} shipped</p>", editorType: "html", layoutId: html.id },
            },
          ],
        },
        undefined,
        once,
      )
    ).result;
    expect(layoutIdOf(workflow)).toBe("send-html");
    expect((await novu.layouts.usage("send-html", undefined, once)).result.workflows).toEqual([{ name: "Layout receipt", workflowId: "layout-receipt" }]);

    // A preview shows the email in its layout, as a send would.
    const preview = await novu.workflows.steps.generatePreview(
      {
        workflowId: "layout-receipt",
        stepId: "mail",
        generatePreviewRequestDto: { previewPayload: { subscriber: { firstName: "Cy" }, payload: { order: "P-1" } } },
      },
      once,
    );
    expect((preview.result.result.preview as { body: string }).body).toMatch(/<h1>Dear Cy<\/h1>\s*<p>Order P-1 shipped<\/p>\s*<p>Acme Inc/);

    await stack.request("POST", "/v1/subscribers", { subscriberId: "layout-ada", firstName: "Ada", lastName: "Lovelace", email: "layout-ada@example.com" });

    await trigger("layout-receipt", "layout-ada", "layout-t1");
    const wrapped = await mailTo("layout-ada@example.com", "layout-t1");
    expect(wrapped).toMatch(/<h1>Dear Ada<\/h1>\s*<p>Order layout-t1 shipped<\/p>\s*<p>Acme Inc, 1 Main St<\/p>/);

    await trigger("layout-receipt", "layout-ada", "layout-t2", { channels: { email: { layoutId: null } } });
    const bare = await mailTo("layout-ada@example.com", "layout-t2");
    expect(bare).toContain("<p>Order layout-t2 shipped</p>");
    expect(bare).not.toContain("Acme Inc");

    // The step's own override wins over the channel's.
    await trigger("layout-receipt", "layout-ada", "layout-t3", { steps: { mail: { layoutId: "send-block" } }, channels: { email: { layoutId: null } } });
    const block = await mailTo("layout-ada@example.com", "layout-t3");
    expect(block).toMatch(/Block banner for Lovelace[\s\S]*<p>Order layout-t3 shipped<\/p>[\s\S]*Block footer/);
    expect(block).not.toContain("Acme Inc");
  }, 60_000);

  it("refuses a workflow naming a layout the environment does not have, and unhooks a deleted layout from its steps", async () => {
    const unknown = await failureOf(
      novu.workflows.create(
        {
          name: "Layout missing",
          workflowId: "layout-missing",
          steps: [{ name: "Mail", type: "email", controlValues: { subject: "s", body: "b", layoutId: "no-such-layout" } }],
        },
        undefined,
        once,
      ),
    );
    expect((unknown as errors.ErrorDto).statusCode).toBe(404);
    expect((unknown as errors.ErrorDto).message).toContain("Layout not found for id no-such-layout");

    await layoutWith("gone-soon", "Gone soon", { body: htmlLayout("Soon gone"), editorType: "html" });
    await novu.workflows.create(
      {
        name: "Layout unhooked",
        workflowId: "layout-unhooked",
        active: true,
        steps: [
          { name: "Mail", type: "email", controlValues: { subject: "{{ payload.order }}", body: "<p>Plain {{ payload.order }}</p>", layoutId: "gone-soon" } },
        ],
      },
      undefined,
      once,
    );
    await novu.layouts.delete("gone-soon", undefined, once);
    const kept = (await novu.workflows.get("layout-unhooked", undefined, undefined, once)).result;
    expect(layoutIdOf(kept)).toBeUndefined();

    await stack.request("POST", "/v1/subscribers", { subscriberId: "layout-bo", firstName: "Bo", email: "layout-bo@example.com" });
    await trigger("layout-unhooked", "layout-bo", "layout-u1");
    const mail = await mailTo("layout-bo@example.com", "layout-u1");
    expect(mail).toContain("<p>Plain layout-u1</p>");
    expect(mail).not.toContain("Soon gone");

    // A step saved before notify served layouts may name one of Novu's: its emails go as they went
    // then. Written straight to the store, before any trigger has read the workflow.
    await novu.workflows.create(
      {
        name: "Layout from Novu",
        workflowId: "layout-from-novu",
        active: true,
        steps: [{ name: "Mail", type: "email", controlValues: { subject: "{{ payload.order }}", body: "<p>Older {{ payload.order }}</p>" } }],
      },
      undefined,
      once,
    );
    const pool = createPool(stack.database.url, 1);
    try {
      await pool.query(
        `UPDATE triggers.workflows SET steps = jsonb_set(steps, '{0,template,layoutId}', '"novu-default-layout"') WHERE trigger_identifier = 'layout-from-novu'`,
      );
    } finally {
      await pool.end();
    }
    expect(layoutIdOf((await novu.workflows.get("layout-from-novu", undefined, undefined, once)).result)).toBe("novu-default-layout");
    await trigger("layout-from-novu", "layout-bo", "layout-u2");
    expect(await mailTo("layout-bo@example.com", "layout-u2")).toContain("<p>Older layout-u2</p>");
  }, 60_000);

  it("publishes a workflow to another environment with the layouts it names, and sends from there in them", async () => {
    await layoutWith("published-brand", "Published brand", { body: htmlLayout("Welcome"), editorType: "html" });
    await novu.workflows.create(
      {
        name: "Published receipt",
        workflowId: "published-receipt",
        active: true,
        steps: [
          {
            name: "Mail",
            type: "email",
            controlValues: { subject: "{{ payload.order }}", body: "<p>Sent {{ payload.order }}</p>", layoutId: "published-brand" },
          },
        ],
      },
      undefined,
      once,
    );
    const production = (await novu.environments.create({ name: "Layouts production", color: "#222222" }, undefined, once)).result;
    const published = await novu.environments.publish(
      { resources: [{ resourceType: "REGULAR", resourceId: "published-receipt" }] },
      production.id,
      undefined,
      once,
    );
    expect(published.result.summary.failed).toBe(0);

    const there = new Novu({ secretKey: production.apiKeys![0]!.key, serverURL: stack.url });
    const layout = (await there.layouts.retrieve("published-brand", undefined, once)).result;
    // The target's first layout becomes its default there; its content is the source's.
    expect(layout).toMatchObject({
      name: "Published brand",
      isDefault: true,
      controls: { values: { email: { body: htmlLayout("Welcome"), editorType: "html" } } },
    });
    expect(layoutIdOf((await there.workflows.get("published-receipt", undefined, undefined, once)).result)).toBe("published-brand");

    await there.integrations.create(
      {
        providerId: "nodemailer",
        channel: "email",
        identifier: "layouts-smtp-production",
        active: true,
        credentials: sinkCredentials(sink),
      },
      undefined,
      once,
    );
    await there.subscribers.create({ subscriberId: "layout-cy", firstName: "Cy", email: "layout-cy@example.com" }, undefined, undefined, once);
    await there.trigger({ workflowId: "published-receipt", to: "layout-cy", payload: { order: "layout-p1" }, transactionId: "layout-p1" }, undefined, once);
    await eventually(async () => sink.received.find((received) => received.mail.subject === "layout-p1"), 20_000);
    const mail = String(sink.received.find((received) => received.mail.subject === "layout-p1")!.mail.html);
    expect(mail).toMatch(/<h1>Welcome Cy<\/h1>\s*<p>Sent layout-p1<\/p>\s*<p>Acme Inc/);

    // Publishing everything makes the target's layouts the source's: all copied, the target's own deleted, its default kept.
    await novu.layouts.create({ layoutId: "published-extra", name: "Published extra" }, undefined, once);
    await there.layouts.create({ layoutId: "target-only", name: "Target only" }, undefined, once);
    await novu.environments.publish({}, production.id, undefined, once);
    expect((await there.layouts.retrieve("published-extra", undefined, once)).result.controls.values.email?.editorType).toBe("block");
    expect(((await failureOf(there.layouts.retrieve("target-only", undefined, once))) as errors.ErrorDto).statusCode).toBe(404);
    expect((await there.layouts.retrieve("published-brand", undefined, once)).result.isDefault).toBe(true);
  }, 60_000);
});
