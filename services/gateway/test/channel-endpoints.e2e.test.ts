import { Novu } from "@novu/api";
import { eventually, startReceiver, type Receiver } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, messagesOf, settledMessage } from "./delivery-helpers.js";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
let receiver: Receiver;
let workflow: string;
beforeAll(async () => {
  receiver = await startReceiver(() => ({ body: "ok" }));
  // The webhook receiver is local.
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
  await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "endpoints-slack" });
  await createIntegration(stack, { providerId: "discord", channel: "chat", identifier: "endpoints-discord" });
  await createIntegration(stack, { providerId: "sendgrid", channel: "email", identifier: "endpoints-mail", credentials: { apiKey: "k" } });
  workflow = await createWorkflow(stack, "Endpoint note", [{ template: { type: "chat", content: "Build {{build}} is green" } }]);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const webhook = (subscriberId: string, path: string, more: Record<string, unknown> = {}) => ({
  subscriberId,
  integrationIdentifier: "endpoints-discord",
  type: "webhook" as const,
  endpoint: { url: `${receiver.url}${path}` },
  ...more,
});

const postsTo = (path: string) => receiver.received.filter((request) => request.url.split("?")[0] === path);

describe("channel endpoints (Novu's /v1/channel-endpoints)", () => {
  it("are created, listed with filters and cursors, read, changed and deleted through @novu/api", async () => {
    await novu.subscribers.create({ subscriberId: "endpoint-owner" }, undefined, undefined, once);
    const created = (await novu.channelEndpoints.create(webhook("endpoint-owner", "/owner"), undefined, once)).result;
    expect(created).toMatchObject({
      channel: "chat",
      providerId: "discord",
      integrationIdentifier: "endpoints-discord",
      connectionIdentifier: null,
      subscriberId: "endpoint-owner",
      contextKeys: [],
      type: "webhook",
      endpoint: { url: `${receiver.url}/owner` },
    });
    expect(created.identifier).toMatch(/^chendp_[A-Za-z0-9_-]{12}$/);
    const named = (
      await novu.channelEndpoints.create(
        {
          identifier: "team-room",
          subscriberId: "endpoint-owner",
          integrationIdentifier: "endpoints-slack",
          type: "slack_channel",
          endpoint: { channelId: "C0123" },
          context: { team: "blue" },
        },
        undefined,
        once,
      )
    ).result;
    expect(named).toMatchObject({ identifier: "team-room", contextKeys: ["team:blue"], providerId: "slack" });
    // A subscriber made on the way, when asked.
    await novu.channelEndpoints.create(webhook("endpoint-newcomer", "/newcomer", { createSubscriberIfMissing: true }), undefined, once);
    expect((await novu.subscribers.retrieve("endpoint-newcomer", undefined, once)).result.subscriberId).toBe("endpoint-newcomer");

    const all = (await novu.channelEndpoints.list({ limit: 2 }, once)).result;
    expect(all.data.map((endpoint) => endpoint.subscriberId)).toEqual(["endpoint-newcomer", "endpoint-owner"]);
    expect(all).toMatchObject({ totalCount: 3, totalCountCapped: false, previous: null });
    const rest = (await novu.channelEndpoints.list({ limit: 2, after: all.next! }, once)).result;
    expect(rest.data.map((endpoint) => endpoint.identifier)).toEqual([created.identifier]);
    expect(rest.next).toBeNull();
    const fromCursor = (await novu.channelEndpoints.list({ limit: 2, after: all.next!, includeCursor: true }, once)).result;
    expect(fromCursor.data.map((endpoint) => endpoint.subscriberId)).toEqual(["endpoint-owner", "endpoint-owner"]);
    expect(fromCursor.data[0]!.identifier).toBe(all.data[1]!.identifier);
    const filtered = async (filters: Record<string, unknown>) =>
      (await novu.channelEndpoints.list(filters, once)).result.data.map((endpoint) => endpoint.identifier).sort();
    expect(await filtered({ subscriberId: "endpoint-owner" })).toEqual([created.identifier, "team-room"].sort());
    expect(await filtered({ contextKeys: ["team:blue"] })).toEqual(["team-room"]);
    expect(await filtered({ integrationIdentifier: "endpoints-slack" })).toEqual(["team-room"]);
    expect(await filtered({ orderDirection: "ASC", limit: 1 })).toEqual([created.identifier]);

    const changed = await novu.channelEndpoints.update({ endpoint: { channelId: "C0456" } }, "team-room", undefined, once);
    expect(changed.result.endpoint).toEqual({ channelId: "C0456" });
    expect((await novu.channelEndpoints.retrieve("team-room", undefined, once)).result.endpoint).toEqual({ channelId: "C0456" });

    const refusals = await Promise.all([
      failureOf(novu.channelEndpoints.create({ ...webhook("endpoint-owner", "/x"), identifier: "team-room" }, undefined, once)),
      failureOf(novu.channelEndpoints.create(webhook("nobody", "/x"), undefined, once)),
      failureOf(novu.channelEndpoints.create({ ...webhook("endpoint-owner", "/x"), integrationIdentifier: "missing" }, undefined, once)),
      failureOf(novu.channelEndpoints.create({ ...webhook("endpoint-owner", "/x"), integrationIdentifier: "endpoints-mail" }, undefined, once)),
      failureOf(
        novu.channelEndpoints.create(
          { subscriberId: "endpoint-owner", integrationIdentifier: "endpoints-discord", type: "slack_user", endpoint: { userId: "U1" } },
          undefined,
          once,
        ),
      ),
      failureOf(novu.channelEndpoints.update({ endpoint: { url: `${receiver.url}/y` } }, "team-room", undefined, once)),
      failureOf(novu.channelEndpoints.retrieve("missing", undefined, once)),
      failureOf(novu.channelEndpoints.delete("missing", undefined, once)),
    ]);
    expect(refusals.map((refusal) => refusal.statusCode)).toEqual([409, 404, 404, 422, 422, 400, 404, 404]);
    expect(JSON.parse(refusals[2]!.body).message).toBe("Integration not found: missing");
    expect(JSON.parse(refusals[5]!.body).message).toBe("Endpoint must match the required format for type slack_channel");

    // Raw requests the SDK would not send: a body of the wrong shape, a forbidden destination, both cursors.
    const raw = await Promise.all([
      stack.request("POST", "/v1/channel-endpoints", { ...webhook("endpoint-owner", "/x"), endpoint: { url: "http://a.example", extra: "1" } }),
      stack.request("POST", "/v1/channel-endpoints", { ...webhook("endpoint-owner", "/x"), type: "fax" }),
      stack.request("POST", "/v1/channel-endpoints", { ...webhook("endpoint-owner", "/x"), endpoint: { url: "http://169.254.169.254/latest" } }),
      stack.request("GET", "/v1/channel-endpoints?after=a&before=b"),
      stack.request("GET", "/v1/channel-endpoints?limit=101"),
    ]);
    expect(raw.map((reply) => reply.status)).toEqual([422, 422, 422, 400, 422]);
    expect(JSON.stringify(raw[2]!.body)).toContain("endpoint.url");

    // Another environment sees none of them.
    const other = (await novu.environments.create({ name: "Endpoints elsewhere", color: "#333333" }, undefined, once)).result;
    const there = new Novu({ secretKey: other.apiKeys![0]!.key, serverURL: stack.url });
    expect((await there.channelEndpoints.list({}, once)).result.totalCount).toBe(0);
    expect((await failureOf(there.channelEndpoints.retrieve("team-room", undefined, once))).statusCode).toBe(404);

    await novu.channelEndpoints.delete("team-room", undefined, once);
    expect((await failureOf(novu.channelEndpoints.retrieve("team-room", undefined, once))).statusCode).toBe(404);
    // An endpoint goes with its subscriber.
    await novu.subscribers.delete("endpoint-newcomer", undefined, once);
    expect((await novu.channelEndpoints.list({ subscriberId: "endpoint-newcomer" }, once)).result.totalCount).toBe(0);
  });

  it("receive a chat step: every endpoint of the trigger's exact contexts, then the subscriber's own channel", async () => {
    await novu.subscribers.create({ subscriberId: "endpoint-reader" }, undefined, undefined, once);
    await novu.subscribers.credentials.update(
      { providerId: "slack", integrationIdentifier: "endpoints-slack", credentials: { webhookUrl: `${receiver.url}/legacy` } },
      "endpoint-reader",
      undefined,
      once,
    );
    await novu.channelEndpoints.create(webhook("endpoint-reader", "/plain"), undefined, once);
    await novu.channelEndpoints.create(webhook("endpoint-reader", "/plain-2", { integrationIdentifier: "endpoints-slack" }), undefined, once);
    await novu.channelEndpoints.create(webhook("endpoint-reader", "/blue", { context: { team: "blue" } }), undefined, once);

    const trigger = async (transactionId: string, more: Record<string, unknown> = {}) => {
      const reply = await stack.request("POST", "/v1/events/trigger", {
        name: workflow,
        to: "endpoint-reader",
        payload: { build: transactionId },
        transactionId,
        ...more,
      });
      expect(reply.body.data.status, JSON.stringify(reply.body)).toBe("processed");
    };
    await trigger("t-endpoints-plain");
    const sent = await eventually(async () => {
      const messages = await messagesOf(stack, "t-endpoints-plain", "chat");
      return messages.length === 3 && messages.every(delivered) ? messages : undefined;
    }, 15_000);
    expect(sent.map((message) => message.status)).toEqual(["sent", "sent", "sent"]);
    for (const path of ["/plain", "/plain-2", "/legacy"]) {
      expect(postsTo(path).map((request) => JSON.parse(request.body).content ?? JSON.parse(request.body).text)).toEqual(["Build t-endpoints-plain is green"]);
    }
    expect(postsTo("/blue")).toEqual([]);

    // With a context, only the endpoints made for exactly it (and the subscriber's channel).
    await trigger("t-endpoints-blue", { context: { team: "blue" } });
    await settledMessage(stack, "t-endpoints-blue", "chat", delivered);
    await eventually(async () => (postsTo("/blue").length === 1 ? true : undefined), 15_000);
    expect(postsTo("/plain")).toHaveLength(1);
    expect(postsTo("/legacy")).toHaveLength(2);

    // overrides.chat.integrationIdentifier narrows endpoints as it narrows channels.
    await trigger("t-endpoints-narrow", { overrides: { chat: { integrationIdentifier: "endpoints-discord" } } });
    await settledMessage(stack, "t-endpoints-narrow", "chat", delivered);
    await eventually(async () => (postsTo("/plain").length === 2 ? true : undefined), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await messagesOf(stack, "t-endpoints-narrow", "chat")).length).toBe(1);
    expect(postsTo("/plain-2")).toHaveLength(1);
    expect(postsTo("/legacy")).toHaveLength(2);
  });

  it("post a Slack channel or user endpoint through chat.postMessage with its connection's token, and fail clearly without one", async () => {
    const slackApi = await startReceiver((request) => {
      const body = JSON.parse(request.body) as { channel: string };
      if (body.channel === "C404") return { body: { ok: false, error: `channel_not_found for ${request.headers.authorization}` } };
      return { body: { ok: true, ts: `1700000000.${body.channel}` } };
    });
    try {
      await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "endpoints-slack-api", credentials: { baseUrl: slackApi.url } });
      await novu.subscribers.create({ subscriberId: "endpoint-slacker" }, undefined, undefined, once);
      await novu.channelConnections.create(
        {
          identifier: "slacker-workspace",
          subscriberId: "endpoint-slacker",
          integrationIdentifier: "endpoints-slack-api",
          workspace: { id: "T0001", name: "Acme" },
          auth: { accessToken: "xoxb-endpoint-token-1" },
        },
        undefined,
        once,
      );
      const slackEndpoint = (type: "slack_channel" | "slack_user", endpoint: Record<string, string>, connectionIdentifier?: string) =>
        novu.channelEndpoints.create(
          {
            subscriberId: "endpoint-slacker",
            integrationIdentifier: "endpoints-slack-api",
            type,
            endpoint,
            ...(connectionIdentifier ? { connectionIdentifier } : {}),
          } as Parameters<typeof novu.channelEndpoints.create>[0],
          undefined,
          once,
        );
      await slackEndpoint("slack_channel", { channelId: "C42" }, "slacker-workspace");
      await slackEndpoint("slack_user", { userId: "U7" }, "slacker-workspace");
      await slackEndpoint("slack_channel", { channelId: "C404" }, "slacker-workspace");
      await slackEndpoint("slack_channel", { channelId: "C9" });
      expect((await failureOf(slackEndpoint("slack_channel", { channelId: "C1" }, "missing-connection"))).statusCode).toBe(404);

      const reply = await stack.request("POST", "/v1/events/trigger", {
        name: workflow,
        to: "endpoint-slacker",
        payload: { build: "b-7" },
        transactionId: "t-slack-api",
      });
      expect(reply.body.data.status, JSON.stringify(reply.body)).toBe("processed");
      const messages = await eventually(async () => {
        const found = await messagesOf(stack, "t-slack-api", "chat");
        return found.length === 4 &&
          found.every((message) => message.status !== "sent" || delivered(message)) &&
          found.filter((message) => message.status === "error").length === 2
          ? found
          : undefined;
      }, 15_000);
      const posts = slackApi.received.map((request) => [request.url, request.headers.authorization, JSON.parse(request.body)] as const);
      expect(posts.sort((a, b) => a[2].channel.localeCompare(b[2].channel))).toEqual([
        ["/api/chat.postMessage", "Bearer xoxb-endpoint-token-1", { channel: "C404", text: "Build b-7 is green" }],
        ["/api/chat.postMessage", "Bearer xoxb-endpoint-token-1", { channel: "C42", text: "Build b-7 is green" }],
        ["/api/chat.postMessage", "Bearer xoxb-endpoint-token-1", { channel: "U7", text: "Build b-7 is green" }],
      ]);
      expect(messages.filter((message) => message.status === "sent")).toHaveLength(2);
      const errors = messages.filter((message) => message.status === "error").map((message) => [message.errorId, message.errorText]);
      expect(errors).toContainEqual(["chat_connection_missing", expect.stringContaining("names no channel connection")]);
      const refused = errors.find(([errorId]) => errorId === "unexpected_chat_error");
      expect(refused?.[1]).toContain("channel_not_found");
      expect(refused?.[1]).not.toContain("xoxb-endpoint-token-1");
    } finally {
      await slackApi.close();
    }
  });

  it("post a Teams channel or person endpoint as the app's bot, in the tenant their connection names", async () => {
    const microsoft = await startReceiver((request) => {
      if (request.url.endsWith("/oauth2/v2.0/token")) return { body: { token_type: "Bearer", expires_in: 3599, access_token: "teams-bot-token" } };
      if (request.url === "/teams/v3/conversations") return { status: 201, body: { id: "a:direct-with-person" } };
      return { status: 201, body: { id: `activity-${request.url.length}` } };
    });
    try {
      await createIntegration(stack, {
        providerId: "msteams",
        channel: "chat",
        identifier: "endpoints-teams",
        credentials: { clientId: "teams-app", secretKey: "teams-app-secret", tenantId: "app-home-tenant", baseUrl: microsoft.url },
      });
      await novu.subscribers.create({ subscriberId: "endpoint-teams-user" }, undefined, undefined, once);
      await novu.channelConnections.create(
        {
          identifier: "contoso-tenant",
          subscriberId: "endpoint-teams-user",
          integrationIdentifier: "endpoints-teams",
          workspace: { id: "contoso-tenant-id", name: "Contoso" },
          auth: { accessToken: "consented" },
        },
        undefined,
        once,
      );
      const teamsEndpoint = (type: "ms_teams_channel" | "ms_teams_user", endpoint: Record<string, string>) =>
        novu.channelEndpoints.create(
          {
            subscriberId: "endpoint-teams-user",
            integrationIdentifier: "endpoints-teams",
            connectionIdentifier: "contoso-tenant",
            type,
            endpoint,
          } as Parameters<typeof novu.channelEndpoints.create>[0],
          undefined,
          once,
        );
      expect((await teamsEndpoint("ms_teams_channel", { teamId: "19:team@thread.tacv2", channelId: "19:ops@thread.tacv2" })).result).toMatchObject({
        type: "ms_teams_channel",
        providerId: "msteams",
        endpoint: { teamId: "19:team@thread.tacv2", channelId: "19:ops@thread.tacv2" },
      });
      await teamsEndpoint("ms_teams_user", { userId: "29:person" });
      // A Teams endpoint on a Slack integration, and a channel without its team, are refused.
      const onSlack = novu.channelEndpoints.create(
        { subscriberId: "endpoint-teams-user", integrationIdentifier: "endpoints-slack", type: "ms_teams_user", endpoint: { userId: "29:x" } } as Parameters<
          typeof novu.channelEndpoints.create
        >[0],
        undefined,
        once,
      );
      expect((await failureOf(onSlack)).statusCode).toBe(422);
      expect(
        (
          await stack.request("POST", "/v1/channel-endpoints", {
            subscriberId: "endpoint-teams-user",
            integrationIdentifier: "endpoints-teams",
            type: "ms_teams_channel",
            endpoint: { channelId: "19:x@thread.tacv2" },
          })
        ).status,
      ).toBe(422);

      const reply = await stack.request("POST", "/v1/events/trigger", {
        name: workflow,
        to: "endpoint-teams-user",
        payload: { build: "b-8" },
        transactionId: "t-teams",
      });
      expect(reply.body.data.status, JSON.stringify(reply.body)).toBe("processed");
      const messages = await eventually(async () => {
        const found = await messagesOf(stack, "t-teams", "chat");
        return found.length === 2 && found.every(delivered) ? found : undefined;
      }, 15_000);
      expect(messages.map((message) => message.status)).toEqual(["sent", "sent"]);
      const seen = microsoft.received.map((request) => [request.url, request.headers.authorization ?? null, request.body] as const);
      const token = seen.filter(([url]) => url.endsWith("/oauth2/v2.0/token"));
      expect(token).toHaveLength(1);
      expect(token[0]![0]).toBe("/app-home-tenant/oauth2/v2.0/token");
      expect(new URLSearchParams(token[0]![2]).get("client_secret")).toBe("teams-app-secret");
      const posts = seen.filter(([url]) => url.startsWith("/teams/")).map(([url, authorization, body]) => [url, authorization, JSON.parse(body)]);
      expect(posts).toContainEqual([
        "/teams/v3/conversations/19%3Aops%40thread.tacv2/activities",
        "Bearer teams-bot-token",
        {
          type: "message",
          text: "Build b-8 is green",
          channelData: { tenant: { id: "contoso-tenant-id" }, team: { id: "19:team@thread.tacv2" }, channel: { id: "19:ops@thread.tacv2" } },
        },
      ]);
      expect(posts).toContainEqual([
        "/teams/v3/conversations",
        "Bearer teams-bot-token",
        { isGroup: false, bot: { id: "teams-app" }, members: [{ id: "29:person" }], channelData: { tenant: { id: "contoso-tenant-id" } } },
      ]);
      expect(posts).toContainEqual([
        "/teams/v3/conversations/a%3Adirect-with-person/activities",
        "Bearer teams-bot-token",
        { type: "message", text: "Build b-8 is green", channelData: { tenant: { id: "contoso-tenant-id" } } },
      ]);
    } finally {
      await microsoft.close();
    }
  });
});
