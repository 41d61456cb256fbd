import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSession } from "./inbox-helpers.js";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Json, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
let workflowDatabaseId: string;
let stepIds: Record<string, string>;

const inApp = {
  subject: "Order {{payload.order}}",
  body: "Order {{payload.order}} for {{ subscriber.firstName | capitalize }}",
  avatar: "https://example.com/{{payload.order}}.png",
  primaryAction: { label: "Open {{payload.order}}" },
  redirect: { url: "/orders/{{payload.order}}" },
  data: { order: "{{payload.order}}", count: 2 },
};

beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
  const created = await novu.workflows.create({
    name: "Previews",
    workflowId: "previews",
    active: true,
    steps: [
      { name: "Bell", type: "in_app", controlValues: inApp },
      {
        name: "Receipt",
        type: "email",
        controlValues: {
          subject: "Receipt for {{ payload.name | upcase }}",
          body: "<p>Total {{ payload.total | round: 2 }}</p><ul>{% for item in payload.items %}<li>{{ item.name }}</li>{% endfor %}</ul>",
          editorType: "html",
        },
      },
      { name: "Slack", type: "chat", controlValues: { body: "{% if payload.total > 1000 %}Big{% else %}Small{% endif %} order by {{ subscriber.email }}" } },
    ],
  });
  workflowDatabaseId = created.result.id;
  stepIds = Object.fromEntries(created.result.steps.map((step) => [step.stepId, step.id]));
}, 120_000);
afterAll(() => stack?.stop());

const preview = (stepId: string, generatePreviewRequestDto: Parameters<Novu["workflows"]["steps"]["generatePreview"]>[0]["generatePreviewRequestDto"]) =>
  novu.workflows.steps.generatePreview({ workflowId: "previews", stepId, generatePreviewRequestDto }, once);

describe("workflows.steps.generatePreview through @novu/api 3.19.1", () => {
  it("renders an in-app step with the payload and subscriber given, as the message a trigger delivers reads", async () => {
    const answered = await preview("bell", { previewPayload: { payload: { order: 42 }, subscriber: { firstName: "ada" } } });
    expect(answered.result.result).toEqual({
      type: "in_app",
      preview: {
        subject: "Order 42",
        body: "Order 42 for Ada",
        avatar: "https://example.com/42.png",
        primaryAction: { label: "Open 42" },
        redirect: { url: "/orders/42" },
        data: { order: "42", count: 2 },
      },
    });
    expect(answered.result.previewPayloadExample).toEqual({ payload: { order: 42 }, subscriber: { firstName: "ada" } });

    await stack.request("POST", "/v1/subscribers", { subscriberId: "preview-ada", firstName: "ada" });
    const triggered = await stack.request("POST", "/v1/events/trigger", { name: "previews", to: "preview-ada", payload: { order: 42, total: 5, name: "x" } });
    expect(triggered.status, JSON.stringify(triggered.body)).toBe(201);
    const session = await openSession(stack, "preview-ada");
    const delivered = await eventually(async () => {
      const page = await stack.request<{ data: Json[] }>("GET", "/v1/inbox/notifications", undefined, { authorization: `Bearer ${session.token}` });
      return page.body.data[0];
    }, 15_000);
    expect(delivered).toMatchObject({ subject: "Order 42", body: "Order 42 for Ada", data: { order: "42", count: 2 }, redirect: { url: "/orders/42" } });
  });

  it("renders an email step's subject and HTML body as liquid, as Novu renders workflows written through v2", async () => {
    const answered = await preview("receipt", {
      previewPayload: { payload: { name: "<b>ada</b>", total: 1234.567, items: [{ name: "tea" }, { name: "cake" }] } },
    });
    expect(answered.result.result).toEqual({
      type: "email",
      preview: { subject: "Receipt for <B>ADA</B>", body: "<p>Total 1234.57</p><ul><li>tea</li><li>cake</li></ul>" },
    });
  });

  /** The preview of the only step of an SMS workflow written through v1 with this content. */
  async function previewV1(name: string, content: string, payload: Record<string, unknown>) {
    const written = await stack.request<{ data: { _id: string; steps: { _id: string }[] } }>("POST", "/v1/workflows", {
      name,
      notificationGroupId: (await stack.request<{ data: { _id: string }[] }>("GET", "/v1/notification-groups")).body.data[0]!._id,
      steps: [{ template: { type: "sms", content } }],
    });
    expect(written.status, JSON.stringify(written.body)).toBe(201);
    const answered = await novu.workflows.steps.generatePreview(
      { workflowId: written.body.data._id, stepId: written.body.data.steps[0]!._id, generatePreviewRequestDto: { previewPayload: { payload } } },
      once,
    );
    return answered.result.result;
  }

  it("renders a workflow written through v1 with handlebars and Novu's helpers", async () => {
    expect(
      await previewV1("Handlebars previews", "{{#gt total 1000}}Big{{else}}Small{{/gt}} order for {{titlecase name}}", { total: 1500, name: "ada" }),
    ).toEqual({
      type: "sms",
      preview: { body: "Big order for Ada" },
    });
    // Loops over loops of the previewed payload stop at the render's limit: the gateway answers, and goes on answering.
    const loops = "{{#each list}}{{#each ../list}}{{#each ../../list}}.{{/each}}{{/each}}{{/each}}";
    expect(await previewV1("Nested loops", loops, { list: Array.from({ length: 3_000 }, (_, index) => index) })).toMatchObject({
      type: "sms",
      preview: {},
      error: { message: expect.stringMatching(/took longer than a render may take/) },
    });
  });

  it("renders a chat step found by the workflow's _id and the step's _id", async () => {
    const answered = await novu.workflows.steps.generatePreview(
      {
        workflowId: workflowDatabaseId,
        stepId: stepIds["slack"]!,
        generatePreviewRequestDto: { previewPayload: { payload: { total: 1500 }, subscriber: { email: "ada@example.com" } } },
      },
      once,
    );
    expect(answered.result.result).toEqual({ type: "chat", preview: { body: "Big order by ada@example.com" } });
  });

  it("renders control values given in place of the stored ones", async () => {
    const answered = await preview("slack", { controlValues: { body: "Draft for {{payload.name}}" }, previewPayload: { payload: { name: "Ada" } } });
    expect(answered.result.result).toEqual({ type: "chat", preview: { body: "Draft for Ada" } });
    expect((await novu.workflows.steps.retrieve("previews", "slack")).result.controlValues).toMatchObject({ body: expect.stringContaining("order by") });
  });

  it("fills the example payload with what the templates read and was not given, and renders with it", async () => {
    const answered = await preview("bell", { previewPayload: { payload: { extra: true } } });
    expect(answered.result.previewPayloadExample).toEqual({
      payload: { order: "{{payload.order}}", extra: true },
      subscriber: { firstName: "{{subscriber.firstName}}" },
    });
    expect(answered.result.result).toMatchObject({ type: "in_app", preview: { subject: "Order {{payload.order}}" } });
  });

  it("answers a template that does not render with an empty preview saying why, not a failure", async () => {
    for (const body of ["{% if open %}never closed", "{{ payload.name", "{% for i in (1..100000000) %}x{% endfor %}"]) {
      const answered = await preview("slack", { controlValues: { body } });
      expect(answered.result.result).toEqual({
        type: "chat",
        preview: {},
        error: { title: "Template error", message: expect.any(String), hint: expect.any(String) },
      });
    }
  });

  it("answers 404 for an unknown workflow or step and for another environment's, and 422 for control values the step refuses", async () => {
    for (const [workflowId, stepId] of [
      ["missing", "bell"],
      ["previews", "missing"],
    ] as const) {
      const failure = await failureOf(novu.workflows.steps.generatePreview({ workflowId, stepId, generatePreviewRequestDto: {} }, once));
      expect(failure).toBeInstanceOf(errors.ErrorDto);
      expect(failure.statusCode).toBe(404);
    }
    const stranger = new Novu({ secretKey: await stack.createKey("Preview stranger"), serverURL: stack.url });
    const foreign = await failureOf(stranger.workflows.steps.generatePreview({ workflowId: "previews", stepId: "bell", generatePreviewRequestDto: {} }, once));
    expect(foreign.statusCode).toBe(404);

    const refused = await failureOf(preview("slack", { controlValues: { body: 42 } }));
    expect(refused).toBeInstanceOf(errors.ValidationErrorDto);
    expect((refused as errors.ValidationErrorDto).errors).toHaveProperty(["controlValues.body"]);
  });
});
