import { create } from "@bufbuild/protobuf";
import { type deliveriesV1, integrationsV1, messagesV1, subscribersV1, triggersV1, workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { renderer } from "@notify/templates";
import { describe, expect, it } from "vitest";
import { composeMessages, type RunContext } from "../src/compose.js";

const integration = (id: string, providerId: string, identifier = providerId) =>
  create(integrationsV1.IntegrationSchema, { id, providerId, identifier, channel: "chat", active: true });
const integrations = [
  integration("i-slack", "slack"),
  integration("i-discord", "discord"),
  integration("i-whatsapp", "whatsapp-business"),
  create(integrationsV1.IntegrationSchema, { id: "i-fcm", providerId: "fcm", identifier: "fcm", channel: "push", active: true }),
];

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
    digest: {},
    integrationFor: async (key) => integrations.find((candidate) => `chat:${candidate.identifier}` === key),
    integrationById: async (id) => integrations.find((candidate) => candidate.id === id),
    integrationOfProvider: async (providerId, identifier) =>
      integrations.find((candidate) => candidate.providerId === providerId && (identifier === undefined || candidate.identifier === identifier)),
    chatEndpoints: endpoints,
    notification: create(messagesV1.NotificationTraitsSchema),
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

describe("composeMessages for a chat step to a subscriber with a phone", () => {
  const withPhone = (channels: Parameters<typeof contextFor>[0], overrides: RunContext["overrides"] = {}) => {
    const context = contextFor(channels);
    context.subscriber.phone = "+15550001";
    context.overrides = overrides;
    return context;
  };
  const sends = (composed: Awaited<ReturnType<typeof composeMessages>>) =>
    composed.map(({ message, delivery }) => [message.providerId, message.destination, delivery?.content.case === "chat" ? delivery.content.value.phone : null]);

  it("goes to their phone on WhatsApp too, through the environment's WhatsApp integration", async () => {
    const composed = await composeMessages(chatStep, withPhone([{ providerId: "slack", integrationId: "i-slack", webhookUrl: "https://hooks.example/slack" }]));
    expect(sends(composed)).toEqual([
      ["slack", "", undefined],
      ["whatsapp-business", "i-whatsapp", "+15550001"],
    ]);
  });

  it("goes there once when one of their channels is WhatsApp's, and through the integration the overrides name", async () => {
    expect(sends(await composeMessages(chatStep, withPhone([{ providerId: "whatsapp-business", integrationId: "i-whatsapp" }])))).toEqual([
      ["whatsapp-business", "", "+15550001"],
    ]);
    const named = withPhone([{ providerId: "slack", integrationId: "i-slack", webhookUrl: "https://hooks.example/slack" }], {
      chat: { integrationIdentifier: "slack" },
    });
    expect(sends(await composeMessages(chatStep, named))).toEqual([["slack", "", undefined]]);
    const whatsapp = withPhone([{ providerId: "slack", integrationId: "i-slack", webhookUrl: "https://hooks.example/slack" }], {
      chat: { integrationIdentifier: "whatsapp-business" },
    });
    expect(sends(await composeMessages(chatStep, whatsapp))).toEqual([["whatsapp-business", "i-whatsapp", "+15550001"]]);
  });

  it("sends nothing to a subscriber without a phone, nor without a WhatsApp integration", async () => {
    expect(await composeMessages(chatStep, contextFor([]))).toEqual([]);
    const without = withPhone([]);
    without.integrationOfProvider = async () => undefined;
    expect(await composeMessages(chatStep, without)).toEqual([]);
  });
});

describe("composeMessages for email and SMS steps, with the trigger's overrides", () => {
  const emailIntegration = create(integrationsV1.IntegrationSchema, {
    id: "i-mail",
    providerId: "sendgrid",
    identifier: "mail",
    channel: "email",
    active: true,
  });
  const smsIntegration = create(integrationsV1.IntegrationSchema, {
    id: "i-sms",
    providerId: "twilio",
    identifier: "sms",
    channel: "sms",
    active: true,
    credentials: { from: "+15559999" },
  });

  function withOverrides(overrides: RunContext["overrides"]): RunContext {
    const context = contextFor([]);
    context.subscriber.email = "ada@example.test";
    context.subscriber.phone = "+15550001";
    context.overrides = overrides;
    context.integrationFor = async (key) => (key.startsWith("email") ? emailIntegration : key.startsWith("sms") ? smsIntegration : undefined);
    return context;
  }
  const emailStep = create(workflowsV1.StepSchema, {
    id: "mail-step",
    template: { type: StepType.EMAIL, subject: "Hi", content: { case: "text", value: "<p>Hi</p>" } },
  });
  const smsStep = create(workflowsV1.StepSchema, { id: "sms-step", template: { type: StepType.SMS, content: { case: "text", value: "Your code" } } });

  it("adds the overrides' headers that are tokens with one-line values, never the mail's own fields, and hands on customData and ipPoolName", async () => {
    const [composed] = await composeMessages(
      emailStep,
      withOverrides({
        email: {
          headers: { "X-Campaign": "spring", Bcc: "spy@example.test", "X-Injected": "a\r\nBcc: spy@example.test", "Bad Name": "x", "X-Number": 7 },
          customData: { templateId: "d-1" },
        },
        sendgrid: { ipPoolName: "pool-b" },
      }),
    );
    const content = composed!.delivery!.content;
    expect(content.case).toBe("email");
    if (content.case !== "email") return;
    expect(content.value.headers).toEqual({ "X-Campaign": "spring" });
    expect(content.value.customData).toEqual({ templateId: "d-1" });
    expect(content.value.ipPoolName).toBe("pool-b");
  });

  it("sends an email from the step's sender name, rendered for the run, unless the overrides name another, the provider's over the channel's", async () => {
    const named = create(workflowsV1.StepSchema, {
      id: "named-mail-step",
      template: { type: StepType.EMAIL, subject: "Hi", senderName: "{{payload.team}} team", content: { case: "text", value: "<p>Hi</p>" } },
    });
    const senderOf = async (step: workflowsV1.Step, overrides: RunContext["overrides"]) => {
      const context = withOverrides(overrides);
      context.payload = { team: "Support" };
      context.render = renderer(context.workflow.templateEngine, { payload: context.payload, subscriber: {} });
      const [composed] = await composeMessages(step, context);
      const content = composed!.delivery!.content;
      return content.case === "email" ? content.value.senderName : undefined;
    };
    expect(await senderOf(named, {})).toBe("Support team");
    expect(await senderOf(named, { email: { senderName: "Billing" } })).toBe("Billing");
    expect(await senderOf(named, { email: { senderName: "Billing" }, sendgrid: { senderName: "Grid" } })).toBe("Grid");
    // A name that renders empty leaves the integration's.
    const blank = create(workflowsV1.StepSchema, {
      id: "blank",
      template: { type: StepType.EMAIL, senderName: "{{payload.none}} ", content: { case: "text", value: "Hi" } },
    });
    expect(await senderOf(blank, {})).toBeUndefined();
    expect(await senderOf(emailStep, {})).toBeUndefined();
  });

  it("renders a v1 email's body with the step's subject and preheader and Novu's default branding colour", async () => {
    const branded = create(workflowsV1.StepSchema, {
      id: "branded-mail-step",
      template: {
        type: StepType.EMAIL,
        subject: "Order {{payload.order}}",
        preheader: "It shipped",
        content: { case: "text", value: '<p style="color:{{branding.color}}">{{subject}}: {{preheader}}</p>' },
      },
    });
    const context = withOverrides({});
    context.payload = { order: 7 };
    context.render = renderer(context.workflow.templateEngine, { payload: context.payload, subscriber: {} });
    const [composed] = await composeMessages(branded, context);
    expect(composed!.message.content).toEqual({ case: "text", value: '<p style="color:#f47373">Order 7: It shipped</p>' });
  });

  it("gives v1 templates the organization's branding the trigger carried, and hands it on with editor blocks, which are laid out when sent", async () => {
    const context = withOverrides({});
    context.job.event = create(triggersV1.TriggerEventSchema, { name: "wf", branding: { logo: "https://cdn.example.com/logo.png", color: "#0a7cff" } });
    const inApp = create(workflowsV1.StepSchema, {
      id: "in-app-step",
      template: {
        type: StepType.IN_APP,
        content: { case: "text", value: "{{branding.color}}" },
        cta: { type: "redirect", data: { url: "{{branding.logo}}" }, action: { buttons: [{ type: "primary", content: "Go {{branding.color}}" }] } },
      },
    });
    const [inAppMessage] = await composeMessages(inApp, context);
    expect(inAppMessage!.message.content).toEqual({ case: "text", value: "#0a7cff" });
    expect(inAppMessage!.message.cta?.url).toBe("https://cdn.example.com/logo.png");
    expect(inAppMessage!.message.cta?.action?.buttons.map((button) => button.content)).toEqual(["Go #0a7cff"]);

    const editor = create(workflowsV1.StepSchema, {
      id: "editor-step",
      template: { type: StepType.EMAIL, subject: "Hi", content: { case: "blocks", value: { blocks: [{ type: "text", content: "Hi" }] } } },
    });
    const [mail] = await composeMessages(editor, context);
    const content = mail!.delivery!.content;
    if (content.case !== "email") throw new Error("not an email");
    expect(content.value.body.case).toBe("blocks");
    expect(content.value.branding).toMatchObject({ logo: "https://cdn.example.com/logo.png", color: "#0a7cff" });

    // Without branding set, Novu's colour, and no logo.
    context.job.event = create(triggersV1.TriggerEventSchema, { name: "wf" });
    const [plain] = await composeMessages(inApp, context);
    expect(plain!.message.content).toEqual({ case: "text", value: "#f47373" });
    expect(plain!.message.cta?.url).toBe("");
  });

  it("fails an SMS of a v1 workflow whose content renders empty, without sending it, as Novu does", async () => {
    const emptied = create(workflowsV1.StepSchema, { id: "sms-step", template: { type: StepType.SMS, content: { case: "text", value: "{{payload.code}}" } } });
    const [composed] = await composeMessages(emptied, withOverrides({}));
    expect(composed!.delivery).toBeUndefined();
    expect(composed!.message).toMatchObject({
      status: messagesV1.MessageStatus.ERROR,
      errorId: "message_content_failed",
      errorText: "Message content could not be generated",
    });
    // As Novu sends a v2 step's body as its workflow rendered it, an empty one goes to the provider.
    const v2 = withOverrides({});
    v2.render = renderer(workflowsV1.TemplateEngine.LIQUID, { payload: {}, subscriber: {} });
    const [liquid] = await composeMessages(emptied, v2);
    expect(liquid!.delivery!.content).toMatchObject({ case: "sms", value: { content: "" } });
  });

  it("sends an SMS to the overrides' number, with their content and sender, the provider's own over the channel's", async () => {
    const [composed] = await composeMessages(
      smsStep,
      withOverrides({ sms: { to: "+15550002", content: "Overridden", from: "Shop", customData: { route: "otp" } }, twilio: { from: "Twilio sender" } }),
    );
    expect(composed!.message.phone).toBe("+15550001");
    expect(composed!.delivery!.content).toMatchObject({
      case: "sms",
      value: { to: "+15550002", content: "Overridden", from: "Twilio sender", customData: { route: "otp" } },
    });
    const [plain] = await composeMessages(smsStep, withOverrides({}));
    expect(plain!.delivery!.content).toMatchObject({ case: "sms", value: { to: "+15550001", content: "Your code" } });
  });

  it("sends an SMS through an integration without a sender, as Novu sends through SNS, whose form has none", async () => {
    const context = withOverrides({});
    const sns = create(integrationsV1.IntegrationSchema, { id: "i-sns", providerId: "sns", identifier: "sns", channel: "sms", active: true, credentials: {} });
    context.integrationFor = async (key) => (key.startsWith("sms") ? sns : undefined);
    const [composed] = await composeMessages(smsStep, context);
    expect(composed!.delivery).toMatchObject({
      integration: { providerId: "sns" },
      content: { case: "sms", value: { to: "+15550001", content: "Your code" } },
    });
  });

  it("names each address of a mail once, the subscriber's and the overrides' alike, as Novu does", async () => {
    const [composed] = await composeMessages(emailStep, withOverrides({ email: { to: ["ada@example.test", "ops@example.test", "ops@example.test"] } }));
    expect(composed!.delivery!.content).toMatchObject({ case: "email", value: { to: ["ada@example.test", "ops@example.test"] } });
  });
});

describe("composeMessages with the trigger's chat and push overrides", () => {
  it("hands chat providers the chat overrides, the provider's over the channel's, and takes a payload webhookUrl first, as Novu does", async () => {
    const context = contextFor([{ providerId: "slack", integrationId: "i-slack", webhookUrl: "https://hooks.example/slack" }]);
    context.payload = { webhookUrl: "https://hooks.example/from-payload" };
    context.overrides = { chat: { integrationIdentifier: "slack", username: "bot", icon_emoji: ":x:" }, slack: { icon_emoji: ":rocket:" } };
    const [composed] = await composeMessages(chatStep, context);
    expect(composed!.message.directWebhookUrl).toBe("https://hooks.example/from-payload");
    expect(composed!.delivery!.content).toMatchObject({
      case: "chat",
      value: { webhookUrl: "https://hooks.example/from-payload", customData: { username: "bot", icon_emoji: ":rocket:" } },
    });
  });

  it("posts a chat to the provider overrides' webhookUrl before the payload's and the subscriber's, as Novu picks it", async () => {
    const context = contextFor([{ providerId: "slack", integrationId: "i-slack", webhookUrl: "https://hooks.example/slack" }]);
    context.payload = { webhookUrl: "https://hooks.example/from-payload" };
    context.overrides = { providers: { slack: { webhookUrl: "https://hooks.example/from-overrides" } } };
    const [composed] = await composeMessages(chatStep, context);
    expect(composed!.delivery!.content).toMatchObject({ case: "chat", value: { webhookUrl: "https://hooks.example/from-overrides" } });
  });

  it("sends a push to the devices the provider's overrides name instead of the subscriber's tokens", async () => {
    const push = create(integrationsV1.IntegrationSchema, { id: "i-fcm", providerId: "fcm", identifier: "fcm", channel: "push", active: true });
    const context = contextFor([]);
    context.subscriber.channels = [
      create(subscribersV1.ChannelSettingsSchema, { providerId: "fcm", integrationId: "i-fcm", credentials: { deviceTokens: ["own"] } }),
    ];
    context.integrationById = async (id) => (id === "i-fcm" ? push : undefined);
    const pushStep = create(workflowsV1.StepSchema, {
      id: "push-step",
      template: { type: StepType.PUSH, title: "Hi", content: { case: "text", value: "Hello" } },
    });
    const [own] = await composeMessages(pushStep, context);
    expect(own!.delivery!.content).toMatchObject({ case: "push", value: { tokens: ["own"] } });
    context.overrides = { fcm: { deviceTokens: ["named-1", "named-2"] } };
    const named = await composeMessages(pushStep, context);
    expect(named.map(({ message }) => message.deviceTokens)).toEqual([
      ["named-1", "named-2"],
      ["named-1", "named-2"],
    ]);
    expect(named.map(({ delivery }) => delivery!.content)).toMatchObject([
      { case: "push", value: { tokens: ["named-1"] } },
      { case: "push", value: { tokens: ["named-2"] } },
    ]);

    // The subscriber's profile goes along, and after a digest the digest, its events while they are small.
    const content = (composed: Awaited<ReturnType<typeof composeMessages>>) => composed[0]!.delivery!.content.value as deliveriesV1.PushContent;
    context.subscriber.firstName = "Ada";
    expect(content(await composeMessages(pushStep, context)).subscriber).toEqual({ _id: "internal-ada", subscriberId: "ada", firstName: "Ada", data: {} });
    expect(content(await composeMessages(pushStep, context)).step).toBeUndefined();
    context.digest = { digest: true, events: [{ n: 1 }], total_count: 1 };
    expect(content(await composeMessages(pushStep, context)).step).toEqual({ digest: true, events: [{ n: 1 }], total_count: 1 });
    context.digest = { digest: true, events: [{ text: "x".repeat(70_000) }], total_count: 1 };
    expect(content(await composeMessages(pushStep, context)).step).toEqual({ digest: true, total_count: 1 });
  });
});

describe("composeMessages with provider overrides", () => {
  const step = create(workflowsV1.StepSchema, { ...chatStep, stepId: "notify-team" });
  const channels = [
    { providerId: "slack", integrationId: "i-slack", webhookUrl: "https://hooks.example/slack" },
    { providerId: "discord", integrationId: "i-discord", webhookUrl: "https://hooks.example/discord" },
  ];

  it("gives each send its provider's overrides, the step's merged over the workflow-wide ones", async () => {
    const context = contextFor(channels);
    context.overrides = {
      providers: { slack: { iconEmoji: ":gear:", attachments: [{ text: "a" }, { text: "b" }], nested: { kept: true } } },
      steps: {
        "notify-team": { providers: { slack: { iconEmoji: ":rocket:", attachments: [{ color: "good" }], nested: { added: 1 } } } },
        "other-step": { providers: { discord: { tts: true } } },
      },
    };
    const composed = await composeMessages(step, context);
    expect(composed.map(({ message, delivery }) => [message.providerId, delivery?.providerData])).toEqual([
      // Arrays item by item, as Novu's merge of the two levels does.
      ["slack", { iconEmoji: ":rocket:", attachments: [{ text: "a", color: "good" }, { text: "b" }], nested: { kept: true, added: 1 } }],
      // The other step's overrides are not this step's.
      ["discord", undefined],
    ]);
  });

  it("gives no provider data when the overrides name none", async () => {
    const context = contextFor(channels);
    context.overrides = { chat: { username: "Bot" }, providers: "not an object" };
    const composed = await composeMessages(step, context);
    expect(composed.map(({ delivery }) => delivery?.providerData)).toEqual([undefined, undefined]);
  });
});

describe("composeMessages for a push step", () => {
  const pushStep = create(workflowsV1.StepSchema, {
    id: "push-step",
    stepId: "notify-phones",
    template: { type: StepType.PUSH, content: { case: "text", value: "Hi" }, title: "Hello" },
  });
  const pushChannel = (providerId: string, integrationId: string, deviceTokens: string[]) =>
    create(subscribersV1.ChannelSettingsSchema, { providerId, integrationId, credentials: { deviceTokens } });
  const integrations = new Map(
    ["fcm", "expo"].map((providerId) => [
      `i-${providerId}`,
      create(integrationsV1.IntegrationSchema, { id: `i-${providerId}`, providerId, channel: "push", active: true }),
    ]),
  );

  it("makes one message per device, as Novu does, each keyed apart and listing the channel's devices", async () => {
    const context = contextFor([]);
    context.integrationById = async (id) => integrations.get(id);
    // A token listed twice is one device.
    context.subscriber.channels = [pushChannel("fcm", "i-fcm", ["phone", "tablet", "phone"]), pushChannel("expo", "i-expo", ["watch"])];
    const composed = await composeMessages(pushStep, context);
    expect(
      composed.map(({ message, delivery }) => [message.providerId, message.deviceTokens, (delivery!.content.value as deliveriesV1.PushContent).tokens]),
    ).toEqual([
      ["fcm", ["phone", "tablet"], ["phone"]],
      ["fcm", ["phone", "tablet"], ["tablet"]],
      ["expo", ["watch"], ["watch"]],
    ]);
    // Each device is keyed by its token, the same from run to run, whichever devices come before it.
    const destinations = composed.map(({ message }) => message.destination);
    expect(new Set(destinations).size).toBe(3);
    expect(destinations).not.toContain("");
    expect((await composeMessages(pushStep, context)).map(({ message }) => message.destination)).toEqual(destinations);
    context.subscriber.channels = [pushChannel("fcm", "i-fcm", ["tablet"])];
    expect((await composeMessages(pushStep, context))[0]!.message.destination).toBe(destinations[1]);
    // A token too long for an index entry still makes a key that fits one.
    context.subscriber.channels = [pushChannel("expo", "i-expo", ["first", "x".repeat(10_000)])];
    expect((await composeMessages(pushStep, context))[1]!.message.destination.length).toBeLessThan(100);
  });

  it("makes one message for the devices when the FCM overrides name a topic, which the provider sends to once", async () => {
    const context = contextFor([]);
    context.integrationById = async (id) => integrations.get(id);
    context.subscriber.channels = [pushChannel("fcm", "i-fcm", ["phone", "tablet"]), pushChannel("expo", "i-expo", ["watch", "tv"])];
    context.overrides = { steps: { "notify-phones": { providers: { fcm: { condition: "'news' in topics" } } } } };
    const composed = await composeMessages(pushStep, context);
    expect(composed.map(({ message, delivery }) => [message.providerId, (delivery!.content.value as deliveriesV1.PushContent).tokens])).toEqual([
      ["fcm", ["phone", "tablet"]],
      ["expo", ["watch"]],
      ["expo", ["tv"]],
    ]);
    // Named wherever the FCM provider reads it: in _passthrough's body too.
    context.overrides = { providers: { fcm: { _passthrough: { body: { topic: "news" } } } } };
    expect((await composeMessages(pushStep, context)).filter(({ message }) => message.providerId === "fcm")).toHaveLength(1);
  });
});

describe("composeMessages for a push step with FCM provider overrides", () => {
  const pushStep = create(workflowsV1.StepSchema, {
    id: "push-step",
    stepId: "notify-phones",
    template: { type: StepType.PUSH, content: { case: "text", value: "Hi" }, title: "Hello" },
  });
  const pushOf = (composed: Awaited<ReturnType<typeof composeMessages>>) =>
    composed.map(({ message, delivery }) => {
      const content = delivery?.content.case === "push" ? delivery.content.value : undefined;
      return [message.providerId, delivery?.integration.id, content?.tokens, content?.channelIntegrationId];
    });

  it("sends to the topic or the devices they name when the subscriber has no FCM channel, as Novu does", async () => {
    const toTopic = contextFor([]);
    toTopic.overrides = { providers: { fcm: { topic: "news" } } };
    expect(pushOf(await composeMessages(pushStep, toTopic))).toEqual([["fcm", "i-fcm", [], ""]]);

    const toDevices = contextFor([]);
    toDevices.overrides = { steps: { "notify-phones": { providers: { fcm: { tokens: ["device-a", "device-b"] } } } } };
    expect(pushOf(await composeMessages(pushStep, toDevices))).toEqual([
      ["fcm", "i-fcm", ["device-a"], ""],
      ["fcm", "i-fcm", ["device-b"], ""],
    ]);
    // overrides.fcm.deviceTokens go before them, as Novu's target does.
    toDevices.overrides = { ...toDevices.overrides, fcm: { deviceTokens: ["device-c"] } };
    expect(pushOf(await composeMessages(pushStep, toDevices))).toEqual([["fcm", "i-fcm", ["device-c"], ""]]);
  });

  it("sends nothing more when the subscriber has an FCM channel, or the overrides name neither", async () => {
    const withChannel = contextFor([]);
    withChannel.subscriber.channels = [
      create(subscribersV1.ChannelSettingsSchema, { providerId: "fcm", integrationId: "i-fcm", credentials: { deviceTokens: ["own"] } }),
    ];
    withChannel.overrides = { providers: { fcm: { topic: "news" } } };
    expect(pushOf(await composeMessages(pushStep, withChannel))).toEqual([["fcm", "i-fcm", ["own"], "i-fcm"]]);

    // A channel without tokens is a channel all the same, as Novu counts them.
    const withEmptyChannel = contextFor([]);
    withEmptyChannel.subscriber.channels = [create(subscribersV1.ChannelSettingsSchema, { providerId: "fcm", integrationId: "i-fcm", credentials: {} })];
    withEmptyChannel.overrides = { providers: { fcm: { topic: "news" } } };
    expect(await composeMessages(pushStep, withEmptyChannel)).toEqual([]);

    const neither = contextFor([]);
    neither.overrides = { providers: { fcm: { tokens: "not a list", priority: "high" } } };
    expect(await composeMessages(pushStep, neither)).toEqual([]);
  });
});
