import { createHmac } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, OutboundRefused } from "../src/outbound.js";
import { type ChatMessage, ProviderError, type ProviderCredentials } from "../src/types.js";
import { formOf, sendContext, sendingFixture } from "./helpers.js";

const { receiver, http, providers } = await sendingFixture();

/** Webhook URLs are secrets in themselves (Slack's, Discord's): errors must not carry them. */
const HOOK_SECRET = "hook-secret-4f1c";
const hook = (path = "/hook") => `${receiver.url}${path}/${HOOK_SECRET}`;

function send(id: string, message: ChatMessage, credentials: ProviderCredentials = {}) {
  const provider = providers.get("chat", id);
  if (!provider) throw new Error(`no chat provider ${id}`);
  return provider.send(message, sendContext(http, credentials));
}

function only() {
  expect(receiver.received).toHaveLength(1);
  const [request] = receiver.received;
  if (!request) throw new Error("no request");
  return request;
}

const json = (body: string): unknown => JSON.parse(body);

describe("slack", () => {
  it("posts {text} to the incoming webhook and answers Slack's request id", async () => {
    receiver.respond = () => ({ headers: { "x-slack-req-id": "req-9" }, body: "ok" });
    const result = await send("slack", { webhookUrl: hook("/services/T0/B0"), content: "Deploy finished" });
    expect(result.id).toBe("req-9");
    const request = only();
    expect(request.url).toBe(`/services/T0/B0/${HOOK_SECRET}`);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(json(request.body)).toEqual({ text: "Deploy finished" });
  });

  it("adds blocks when the message has them", async () => {
    const blocks = [{ type: "section", text: { type: "mrkdwn", text: "*Deploy* finished" } }];
    await send("slack", { webhookUrl: hook(), content: "Deploy finished", blocks });
    expect(json(only().body)).toEqual({ text: "Deploy finished", blocks });
  });

  it("adds the trigger's chat overrides to the message, as Novu does; an endpoint's channel stays its own", async () => {
    const customData = { username: "Deploy bot", icon_emoji: ":rocket:", thread_ts: "1700000000.000100", channel: "#elsewhere" };
    await send("slack", { webhookUrl: hook(), content: "Deploy finished", customData });
    expect(json(only().body)).toEqual({ text: "Deploy finished", ...customData });
    receiver.received.length = 0;
    receiver.respond = () => ({ body: { ok: true, ts: "1.2" } });
    await send("slack", { conversation: "C123", accessToken: "xoxb-1", content: "Deploy finished", customData }, { baseUrl: receiver.url });
    expect(json(only().body)).toEqual({ text: "Deploy finished", ...customData, channel: "C123" });
  });

  it("merges the trigger's provider overrides into chat.postMessage, the endpoint's channel staying its own", async () => {
    receiver.respond = () => ({ body: { ok: true, ts: "1.3" } });
    const providerData = { unfurlLinks: false, _passthrough: { body: { channel: "#elsewhere", mrkdwn: true } } };
    await providers
      .get("chat", "slack")!
      .send({ conversation: "C123", accessToken: "xoxb-1", content: "Deploy finished" }, { ...sendContext(http, { baseUrl: receiver.url }), providerData });
    expect(json(only().body)).toEqual({ text: "Deploy finished", unfurl_links: false, mrkdwn: true, channel: "C123" });
  });

  it("maps Slack's refusals: 404 no_service final with its text", async () => {
    receiver.respond = () => ({ status: 404, body: "no_service" });
    await expect(send("slack", { webhookUrl: hook(), content: "x" })).rejects.toMatchObject({
      transient: false,
      status: 404,
      message: expect.stringContaining("no_service"),
    });
  });
});

describe("discord", () => {
  it("posts {content} with wait=true, keeping the URL's own query, and answers the message id", async () => {
    receiver.respond = () => ({ body: { id: "1180000000000000001", timestamp: "2026-11-25T16:00:00.000000+00:00", content: "Deploy finished" } });
    const result = await send("discord", { webhookUrl: `${hook("/api/webhooks/1234")}?thread_id=77`, content: "Deploy finished" });
    expect(result.id).toBe("1180000000000000001");
    const request = only();
    const url = new URL(request.url, receiver.url);
    expect(url.pathname).toBe(`/api/webhooks/1234/${HOOK_SECRET}`);
    expect(url.searchParams.get("wait")).toBe("true");
    expect(url.searchParams.get("thread_id")).toBe("77");
    expect(json(request.body)).toEqual({ content: "Deploy finished" });
  });

  it("sends blocks as embeds", async () => {
    const blocks = [{ title: "Deploy", description: "finished" }];
    receiver.respond = () => ({ body: { id: "1" } });
    await send("discord", { webhookUrl: hook(), content: "Deploy finished", blocks });
    expect(json(only().body)).toEqual({ content: "Deploy finished", embeds: blocks });
  });
});

describe("discord overrides", () => {
  it("adds the trigger's chat overrides to the message, as Novu does", async () => {
    receiver.respond = () => ({ body: { id: "2" } });
    await send("discord", { webhookUrl: hook(), content: "Deploy finished", customData: { username: "Deploy bot", avatar_url: "https://example.com/a.png" } });
    expect(json(only().body)).toEqual({ content: "Deploy finished", username: "Deploy bot", avatar_url: "https://example.com/a.png" });
  });
});

describe("msteams", () => {
  it("wraps plain content in an Adaptive Card message and answers the request id", async () => {
    receiver.respond = () => ({ headers: { "request-id": "teams-req-1" }, body: "1" });
    const result = await send("msteams", { webhookUrl: hook("/webhookb2"), content: "Deploy finished", title: "CI" });
    expect(result.id).toBe("teams-req-1");
    expect(json(only().body)).toEqual({
      type: "message",
      attachments: [
        {
          contentType: "application/vnd.microsoft.card.adaptive",
          content: {
            $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
            type: "AdaptiveCard",
            version: "1.4",
            body: [
              { type: "TextBlock", text: "CI", weight: "Bolder", size: "Medium", wrap: true },
              { type: "TextBlock", text: "Deploy finished", wrap: true },
            ],
          },
        },
      ],
    });
  });

  it("sends a card written as JSON content as it is", async () => {
    const card = { "@type": "MessageCard", "@context": "http://schema.org/extensions", summary: "Deploy", sections: [{ activityTitle: "Deploy finished" }] };
    await send("msteams", { webhookUrl: hook(), content: JSON.stringify(card) });
    expect(json(only().body)).toEqual(card);
  });

  it("reads a refusal a connector answers with 200", async () => {
    receiver.respond = () => ({ body: "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 429 with ContextId tcid=0" });
    await expect(send("msteams", { webhookUrl: hook(), content: "x" })).rejects.toMatchObject({ transient: true });
    receiver.respond = () => ({ body: "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 413 with ContextId tcid=0" });
    await expect(send("msteams", { webhookUrl: hook(), content: "x" })).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("HTTP error 413"),
    });
  });

  describe("as its app's bot (ms_teams_channel and ms_teams_user endpoints)", () => {
    /** Each test its own integration: tokens are kept per integration. */
    const sendAsBot = (message: ChatMessage, integrationId: string) =>
      providers
        .get("chat", "msteams")!
        .send(message, sendContext(http, { clientId: "app-1", secretKey: "bot-secret", tenantId: "home-tenant", baseUrl: receiver.url }, integrationId));
    let tokensMinted = 0;
    beforeEach(() => {
      tokensMinted = 0;
      receiver.respond = (request) => {
        if (request.url.endsWith("/oauth2/v2.0/token"))
          return { body: { token_type: "Bearer", expires_in: 3599, access_token: `bot-token-${++tokensMinted}` } };
        if (request.url === "/teams/v3/conversations") return { status: 201, body: { id: "a:1-direct" } };
        return { status: 201, body: { id: "1700000000001" } };
      };
    });
    const paths = () => receiver.received.map((request) => request.url);

    it("takes a token from the bot's tenant once, and posts to the channel in the customer's tenant", async () => {
      const channel = { conversation: "19:general@thread.tacv2", teamId: "19:team@thread.tacv2", workspaceId: "customer-tenant", content: "Deploy 4.2 done" };
      expect((await sendAsBot(channel, "teams-a")).id).toBe("1700000000001");
      await sendAsBot(channel, "teams-a");
      expect(paths()).toEqual([
        "/home-tenant/oauth2/v2.0/token",
        "/teams/v3/conversations/19%3Ageneral%40thread.tacv2/activities",
        "/teams/v3/conversations/19%3Ageneral%40thread.tacv2/activities",
      ]);
      const [token, post] = receiver.received;
      expect(formOf(token!.body)).toEqual({
        grant_type: "client_credentials",
        client_id: "app-1",
        client_secret: "bot-secret",
        scope: "https://api.botframework.com/.default",
      });
      expect(post!.headers.authorization).toBe("Bearer bot-token-1");
      expect(json(post!.body)).toEqual({
        type: "message",
        text: "Deploy 4.2 done",
        channelData: { tenant: { id: "customer-tenant" }, team: { id: "19:team@thread.tacv2" }, channel: { id: "19:general@thread.tacv2" } },
      });
    });

    it("opens a conversation with a person, then posts into it", async () => {
      await sendAsBot({ conversation: "29:user-aad", direct: true, workspaceId: "customer-tenant", content: "Your report is ready" }, "teams-b");
      expect(paths()).toEqual(["/home-tenant/oauth2/v2.0/token", "/teams/v3/conversations", "/teams/v3/conversations/a%3A1-direct/activities"]);
      expect(json(receiver.received[1]!.body)).toEqual({
        isGroup: false,
        bot: { id: "app-1" },
        members: [{ id: "29:user-aad" }],
        channelData: { tenant: { id: "customer-tenant" } },
      });
      expect(json(receiver.received[2]!.body)).toEqual({ type: "message", text: "Your report is ready", channelData: { tenant: { id: "customer-tenant" } } });
    });

    it("merges the trigger's provider overrides into the message, not the token request nor the conversation it opens", async () => {
      const providerData = { summary: "Report", _passthrough: { body: { importance: "high" }, headers: { "x-trace": "t-1" } } };
      await providers.get("chat", "msteams")!.send(
        { conversation: "29:user-aad", direct: true, workspaceId: "customer-tenant", content: "Your report is ready" },
        {
          ...sendContext(http, { clientId: "app-1", secretKey: "bot-secret", tenantId: "home-tenant", baseUrl: receiver.url }, "teams-overrides"),
          providerData,
        },
      );
      const [token, opened, posted] = receiver.received;
      expect(formOf(token!.body)).not.toHaveProperty("summary");
      expect(json(opened!.body)).not.toHaveProperty("summary");
      expect([token!.headers["x-trace"], opened!.headers["x-trace"], posted!.headers["x-trace"]]).toEqual([undefined, undefined, "t-1"]);
      expect(json(posted!.body)).toMatchObject({ type: "message", text: "Your report is ready", summary: "Report", importance: "high" });
    });

    it("mints a new token after Teams refuses one, and needs the connection's tenant and the app's credentials", async () => {
      const channel = { conversation: "19:c@thread.tacv2", teamId: "19:t@thread.tacv2", workspaceId: "customer-tenant", content: "x" };
      const answer = receiver.respond;
      receiver.respond = (request) => (request.url.includes("/activities") ? { status: 401, body: { message: "token expired" } } : answer(request));
      await expect(sendAsBot(channel, "teams-c")).rejects.toMatchObject({ transient: true, status: 401 });
      receiver.respond = answer;
      await sendAsBot(channel, "teams-c");
      expect(receiver.received.at(-1)!.headers.authorization).toBe("Bearer bot-token-2");
      await expect(sendAsBot({ ...channel, workspaceId: undefined }, "teams-c")).rejects.toThrow(/names no workspace/);
      const provider = providers.get("chat", "msteams")!;
      await expect(provider.send(channel, sendContext(http, { clientId: "app-1", baseUrl: receiver.url }, "teams-d"))).rejects.toThrow(/no secretKey/);
    });
  });
});

describe("mattermost", () => {
  it("posts {text, channel} and answers the request id", async () => {
    receiver.respond = () => ({ headers: { "x-request-id": "mm-1" }, body: "ok" });
    const result = await send("mattermost", { webhookUrl: hook("/hooks"), channel: "town-square", content: "Deploy finished" });
    expect(result.id).toBe("mm-1");
    expect(json(only().body)).toEqual({ text: "Deploy finished", channel: "town-square" });
  });

  it("leaves the channel to the hook's default when the subscriber names none", async () => {
    await send("mattermost", { webhookUrl: hook(), content: "Deploy finished" });
    expect(json(only().body)).toEqual({ text: "Deploy finished" });
  });
});

describe("rocket-chat", () => {
  it("calls chat.sendMessage on the server with the user's token and answers the message _id", async () => {
    receiver.respond = () => ({
      body: { message: { _id: "rc-msg-1", rid: "GENERAL", msg: "Deploy finished", ts: "2026-11-25T16:00:00.000Z" }, success: true },
    });
    const result = await send(
      "rocket-chat",
      { webhookUrl: `${receiver.url}/`, channel: "GENERAL", content: "Deploy finished" },
      { user: "user-id-1", token: "rc-personal-token" },
    );
    expect(result.id).toBe("rc-msg-1");
    const request = only();
    expect(request.url).toBe("/api/v1/chat.sendMessage");
    expect(request.headers["x-auth-token"]).toBe("rc-personal-token");
    expect(request.headers["x-user-id"]).toBe("user-id-1");
    expect(json(request.body)).toEqual({ message: { rid: "GENERAL", msg: "Deploy finished" } });
  });

  it("needs the subscriber's room", async () => {
    await expect(send("rocket-chat", { webhookUrl: receiver.url, content: "x" }, { user: "u", token: "t" })).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("channel"),
    });
    expect(receiver.received).toHaveLength(0);
  });
});

describe("zulip", () => {
  it("posts {text} to the Slack-compatible webhook", async () => {
    receiver.respond = () => ({ body: { result: "success", msg: "" } });
    const result = await send("zulip", {
      webhookUrl: `${receiver.url}/api/v1/external/slack_incoming?api_key=${HOOK_SECRET}&stream=ops`,
      content: "Deploy finished",
    });
    expect(result).toEqual({});
    const request = only();
    expect(request.url).toBe(`/api/v1/external/slack_incoming?api_key=${HOOK_SECRET}&stream=ops`);
    expect(json(request.body)).toEqual({ text: "Deploy finished" });
  });

  it("reads Zulip's error answer", async () => {
    receiver.respond = () => ({ status: 400, body: { result: "error", msg: "Stream 'ops' does not exist", code: "STREAM_DOES_NOT_EXIST" } });
    await expect(send("zulip", { webhookUrl: hook(), content: "x" })).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("does not exist"),
    });
  });
});

describe("grafana-on-call", () => {
  it("posts the formatted-webhook alert from the integration's fields", async () => {
    receiver.respond = () => ({ body: "Ok." });
    const credentials = {
      alertUid: "alert-42",
      title: "Disk almost full",
      imageUrl: "https://example.com/graph.png",
      state: "alerting",
      externalLink: "https://example.com/runbook",
    };
    expect(await send("grafana-on-call", { webhookUrl: hook("/integrations/v1/formatted_webhook"), content: "Disk at 93%" }, credentials)).toEqual({});
    const request = only();
    expect(request.url).toBe(`/integrations/v1/formatted_webhook/${HOOK_SECRET}`);
    expect(json(request.body)).toEqual({
      alert_uid: "alert-42",
      title: "Disk almost full",
      image_url: "https://example.com/graph.png",
      state: "alerting",
      link_to_upstream_details: "https://example.com/runbook",
      message: "Disk at 93%",
    });
  });
});

describe("ryver", () => {
  it("posts {content}", async () => {
    await send("ryver", { webhookUrl: hook("/application/webhook"), content: "Deploy finished" });
    expect(json(only().body)).toEqual({ content: "Deploy finished" });
  });
});

describe("getstream", () => {
  it("posts {text} with the API key in X-API-KEY and answers the webhook id", async () => {
    receiver.respond = () => ({ headers: { "x-webhook-id": "gs-1" } });
    const result = await send("getstream", { webhookUrl: hook(), content: "Deploy finished" }, { apiKey: "stream-key-secret" });
    expect(result.id).toBe("gs-1");
    const request = only();
    expect(request.headers["x-api-key"]).toBe("stream-key-secret");
    expect(json(request.body)).toEqual({ text: "Deploy finished" });
  });
});

describe("whatsapp-business", () => {
  const credentials = () => ({ apiToken: "wa-access-token", phoneNumberIdentification: "106540352242922", baseUrl: receiver.url });

  it("sends a text message through the Cloud API and answers the wamid", async () => {
    receiver.respond = () => ({
      body: {
        messaging_product: "whatsapp",
        contacts: [{ input: "+15550001111", wa_id: "15550001111" }],
        messages: [{ id: "wamid.HBgLMTU1NTAwMDExMTEVAgARGBI" }],
      },
    });
    const result = await send("whatsapp-business", { phone: "+15550001111", content: "Your order shipped" }, credentials());
    expect(result.id).toBe("wamid.HBgLMTU1NTAwMDExMTEVAgARGBI");
    const request = only();
    expect(request.url).toMatch(/^\/v\d+\.0\/106540352242922\/messages$/);
    expect(request.headers.authorization).toBe("Bearer wa-access-token");
    expect(json(request.body)).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "+15550001111",
      type: "text",
      text: { body: "Your order shipped", preview_url: false },
    });
  });

  it("sends the kind of message the overrides name, as Novu does: a template, or text with their body and link preview", async () => {
    receiver.respond = () => ({ body: { messages: [{ id: "wamid.2" }] } });
    const template = { name: "order_shipped", language: { code: "en_US" }, components: [{ type: "body", parameters: [{ type: "text", text: "A-1" }] }] };
    await send("whatsapp-business", { phone: "+15550001111", content: "Your order shipped", customData: { template } }, credentials());
    await send(
      "whatsapp-business",
      { phone: "+15550001111", content: "Your order shipped", customData: { text: { body: "See https://example.com/A-1", preview_url: true } } },
      credentials(),
    );
    const [first, second] = receiver.received.map((request) => json(request.body));
    expect(first).toEqual({ messaging_product: "whatsapp", recipient_type: "individual", to: "+15550001111", type: "template", template });
    expect(second).toMatchObject({ type: "text", text: { body: "See https://example.com/A-1", preview_url: true } });
  });

  it("retries Meta's rate limits, which come as 400s, and not its other 400s", async () => {
    receiver.respond = () => ({
      status: 400,
      body: { error: { message: "(#130429) Rate limit hit", type: "OAuthException", code: 130429, fbtrace_id: "A1" } },
    });
    await expect(send("whatsapp-business", { phone: "+15550001111", content: "x" }, credentials())).rejects.toMatchObject({ transient: true, status: 400 });
    receiver.respond = () => ({
      status: 400,
      body: { error: { message: "(#131030) Recipient phone number not in allowed list", type: "OAuthException", code: 131030 } },
    });
    await expect(send("whatsapp-business", { phone: "+15550001111", content: "x" }, credentials())).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("not in allowed list"),
    });
  });
});

describe("chat-webhook", () => {
  it("posts the message as JSON, signed over the exact body with the integration's secret", async () => {
    receiver.respond = () => ({ body: { id: "wh-1" } });
    const message = { webhookUrl: hook(), content: "Deploy finished", title: "CI", channel: "ops", phone: "+15550100" };
    const result = await send("chat-webhook", message, { secretKey: "webhook-signing-secret" });
    expect(result.id).toBe("wh-1");
    const request = only();
    expect(json(request.body)).toEqual({ content: "Deploy finished", webhookUrl: message.webhookUrl, channel: "ops", phoneNumber: "+15550100", title: "CI" });
    expect(request.headers["x-novu-signature"]).toBe(createHmac("sha256", "webhook-signing-secret").update(request.body).digest("hex"));
    expect(request.headers["idempotency-key"]).toBe("message-1");
  });

  it("signs the body with the trigger's provider overrides merged into it", async () => {
    const provider = providers.get("chat", "chat-webhook")!;
    const providerData = { priority: "high", _passthrough: { body: { source: "ci" } } };
    await provider.send({ webhookUrl: hook(), content: "Deploy finished" }, { ...sendContext(http, { secretKey: "webhook-signing-secret" }), providerData });
    const request = only();
    expect(json(request.body)).toMatchObject({ content: "Deploy finished", priority: "high", source: "ci" });
    expect(request.headers["x-novu-signature"]).toBe(createHmac("sha256", "webhook-signing-secret").update(request.body).digest("hex"));
  });

  it("sends unsigned without a secret", async () => {
    await send("chat-webhook", { webhookUrl: hook(), content: "Deploy finished" });
    expect(only().headers["x-novu-signature"]).toBeUndefined();
  });
});

/** Each provider, set up to post to the receiver, with the settings (integration and subscriber) it cannot do without. */
const cases: { id: string; credentials: () => ProviderCredentials; message: () => ChatMessage; required: string[] }[] = [
  { id: "slack", credentials: () => ({}), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
  { id: "discord", credentials: () => ({}), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
  { id: "msteams", credentials: () => ({}), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
  { id: "mattermost", credentials: () => ({}), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
  {
    id: "rocket-chat",
    credentials: () => ({ user: "u1", token: "secret-rc" }),
    message: () => ({ webhookUrl: hook(), channel: "GENERAL", content: "x" }),
    required: ["user", "token", "webhookUrl", "channel"],
  },
  { id: "zulip", credentials: () => ({}), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
  { id: "grafana-on-call", credentials: () => ({ alertUid: "a" }), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
  { id: "ryver", credentials: () => ({}), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
  { id: "getstream", credentials: () => ({ apiKey: "secret-gs" }), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["apiKey", "webhookUrl"] },
  {
    id: "whatsapp-business",
    credentials: () => ({ apiToken: "secret-wa", phoneNumberIdentification: "1065", baseUrl: receiver.url }),
    message: () => ({ phone: "+15550001111", content: "x" }),
    required: ["apiToken", "phoneNumberIdentification", "phone"],
  },
  { id: "chat-webhook", credentials: () => ({ secretKey: "secret-cw" }), message: () => ({ webhookUrl: hook(), content: "x" }), required: ["webhookUrl"] },
];

async function failure(id: string, message: ChatMessage, credentials: ProviderCredentials): Promise<ProviderError> {
  const error = await send(id, message, credentials).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  const text = (error as Error).message;
  for (const secret of [HOOK_SECRET, credentials.token, credentials.apiKey, credentials.apiToken, credentials.secretKey]) {
    if (secret) expect(text).not.toContain(secret);
  }
  return error as ProviderError;
}

describe.each(cases)("$id answers", ({ id, credentials, message, required }) => {
  it("429 with Retry-After: transient, after that long", async () => {
    receiver.respond = () => ({ status: 429, headers: { "retry-after": "3" }, body: { message: "You are being rate limited.", retry_after: 3 } });
    expect(await failure(id, message(), credentials())).toMatchObject({ transient: true, status: 429, retryAfterMs: 3000 });
  });

  it("5xx: transient", async () => {
    receiver.respond = () => ({ status: 502, body: "Bad Gateway" });
    expect(await failure(id, message(), credentials())).toMatchObject({ transient: true, status: 502 });
  });

  it("400: final, with the vendor's text", async () => {
    receiver.respond = () => ({ status: 400, body: "invalid_payload" });
    const error = await failure(id, message(), credentials());
    expect(error).toMatchObject({ transient: false, status: 400 });
    expect(error.message).toContain("invalid_payload");
  });

  it.each(required)("no %s: final, naming it, nothing sent", async (field) => {
    const error = await failure(id, { ...message(), [field]: undefined }, { ...credentials(), [field]: undefined });
    expect(error.transient).toBe(false);
    expect(error.message).toContain(field);
    expect(receiver.received).toHaveLength(0);
  });
});

describe("the outbound guard", () => {
  it("keeps a webhook on a private address from being posted to, without showing its secret", async () => {
    const strict = createOutbound(DEFAULT_OUTBOUND_POLICY);
    const provider = providers.get("chat", "slack");
    const error = await provider?.send({ webhookUrl: hook(), content: "x" }, sendContext(strict, {})).catch((caught: unknown) => caught);
    await strict.close();
    expect(error).toBeInstanceOf(OutboundRefused);
    expect((error as Error).message).toMatch(/loopback/);
    expect((error as Error).message).not.toContain(HOOK_SECRET);
    expect(receiver.received).toHaveLength(0);
  });

  it("refuses a webhook URL that carries credentials without showing them", async () => {
    const error = await send("discord", { webhookUrl: `http://user:${HOOK_SECRET}@127.0.0.1:1/x`, content: "x" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutboundRefused);
    expect((error as Error).message).not.toContain(HOOK_SECRET);
  });
});
