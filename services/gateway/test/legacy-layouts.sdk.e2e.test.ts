import { Novu } from "@novu/node";
import { createPool } from "@notify/runtime";
import { startSmtpSink, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, settledMessage, sinkCredentials } from "./delivery-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Novu's older layouts (/v1/layouts) through @novu/node 2.6.6, and the v1 workflows' emails sent in them.

let stack: Stack;
let novu: Novu;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  // The SMTP sink is local.
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.1/32" });
  novu = new Novu(stack.key, { backendUrl: stack.url });
  await createIntegration(stack, {
    providerId: "nodemailer",
    channel: "email",
    identifier: "legacy-layouts-smtp",
    credentials: sinkCredentials(sink),
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

interface LayoutDto {
  _id: string;
  name: string;
  identifier: string;
  content: string;
  isDefault: boolean;
  variables: { name: string; type: string; required: boolean; defaultValue?: string | boolean }[];
}

/** @novu/node answers the raw axios response: its body is Novu's `{data}` envelope (or a page). */
const dataOf = <T>(response: { data: unknown }) => (response.data as { data: T }).data;

/** The HTTP status and message of a failed @novu/node call (an axios error carries the response). */
async function refusal(call: Promise<unknown>): Promise<{ status: number | undefined; message: string }> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  const response = (error as { response?: { status?: number; data?: { message?: string; errors?: unknown } } } | undefined)?.response;
  return { status: response?.status, message: `${response?.data?.message} ${JSON.stringify(response?.data?.errors ?? {})}` };
}

const layoutContent = (brand: string) => `<html><body><h1>${brand} for {{subscriber.firstName}}</h1>{{{body}}}<p>{{companyName}} footer</p></body></html>`;

async function layout(id: string): Promise<LayoutDto> {
  const reply = await stack.request<Data<LayoutDto>>("GET", `/v1/layouts/${id}`);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.data;
}

/** The HTML of the one mail the sink received with this subject. */
async function mailWithSubject(transactionId: string): Promise<string> {
  await settledMessage(stack, transactionId, "email", delivered);
  const mails = sink.received.filter((received) => received.mail.subject === transactionId);
  expect(mails).toHaveLength(1);
  return String(mails[0]!.mail.html);
}

async function trigger(name: string, to: string, transactionId: string, overrides?: Record<string, unknown>) {
  await novu.trigger(name, { to: { subscriberId: to }, payload: { order: transactionId }, transactionId, ...(overrides ? { overrides } : {}) });
}

describe("@novu/node 2.6.6 layouts", () => {
  it("creates, lists, changes, makes default and deletes layouts as Novu's v1 API does", async () => {
    const created = dataOf<{ _id: string }>(
      await novu.layouts.create({
        name: "Brand",
        identifier: "brand-v1",
        description: "The brand",
        content: layoutContent("Brand"),
        variables: [{ name: "companyName", type: "String", required: false, defaultValue: "Acme" }],
        isDefault: true,
      } as never),
    );
    expect(Object.keys(created)).toEqual(["_id"]);
    const brand = await layout(created._id);
    // The variables kept are those the content reads (the email's `body` aside), with what the caller said of them.
    expect(brand).toMatchObject({ name: "Brand", identifier: "brand-v1", isDefault: true, content: layoutContent("Brand") });
    expect(brand.variables).toEqual([
      { name: "subscriber.firstName", type: "String", required: false },
      { name: "companyName", type: "String", required: false, defaultValue: "Acme" },
    ]);

    const noBody = await refusal(novu.layouts.create({ name: "x", identifier: "x", description: "", content: "<p>no body</p>" } as never));
    expect(noBody.status).toBe(422);
    expect(noBody.message).toContain("Layout content must contain {{{body}}}");
    expect((await refusal(novu.layouts.create({ name: "y", identifier: "brand-v1", description: "", content: "{{{body}}}" } as never))).status).toBe(409);

    const other = dataOf<{ _id: string }>(
      await novu.layouts.create({ name: "Other", identifier: "other-v1", description: "", content: "<div>{{{body}}}</div>" } as never),
    );
    expect((await layout(other._id)).isDefault).toBe(false);
    const page = (await novu.layouts.list({ page: 0, pageSize: 1 })).data as { data: LayoutDto[]; page: number; pageSize: number; totalCount: number };
    expect(page).toMatchObject({ page: 0, pageSize: 1, totalCount: 2 });
    expect(page.data.map((one) => one.identifier)).toEqual(["other-v1"]);

    const renamed = dataOf<LayoutDto>(await novu.layouts.update(other._id, { name: "Other renamed" }));
    expect(renamed).toMatchObject({ name: "Other renamed", content: "<div>{{{body}}}</div>", isDefault: false });
    // The default moves, never away.
    expect((await refusal(novu.layouts.update(created._id, { isDefault: false }))).message).toContain("One default layout is required");
    expect((await novu.layouts.setDefault(other._id)).status).toBe(204);
    expect([(await layout(created._id)).isDefault, (await layout(other._id)).isDefault]).toEqual([false, true]);

    expect((await refusal(novu.layouts.delete(other._id))).message).toContain("is being used as your default layout");
    expect((await novu.layouts.delete(created._id)).status).toBe(204);
    expect((await stack.request("GET", `/v1/layouts/${created._id}`)).status).toBe(404);
  });

  it("sends a v1 workflow's email in the layout its step names, or was bound to when saved, or the trigger's override", async () => {
    const framed = dataOf<{ _id: string }>(
      await novu.layouts.create({
        name: "Framed",
        identifier: "framed-v1",
        description: "",
        content: layoutContent("Framed"),
        variables: [{ name: "companyName", type: "String", required: false, defaultValue: "Acme" }],
      } as never),
    );
    await novu.layouts.create({
      name: "Boxed",
      identifier: "boxed-v1",
      description: "",
      content: "<html><body><section>Boxed {{{body}}}</section></body></html>",
    } as never);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "legacy-ada", firstName: "Ada", email: "legacy-ada@example.com" });

    const html = await createWorkflow(stack, "Legacy html", [
      { template: { type: "email", subject: "{{order}}", content: "<p>Order {{order}}</p>", contentType: "customHtml", layoutId: framed._id } },
    ]);
    await trigger(html, "legacy-ada", "legacy-t1", { layoutIdentifier: "no-such-layout" });
    // A variable the payload lacks takes its default, as in Novu.
    expect(await mailWithSubject("legacy-t1")).toMatch(/<h1>Framed for Ada<\/h1>\s*<p>Order legacy-t1<\/p>\s*<p>Acme footer<\/p>/);

    await trigger(html, "legacy-ada", "legacy-t2", { layoutIdentifier: "boxed-v1" });
    expect(await mailWithSubject("legacy-t2")).toMatch(/<section>Boxed <p>Order legacy-t2<\/p><\/section>/);

    // Editor blocks in a layout: the blocks alone inside it, as Novu puts them (the page is the layout's).
    const blocks = await createWorkflow(stack, "Legacy blocks", [
      { template: { type: "email", subject: "{{order}}", content: [{ type: "text", content: "Block {{order}}" }], layoutId: framed._id } },
    ]);
    await trigger(blocks, "legacy-ada", "legacy-t3");
    const laidOut = await mailWithSubject("legacy-t3");
    expect(laidOut).toMatch(/<h1>Framed for Ada<\/h1>\s*<table role="presentation"[^>]*>[\s\S]*Block legacy-t3[\s\S]*<\/table>\s*<p>Acme footer<\/p>/);
    expect(laidOut.match(/<html|<body/g)).toEqual(["<html", "<body"]);
    expect(laidOut).not.toMatch(/<!DOCTYPE|border-top/);

    // A step saved without a layout is bound to the environment's default at that moment.
    await novu.layouts.setDefault(framed._id);
    const bound = await createWorkflow(stack, "Legacy bound", [
      { template: { type: "email", subject: "{{order}}", content: "<p>Bound {{order}}</p>", contentType: "customHtml" } },
    ]);
    const saved = await stack.request<Data<{ steps: { template: { layoutId?: string } }[] }>>("GET", `/v1/workflows/${bound}`);
    expect(saved.body.data.steps[0]!.template.layoutId).toBe(framed._id);
    await trigger(bound, "legacy-ada", "legacy-t4");
    expect(await mailWithSubject("legacy-t4")).toContain("<h1>Framed for Ada</h1>");

    // A step saved before notify served layouts may name one of Novu's: its emails go without a
    // layout, as they went then. Written straight to the store, before any trigger read the workflow.
    const older = await createWorkflow(stack, "Legacy older", [
      { template: { type: "email", subject: "{{order}}", content: "<p>Older {{order}}</p>", contentType: "customHtml" } },
    ]);
    const pool = createPool(stack.database.url, 1);
    try {
      await pool.query(
        `UPDATE triggers.workflows SET steps = jsonb_set(steps, '{0,template,layoutId}', '"6500000000000000000000aa"') WHERE trigger_identifier = $1`,
        [older],
      );
    } finally {
      await pool.end();
    }
    await trigger(older, "legacy-ada", "legacy-t5");
    expect(await mailWithSubject("legacy-t5")).toBe("<p>Older legacy-t5</p>");

    // A layout a step names cannot be deleted.
    const inUse = await refusal(novu.layouts.delete(framed._id));
    expect(inUse.status).toBe(400);
    expect(inUse.message).toContain("is being used so it can not be deleted");
  }, 60_000);
});
