import { eventually, startReceiver, type Receiver } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, executionDetails, settledMessage } from "./delivery-helpers.js";
import { startStack, type Stack } from "./stack.js";

// A send's integration is read again when the send is made (the worker keeps it a few seconds):
// one deactivated or deleted between the fan-out and a retry ends the message as an error, and
// its provider is not called again.

let stack: Stack;
let receiver: Receiver;
beforeAll(async () => {
  // Every call fails, so each message is retried until its integration is gone.
  receiver = await startReceiver(async () => ({ status: 500, body: "down" }));
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8", workerEnv: { DELIVERY_BUDGET_MS: "60000" } });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

describe("a send whose integration is gone", () => {
  it("ends integration_not_active once its integration is deactivated or deleted, and calls the provider no more", async () => {
    const workflow = await createWorkflow(stack, "Gone", [{ template: { type: "chat", content: "Deploy done" } }]);
    const cases = [
      { providerId: "mattermost", subscriberId: "paused-user", transactionId: "t-paused", remove: "deactivate" },
      { providerId: "discord", subscriberId: "deleted-user", transactionId: "t-deleted", remove: "delete" },
    ] as const;
    await Promise.all(
      cases.map(async ({ providerId, subscriberId, transactionId, remove }) => {
        const integrationId = await createIntegration(stack, { providerId, channel: "chat", identifier: `${providerId}-gone` });
        const hook = `/${providerId}`;
        const to = { subscriberId, channels: [{ providerId, credentials: { webhookUrl: `${receiver.url}${hook}` } }] };
        expect((await stack.request("POST", "/v1/events/trigger", { name: workflow, to, transactionId })).status).toBe(201);
        const hits = () => receiver.received.filter((request) => request.url.startsWith(hook)).length;
        await eventually(async () => (hits() > 0 ? true : undefined), 15_000);

        const reply =
          remove === "deactivate"
            ? await stack.request("PUT", `/v1/integrations/${integrationId}`, { active: false })
            : await stack.request("DELETE", `/v1/integrations/${integrationId}`);
        expect(reply.status).toBe(200);

        const message = await settledMessage(stack, transactionId, "chat", (candidate) => candidate.errorId === "integration_not_active");
        expect(message).toMatchObject({ status: "error", deliveredAt: [] });
        const calls = hits();
        const details = await executionDetails(stack, message, subscriberId);
        // Every call failed and was recorded; the last attempt made none.
        expect(details).toHaveLength(calls + 1);
        expect(details.at(-1)!.detail).toContain("deleted or not active");
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect(hits()).toBe(calls);
      }),
    );
  }, 60_000);
});
