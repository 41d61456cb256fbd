import { eventually, startSmtpSink, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, messagesOf, sinkCredentials } from "./delivery-helpers.js";
import { startStack, type Stack } from "./stack.js";

// The organization's branding (PUT /v1/organizations/branding) in what its v1 workflows send, as
// Novu's: templates read it as `branding`, and editor emails are drawn with its logo and colour.

let stack: Stack;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
  await createIntegration(stack, { providerId: "nodemailer", channel: "email", identifier: "branding-smtp", credentials: sinkCredentials(sink) });
  expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "brand-ada", email: "brand-ada@example.com" })).status).toBe(201);
});
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

const LOGO = "https://cdn.example.com/acme.png";

async function setBranding(branding: Record<string, string>) {
  const reply = await stack.request("PUT", "/v1/organizations/branding", branding);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
}

/** Triggers the workflow to Ada and answers the two mails it sends (editor, then custom HTML) and its in-app message's content. */
async function sent(workflow: string, transactionId: string) {
  const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "brand-ada", transactionId, payload: { tx: transactionId } });
  expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
  await eventually(async () => (await messagesOf(stack, transactionId, "email")).filter(delivered).length === 2 || undefined);
  const mails = sink.received.filter((mail) => mail.mail.subject?.endsWith(transactionId));
  const [inApp] = await messagesOf(stack, transactionId, "in_app");
  return {
    editor: mails.find((mail) => mail.mail.subject?.startsWith("Editor"))!.mail.html as string,
    custom: mails.find((mail) => mail.mail.subject?.startsWith("Custom"))!.mail.html as string,
    inApp: (inApp as unknown as { content: string }).content,
  };
}

describe("the organization's branding", () => {
  let workflow: string;
  beforeAll(async () => {
    workflow = await createWorkflow(stack, "Branded", [
      { template: { type: "in_app", content: "Brand {{branding.color}} {{branding.logo}}" } },
      {
        template: {
          type: "email",
          subject: "Editor {{tx}}",
          content: [
            { type: "text", content: "Hello" },
            { type: "button", content: "Open", url: "https://example.com/open" },
          ],
        },
      },
      {
        template: {
          type: "email",
          subject: "Custom {{tx}}",
          contentType: "customHtml",
          content: '<img src="{{branding.logo}}"><p style="color:{{branding.color}}">Hi</p>',
        },
      },
    ]);
  });

  it("is read by in-app and email templates, and draws editor emails with its logo and colour", async () => {
    await setBranding({ logo: LOGO, color: "#0a7cff" });
    const { editor, custom, inApp } = await sent(workflow, "brand-1");
    expect(inApp).toBe(`Brand #0a7cff ${LOGO}`);
    expect(custom).toContain(`<img src="${LOGO}"><p style="color:#0a7cff">Hi</p>`);
    expect(editor).toContain(`<img src="${LOGO}"`);
    expect(editor.indexOf("<img")).toBeLessThan(editor.indexOf("Hello"));
    expect(editor).toContain("border-top:4px solid #0a7cff");
    expect(editor).toMatch(/<a href="https:\/\/example\.com\/open"[^>]*background-color:#0a7cff/);
  });

  it("reaches the next trigger once changed, and without a colour of its own is Novu's", async () => {
    await setBranding({ fontFamily: "Inter" });
    const { editor, custom, inApp } = await sent(workflow, "brand-2");
    expect(inApp).toBe("Brand #f47373 ");
    expect(custom).toContain('<img src=""><p style="color:#f47373">Hi</p>');
    expect(editor).not.toContain("<img");
    expect(editor).toContain("border-top:4px solid #f47373");
  });
});
