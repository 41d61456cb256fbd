import { Novu } from "@novu/api";
import { eventually, startSmtpSink, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, delivered, settledMessage, sinkCredentials } from "./delivery-helpers.js";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
let sink: SmtpSink;
let development: string;
beforeAll(async () => {
  sink = await startSmtpSink();
  // The SMTP sink is local.
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
  development = (await novu.environments.list()).result.find((environment) => environment.name === "Development")!.id;
  await createIntegration(stack, { providerId: "nodemailer", channel: "email", identifier: "variables-smtp", credentials: sinkCredentials(sink) });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

const MASK = "••••••••";

const value = (environmentId: string, text: string) => ({ environmentId, value: text });

async function trigger(workflowId: string, subscriberId: string, transactionId: string) {
  const reply = await stack.request<Data<{ status: string }>>("POST", "/v1/events/trigger", {
    name: workflowId,
    to: subscriberId,
    payload: { order: transactionId },
    transactionId,
  });
  expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
}

/** The content of the transaction's in-app message, once written. */
const inAppContent = (transactionId: string) =>
  eventually(async () => {
    const reply = await stack.request<Data<{ content: string }[]>>("GET", `/v1/messages?transactionId=${transactionId}&channel=in_app`);
    return reply.body.data[0]?.content;
  }, 15_000);

/** The HTML of the one mail the sink received with this subject. */
async function mailFor(transactionId: string): Promise<string> {
  await settledMessage(stack, transactionId, "email", delivered);
  const mails = sink.received.filter((received) => received.mail.subject === transactionId);
  expect(mails).toHaveLength(1);
  return String(mails[0]!.mail.html);
}

describe("environment variables (Novu's /v1/environment-variables)", () => {
  it("are created, listed, read, changed and deleted per environment, as Novu's API does for an API key", async () => {
    const created = (await novu.environmentVariables.create({ key: "BASE_URL", values: [value(development, "https://dev.example.com")] }, undefined, once))
      .result;
    expect(created).toMatchObject({ key: "BASE_URL", type: "string", isSecret: false, values: [value(development, "https://dev.example.com")] });
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    const secret = (await novu.environmentVariables.create({ key: "API_TOKEN", isSecret: true, values: [value(development, "tok-123")] }, undefined, once))
      .result;
    expect(secret.values).toEqual([value(development, MASK)]);

    expect((await novu.environmentVariables.list(undefined, undefined, once)).result.map((variable) => variable.key)).toEqual(["API_TOKEN", "BASE_URL"]);
    expect((await novu.environmentVariables.list("base_", undefined, once)).result.map((variable) => variable.key)).toEqual(["BASE_URL"]);
    expect((await novu.environmentVariables.retrieve("API_TOKEN", undefined, once)).result.values).toEqual([value(development, MASK)]);
    const changed = await novu.environmentVariables.update({ values: [value(development, "https://dev2.example.com")] }, "BASE_URL", undefined, once);
    expect(changed.result.values).toEqual([value(development, "https://dev2.example.com")]);

    // What a key of one environment may not do answers as Novu's does, and changes nothing.
    const production = (await novu.environments.create({ name: "Variables production", color: "#222222" }, undefined, once)).result;
    const refusals = await Promise.all([
      failureOf(novu.environmentVariables.create({ key: "BASE_URL" }, undefined, once)),
      failureOf(novu.environmentVariables.create({ key: "1_BAD" }, undefined, once)),
      failureOf(novu.environmentVariables.create({ key: "OTHER", values: [value(production.id, "x")] }, undefined, once)),
      failureOf(novu.environmentVariables.update({ isSecret: true }, "BASE_URL", undefined, once)),
      failureOf(novu.environmentVariables.update({ values: [value(development, MASK)] }, "API_TOKEN", undefined, once)),
      failureOf(novu.environmentVariables.update({}, "BASE_URL", undefined, once)),
      failureOf(novu.environmentVariables.retrieve("MISSING", undefined, once)),
    ]);
    expect(refusals.map((refusal) => refusal.statusCode)).toEqual([409, 422, 403, 403, 400, 422, 404]);
    expect(JSON.parse(refusals[0]!.body).message).toBe('Environment variable with key "BASE_URL" already exists');
    const raw = await stack.request<Data<{ key: string; values: unknown[] }[]>>("GET", "/v1/environment-variables");
    expect(raw.body.data.map((variable) => [variable.key, variable.values])).toEqual([
      ["API_TOKEN", [{ _environmentId: development, value: MASK }]],
      ["BASE_URL", [{ _environmentId: development, value: "https://dev2.example.com" }]],
    ]);

    // Another environment of the organization sees the keys, not this environment's values, and sets its own.
    const there = new Novu({ secretKey: production.apiKeys![0]!.key, serverURL: stack.url });
    expect((await there.environmentVariables.retrieve("BASE_URL", undefined, once)).result.values).toEqual([]);
    await there.environmentVariables.update({ values: [value(production.id, "https://example.com")] }, "BASE_URL", undefined, once);
    expect((await novu.environmentVariables.retrieve("BASE_URL", undefined, once)).result.values).toEqual([value(development, "https://dev2.example.com")]);

    // Deleting takes this environment's value away; the variable goes with the last one.
    expect((await novu.environmentVariables.delete("BASE_URL", undefined, once))?.headers).toBeDefined();
    expect((await novu.environmentVariables.retrieve("BASE_URL", undefined, once)).result.values).toEqual([]);
    expect((await there.environmentVariables.retrieve("BASE_URL", undefined, once)).result.values).toEqual([value(production.id, "https://example.com")]);
    await there.environmentVariables.delete("BASE_URL", undefined, once);
    expect((await failureOf(novu.environmentVariables.retrieve("BASE_URL", undefined, once))).statusCode).toBe(404);
    await novu.environmentVariables.delete("API_TOKEN", undefined, once);
  }, 60_000);

  it("are what v2 templates read as env.KEY: in sends, secrets opened, and in previews, secrets masked", async () => {
    await novu.environmentVariables.create({ key: "SHOP_URL", values: [value(development, "https://shop.example.com")] }, undefined, once);
    await novu.environmentVariables.create({ key: "SIGNING_TOKEN", isSecret: true, values: [value(development, "sig-42")] }, undefined, once);
    const workflow = (
      await novu.workflows.create(
        {
          name: "Variables receipt",
          workflowId: "variables-receipt",
          active: true,
          steps: [
            { name: "Bell", stepId: "bell", type: "in_app", controlValues: { body: "See {{ env.SHOP_URL }}/orders/{{ payload.order }}" } },
            {
              name: "Mail",
              stepId: "mail",
              type: "email",
              controlValues: { subject: "{{ payload.order }}", body: "<p>Token {{ env.SIGNING_TOKEN }} at {{ env.SHOP_URL }}</p>", editorType: "html" },
            },
          ],
        },
        undefined,
        once,
      )
    ).result;
    // env is the engine's, not a payload variable a trigger must carry.
    expect(JSON.stringify(workflow.payloadSchema ?? {})).not.toContain("env");
    expect((await novu.environmentVariables.usage("SIGNING_TOKEN", undefined, once)).result.workflows).toEqual([
      { name: "Variables receipt", workflowId: "variables-receipt" },
    ]);
    expect((await failureOf(novu.environmentVariables.usage("NO_SUCH_KEY", undefined, once))).statusCode).toBe(404);

    const preview = await novu.workflows.steps.generatePreview(
      { workflowId: "variables-receipt", stepId: "mail", generatePreviewRequestDto: { previewPayload: { payload: { order: "P-1" } } } },
      once,
    );
    expect((preview.result.result.preview as { body: string }).body).toContain(`<p>Token ${MASK} at https://shop.example.com</p>`);

    await stack.request("POST", "/v1/subscribers", { subscriberId: "variables-ada", email: "variables-ada@example.com" });
    await trigger("variables-receipt", "variables-ada", "variables-t1");
    expect(await inAppContent("variables-t1")).toBe("See https://shop.example.com/orders/variables-t1");
    expect(await mailFor("variables-t1")).toContain("<p>Token sig-42 at https://shop.example.com</p>");

    // A layout reads them too, also when its workflow's steps read none.
    await novu.layouts.create({ layoutId: "variables-brand", name: "Variables brand" }, undefined, once);
    const brand = "<html><body><header>Visit {{ env.SHOP_URL }}</header>{{content}}</body></html>";
    await novu.layouts.update({ name: "Variables brand", controlValues: { email: { body: brand, editorType: "html" } } }, "variables-brand", undefined, once);
    await novu.workflows.create(
      {
        name: "Variables plain",
        workflowId: "variables-plain",
        active: true,
        steps: [
          {
            name: "Mail",
            stepId: "mail",
            type: "email",
            controlValues: { subject: "{{ payload.order }}", body: "<p>Plain</p>", editorType: "html", layoutId: "variables-brand" },
          },
        ],
      },
      undefined,
      once,
    );
    await trigger("variables-plain", "variables-ada", "variables-t3");
    expect(await mailFor("variables-t3")).toMatch(/<header>Visit https:\/\/shop\.example\.com<\/header>\s*<p>Plain<\/p>/);

    // A run reads the values of when it starts.
    await novu.environmentVariables.update({ values: [value(development, "https://new.example.com")] }, "SHOP_URL", undefined, once);
    await trigger("variables-receipt", "variables-ada", "variables-t2");
    expect(await inAppContent("variables-t2")).toBe("See https://new.example.com/orders/variables-t2");
  }, 60_000);
});
