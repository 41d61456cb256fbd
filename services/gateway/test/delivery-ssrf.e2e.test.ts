import { startReceiver, type Receiver } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, executionDetails, settledMessage, type Message } from "./delivery-helpers.js";
import { startStack, type Stack } from "./stack.js";

// The outbound guard at send time, end to end: what passed the check when it was written must
// still not lead the worker anywhere forbidden when it is called.

const failed = (message: Message) => message.status === "error";

/** A receiver that must never be reached: a redirect points at it. */
let forbidden: Receiver;
beforeAll(async () => {
  forbidden = await startReceiver();
});
afterAll(async () => {
  await forbidden?.close();
});

describe("a receiver that answers a redirect", () => {
  let stack: Stack;
  let redirecting: Receiver;
  /** Where each path of the redirecting receiver sends its caller, with which status. */
  const redirects = new Map<string, { status: number; location: string }>();
  let chat: string;
  let push: string;

  beforeAll(async () => {
    redirecting = await startReceiver((request) => {
      const redirect = redirects.get(request.url);
      return redirect ? { status: redirect.status, headers: { location: redirect.location }, body: "moved" } : { status: 404 };
    });
    stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8", workerEnv: { DELIVERY_BUDGET_MS: "4000", OUTBOUND_TIMEOUT_MS: "1000" } });
    await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "slack" });
    await createIntegration(stack, { providerId: "chat-webhook", channel: "chat", identifier: "chat-webhook", credentials: { secretKey: "s" } });
    await createIntegration(stack, {
      providerId: "push-webhook",
      channel: "push",
      identifier: "push-webhook",
      credentials: { webhookUrl: `${redirecting.url}/push`, secretKey: "s" },
    });
    chat = await createWorkflow(stack, "Redirected chat", [{ template: { type: "chat", content: "Deploy done" } }]);
    push = await createWorkflow(stack, "Redirected push", [{ template: { type: "push", title: "Deploy", content: "Deploy done" } }]);
  });
  afterAll(async () => {
    await stack?.stop();
    await redirecting?.close();
  });

  /** The settled message, after checking it failed naming the redirect, and that its one attempt is recorded. */
  async function expectRefusedRedirect(transactionId: string, channel: string, subscriberId: string, providerId: string, status: number) {
    const message = await settledMessage(stack, transactionId, channel, failed);
    expect(message.deliveredAt).toEqual([]);
    expect(message.errorText).toBe(`${providerId} answered ${status} (a redirect, not followed): moved`);
    const details = await executionDetails(stack, message, subscriberId);
    expect(details).toEqual([expect.objectContaining({ _messageId: message._id, status: "Failed", providerId, isRetry: false })]);
    expect(details[0]!.detail).toContain(`${status} (a redirect, not followed)`);
    return message;
  }

  const cases = [
    { providerId: "slack", status: 301, target: "the metadata address", location: () => "http://169.254.169.254/latest/meta-data/" },
    { providerId: "slack", status: 302, target: "a private address", location: () => "http://10.0.0.1/hook" },
    { providerId: "slack", status: 307, target: "another local port", location: () => `${forbidden.url}/slack` },
    { providerId: "chat-webhook", status: 308, target: "another local port", location: () => `${forbidden.url}/chat-webhook` },
  ];
  for (const { providerId, status, target, location } of cases) {
    it(`does not follow a ${status} from a ${providerId} webhook to ${target}`, async () => {
      const path = `/${providerId}/${status}`;
      redirects.set(path, { status, location: location() });
      const subscriberId = `redirected-${providerId}-${status}`;
      const transactionId = `t-redirect-${providerId}-${status}`;
      const to = { subscriberId, channels: [{ providerId, credentials: { webhookUrl: `${redirecting.url}${path}` } }] };
      const reply = await stack.request("POST", "/v1/events/trigger", { name: chat, to, transactionId });
      expect(reply.body.data.status, JSON.stringify(reply.body)).toBe("processed");

      await expectRefusedRedirect(transactionId, "chat", subscriberId, providerId, status);
      // A redirect is an answer, not a failure worth another try: one call, and nothing beyond it.
      expect(redirecting.received.filter((request) => request.url === path)).toHaveLength(1);
      expect(forbidden.received).toEqual([]);
    });
  }

  it("does not follow a 302 from a push webhook to another local port", async () => {
    redirects.set("/push", { status: 302, location: `${forbidden.url}/push` });
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "pushed" })).status).toBe(201);
    const tokens = await stack.request("PATCH", "/v1/subscribers/pushed/credentials", {
      providerId: "push-webhook",
      credentials: { deviceTokens: ["device-1"] },
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const reply = await stack.request("POST", "/v1/events/trigger", { name: push, to: "pushed", transactionId: "t-redirect-push" });
    expect(reply.body.data.status).toBe("processed");

    await expectRefusedRedirect("t-redirect-push", "push", "pushed", "push-webhook", 302);
    expect(redirecting.received.filter((request) => request.url === "/push")).toHaveLength(1);
    expect(forbidden.received).toEqual([]);
  });
});

describe("a name that resolves to a refused address when the message is sent", () => {
  // The gateway allows loopback, the worker does not (an operator narrowed the range after the
  // URL was written): the worker's own check at send time is all that stands between the name and
  // the address.
  let stack: Stack;
  let local: Receiver;
  beforeAll(async () => {
    local = await startReceiver();
    stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8", workerEnv: { OUTBOUND_ALLOWED_CIDRS: "" } });
    await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "slack" });
  });
  afterAll(async () => {
    await stack?.stop();
    await local?.close();
  });

  it("refuses to call it, ends the message error saying why, and the receiver sees nothing", async () => {
    const workflow = await createWorkflow(stack, "Resolved chat", [{ template: { type: "chat", content: "Deploy done" } }]);
    const port = new URL(local.url).port;
    const to = { subscriberId: "resolved", channels: [{ providerId: "slack", credentials: { webhookUrl: `http://localhost:${port}/by-name` } }] };
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, transactionId: "t-resolved" });
    expect(reply.body.data.status, JSON.stringify(reply.body)).toBe("processed");

    const message = await settledMessage(stack, "t-resolved", "chat", failed);
    expect(message.deliveredAt).toEqual([]);
    expect(message.errorText).toMatch(/localhost resolves to a refused address: 127\.0\.0\.1 is a loopback address/);
    const details = await executionDetails(stack, message, "resolved");
    expect(details).toEqual([expect.objectContaining({ _messageId: message._id, status: "Failed", providerId: "slack" })]);
    expect(details[0]!.detail).toMatch(/localhost resolves to a refused address/);
    expect(local.received).toEqual([]);
  });
});
