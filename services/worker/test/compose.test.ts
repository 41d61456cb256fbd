import { create } from "@bufbuild/protobuf";
import { integrationsV1, subscribersV1, triggersV1, workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { renderer } from "@notify/templates";
import { describe, expect, it } from "vitest";
import { composeMessages, type RunContext } from "../src/compose.js";

const integration = (id: string, providerId: string, identifier = providerId) =>
  create(integrationsV1.IntegrationSchema, { id, providerId, identifier, channel: "chat", active: true });
const integrations = [integration("i-slack", "slack"), integration("i-discord", "discord")];

const chatStep = create(workflowsV1.StepSchema, { id: "chat-step", template: { type: StepType.CHAT, content: { case: "text", value: "Hi" } } });

function contextFor(
  channels: { providerId: string; integrationId: string; webhookUrl?: string }[],
  endpoints: subscribersV1.ChannelEndpoint[] = [],
): RunContext {
  const workflow = create(workflowsV1.WorkflowSchema, { id: "wf", identifier: "wf" });
  return {
    job: create(triggersV1.TriggerJobSchema, { transactionId: "txn", triggerId: "trigger" }),
    workflow,
    subscriber: create(subscribersV1.RecipientSchema, {
      id: "internal-ada",
      subscriberId: "ada",
      channels: channels.map(({ providerId, integrationId, webhookUrl }) => ({ providerId, integrationId, credentials: { webhookUrl } })),
    }),
    render: renderer(workflow.templateEngine, { payload: {}, subscriber: {} }),
    payload: {},
    overrides: {},
    contextKeys: [],
    integrationFor: async (key) => integrations.find((candidate) => `chat:${candidate.identifier}` === key),
    integrationById: async (id) => integrations.find((candidate) => candidate.id === id),
    chatEndpoints: endpoints,
  };
}

const endpoint = (identifier: string) =>
  create(subscribersV1.ChannelEndpointSchema, {
    identifier,
    integrationIdentifier: "discord",
    type: "webhook",
    endpoint: { url: `https://hooks.example/${identifier}` },
  });

describe("composeMessages for a chat step", () => {
  it("tells apart each destination of the subscriber, the first of their own channels keeping the key messages had before", async () => {
    const composed = await composeMessages(
      chatStep,
      contextFor(
        [
          { providerId: "slack", integrationId: "i-slack", webhookUrl: "https://hooks.example/slack" },
          { providerId: "discord", integrationId: "i-discord", webhookUrl: "https://hooks.example/discord" },
        ],
        [endpoint("room")],
      ),
    );
    expect(composed.map(({ message }) => [message.providerId, message.destination, message.directWebhookUrl])).toEqual([
      ["discord", "endpoint:room", "https://hooks.example/room"],
      ["slack", "", "https://hooks.example/slack"],
      ["discord", "i-discord", "https://hooks.example/discord"],
    ]);
  });

  it("keeps the empty destination for the first channel a message goes to, a warning included", async () => {
    const composed = await composeMessages(
      chatStep,
      contextFor([
        { providerId: "slack", integrationId: "i-slack" },
        { providerId: "discord", integrationId: "i-discord", webhookUrl: "https://hooks.example/discord" },
      ]),
    );
    expect(composed.map(({ message }) => [message.destination, message.errorId ?? null])).toEqual([
      ["", "no_subscriber_chat_channel_id"],
      ["i-discord", null],
    ]);
  });
});
