import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let fcm: { _id: string; identifier: string };
let slack: { _id: string; identifier: string };
beforeAll(async () => {
  stack = await startStack({ worker: false });
  fcm = await integration({ providerId: "fcm", channel: "push", identifier: "fcm-main", active: true });
  slack = await integration({ providerId: "slack", channel: "chat", identifier: "slack-main", active: true });
});
afterAll(async () => {
  await stack?.stop();
});

async function integration(body: Record<string, unknown>, headers?: Record<string, string>) {
  const reply = await stack.request<Data<{ _id: string; identifier: string }>>("POST", "/v1/integrations", body, headers);
  expect(reply.status).toBe(201);
  return reply.body.data;
}

async function subscriber(subscriberId: string, headers?: Record<string, string>) {
  expect((await stack.request("POST", "/v1/subscribers", { subscriberId }, headers)).status).toBe(201);
}

const patch = (subscriberId: string, body: unknown, headers?: Record<string, string>) =>
  stack.request("PATCH", `/v1/subscribers/${subscriberId}/credentials`, body, headers);

const channelsOf = async (subscriberId: string) => (await stack.request("GET", `/v1/subscribers/${subscriberId}`)).body.data.channels;

describe("PATCH /v1/subscribers/{subscriberId}/credentials", () => {
  it("binds a push channel to the provider's integration and appends device tokens as an ordered union", async () => {
    await subscriber("phone-owner");
    const first = await patch("phone-owner", { providerId: "fcm", credentials: { deviceTokens: ["t1", "t2", "t1"] } });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ subscriberId: "phone-owner", __v: 1 });
    expect(first.body.data.channels).toEqual([{ providerId: "fcm", _integrationId: fcm._id, credentials: { deviceTokens: ["t1", "t2"] } }]);
    const second = await patch("phone-owner", { providerId: "fcm", credentials: { deviceTokens: ["t3", "t2"] } });
    expect(second.body.data.channels[0].credentials.deviceTokens).toEqual(["t1", "t2", "t3"]);
    // Credentials without tokens keep the stored tokens.
    const third = await patch("phone-owner", { providerId: "fcm", credentials: {} });
    expect(third.body.data.channels[0].credentials.deviceTokens).toEqual(["t1", "t2", "t3"]);
    expect(third.body.data.__v).toBe(second.body.data.__v);
  });

  it("clears the tokens on an explicit empty list", async () => {
    await subscriber("clearer");
    await patch("clearer", { providerId: "fcm", credentials: { deviceTokens: ["a", "b"] } });
    const cleared = await patch("clearer", { providerId: "fcm", credentials: { deviceTokens: [] } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.channels[0].credentials.deviceTokens).toEqual([]);
  });

  it("replaces webhookUrl and channel, and stores the Grafana on-call fields", async () => {
    await subscriber("chatter");
    await patch("chatter", {
      providerId: "slack",
      integrationIdentifier: "slack-main",
      credentials: { webhookUrl: "https://hooks.slack.com/1", channel: "general" },
    });
    const replaced = await patch("chatter", { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/2" } });
    expect(replaced.body.data.channels).toEqual([
      {
        providerId: "slack",
        integrationIdentifier: "slack-main",
        _integrationId: slack._id,
        credentials: { webhookUrl: "https://hooks.slack.com/2", channel: "general", deviceTokens: [] },
      },
    ]);

    const grafana = await integration({ providerId: "grafana-on-call", channel: "chat", active: true });
    const grafanaFields = {
      alertUid: "alert-1",
      title: "Disk full",
      imageUrl: "https://img.example.com/d.png",
      state: "alerting",
      externalUrl: "https://grafana.example.com/a/1",
    };
    const stored = await patch("chatter", { providerId: "grafana-on-call", credentials: { webhookUrl: "https://oncall.example.com/hook", ...grafanaFields } });
    expect(stored.status).toBe(200);
    expect(stored.body.data.channels[1]).toEqual({
      providerId: "grafana-on-call",
      _integrationId: grafana._id,
      credentials: { webhookUrl: "https://oncall.example.com/hook", ...grafanaFields, deviceTokens: [] },
    });
    expect((await channelsOf("chatter"))[1].credentials).toMatchObject(grafanaFields);
  });

  it("binds to the newest active integration of the provider, or to the one with the given identifier", async () => {
    const older = await integration({ providerId: "expo", channel: "push", identifier: "expo-old", active: true });
    const newer = await integration({ providerId: "expo", channel: "push", identifier: "expo-new", active: true });
    await integration({ providerId: "expo", channel: "push", identifier: "expo-inactive", active: false });
    await subscriber("expo-user");
    const newest = await patch("expo-user", { providerId: "expo", credentials: { deviceTokens: ["e1"] } });
    expect(newest.body.data.channels.map((channel) => channel._integrationId)).toEqual([newer._id]);
    const chosen = await patch("expo-user", { providerId: "expo", integrationIdentifier: "expo-old", credentials: { deviceTokens: ["e2"] } });
    expect(chosen.body.data.channels).toEqual([
      { providerId: "expo", _integrationId: newer._id, credentials: { deviceTokens: ["e1"] } },
      { providerId: "expo", integrationIdentifier: "expo-old", _integrationId: older._id, credentials: { deviceTokens: ["e2"] } },
    ]);
    const inactive = await patch("expo-user", { providerId: "expo", integrationIdentifier: "expo-inactive", credentials: { deviceTokens: ["e3"] } });
    expect(inactive.status).toBe(400);
  });

  it("answers 400 naming the provider when it has no active integration, changing nothing", async () => {
    await subscriber("no-apns");
    const reply = await patch("no-apns", { providerId: "apns", credentials: { deviceTokens: ["x"] } });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ statusCode: 400, path: "/v1/subscribers/no-apns/credentials" });
    expect(reply.body.message).toMatch(/do not have active apns integration/);
    expect(await channelsOf("no-apns")).toEqual([]);
  });

  it("answers 404 for an unknown subscriber", async () => {
    const reply = await patch("nobody-here", { providerId: "fcm", credentials: { deviceTokens: ["x"] } });
    expect(reply.status).toBe(404);
    expect(reply.body.statusCode).toBe(404);
  });

  it("accepts novu-slack, which the SDK sends", async () => {
    const novuSlack = await integration({ providerId: "novu-slack", channel: "chat", active: true });
    await subscriber("novu-slacker");
    const reply = await patch("novu-slacker", { providerId: "novu-slack", credentials: { webhookUrl: "https://hooks.slack.com/n" } });
    expect(reply.status).toBe(200);
    expect(reply.body.data.channels[0]).toMatchObject({ providerId: "novu-slack", _integrationId: novuSlack._id });
  });

  it.each([
    ["an unknown provider", { providerId: "sendgrid", credentials: {} }, "providerId"],
    ["a missing provider", { credentials: {} }, "providerId"],
    ["missing credentials", { providerId: "fcm" }, "credentials"],
    ["tokens that are not an array", { providerId: "fcm", credentials: { deviceTokens: "t" } }, "credentials.deviceTokens"],
    ["a token that is not a string", { providerId: "fcm", credentials: { deviceTokens: [1] } }, "credentials.deviceTokens[0]"],
    ["more than 100 tokens", { providerId: "fcm", credentials: { deviceTokens: Array.from({ length: 101 }, (_, i) => `t${i}`) } }, "credentials.deviceTokens"],
    ["a token over 4096 characters", { providerId: "fcm", credentials: { deviceTokens: ["x".repeat(4097)] } }, "credentials.deviceTokens"],
    ["a relative webhookUrl", { providerId: "slack", credentials: { webhookUrl: "/hooks/1" } }, "credentials.webhookUrl"],
    ["a webhookUrl of another scheme", { providerId: "slack", credentials: { webhookUrl: "javascript:alert(1)" } }, "credentials.webhookUrl"],
    ["a webhookUrl that is not a string", { providerId: "slack", credentials: { webhookUrl: 7 } }, "credentials.webhookUrl"],
  ])("answers 422 for %s, changing nothing", async (_, body, field) => {
    await subscriber("validated");
    const before = await channelsOf("validated");
    const reply = await patch("validated", body);
    expect(reply.status).toBe(422);
    expect(reply.body.errors[field].messages.length).toBeGreaterThan(0);
    expect(await channelsOf("validated")).toEqual(before);
  });

  it("refuses a write that would leave more than 100 tokens in the channel", async () => {
    await subscriber("token-hoarder");
    const hundred = Array.from({ length: 100 }, (_, index) => `token-${index}`);
    expect((await patch("token-hoarder", { providerId: "fcm", credentials: { deviceTokens: hundred } })).status).toBe(200);
    const over = await patch("token-hoarder", { providerId: "fcm", credentials: { deviceTokens: ["one-too-many"] } });
    expect(over.status).toBe(422);
    expect(over.body.errors["credentials.deviceTokens"]).toBeDefined();
    expect((await channelsOf("token-hoarder"))[0].credentials.deviceTokens).toEqual(hundred);
    // Tokens already stored do not count twice.
    expect((await patch("token-hoarder", { providerId: "fcm", credentials: { deviceTokens: ["token-0"] } })).status).toBe(200);
  });

  it("loses no token under many concurrent PATCHes of one subscriber", async () => {
    await subscriber("popular");
    const tokens = Array.from({ length: 60 }, (_, index) => `device-${index}`);
    const replies = await Promise.all(tokens.map((token) => patch("popular", { providerId: "fcm", credentials: { deviceTokens: [token] } })));
    expect(replies.map((reply) => reply.status)).toEqual(tokens.map(() => 200));
    const stored = (await channelsOf("popular"))[0].credentials.deviceTokens;
    expect([...stored].sort()).toEqual([...tokens].sort());
  });

  it("binds only to integrations of the caller's environment", async () => {
    const production = { authorization: `ApiKey ${await stack.createKey("Production")}` };
    await subscriber("prod-user", production);
    const reply = await patch("prod-user", { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/p" } }, production);
    expect(reply.status).toBe(400);
    // The Development subscriber of the same id is another subscriber.
    expect((await patch("prod-only", { providerId: "fcm", credentials: {} }, production)).status).toBe(404);
  });
});

describe("PUT and DELETE /v1/subscribers/{subscriberId}/credentials", () => {
  it("replaces the device tokens on PUT", async () => {
    await subscriber("replacer");
    await patch("replacer", { providerId: "fcm", credentials: { deviceTokens: ["old-1", "old-2"] } });
    const reply = await stack.request("PUT", "/v1/subscribers/replacer/credentials", { providerId: "fcm", credentials: { deviceTokens: ["new-1", "new-1"] } });
    expect(reply.status).toBe(200);
    expect(reply.body.data.channels).toEqual([{ providerId: "fcm", _integrationId: fcm._id, credentials: { deviceTokens: ["new-1"] } }]);
  });

  it("deletes a provider's channel with 204", async () => {
    await subscriber("unsubscriber");
    await patch("unsubscriber", { providerId: "fcm", credentials: { deviceTokens: ["d"] } });
    await patch("unsubscriber", { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/u" } });
    const reply = await stack.request("DELETE", "/v1/subscribers/unsubscriber/credentials/fcm");
    expect(reply.status).toBe(204);
    expect(reply.body).toBeUndefined();
    expect((await channelsOf("unsubscriber")).map((channel) => channel.providerId)).toEqual(["slack"]);
    // Deleting what is not there is still a success; an unknown subscriber or provider is not.
    expect((await stack.request("DELETE", "/v1/subscribers/unsubscriber/credentials/fcm")).status).toBe(204);
    expect((await stack.request("DELETE", "/v1/subscribers/nobody-here/credentials/fcm")).status).toBe(404);
    expect((await stack.request("DELETE", "/v1/subscribers/unsubscriber/credentials/sendgrid")).status).toBe(422);
  });
});

describe("POST /v1/subscribers with channels", () => {
  const create = (body: Record<string, unknown>, headers?: Record<string, string>) => stack.request("POST", "/v1/subscribers", body, headers);

  it("applies the channels as credentials writes do: bound to the integration, tokens appended, in order", async () => {
    const created = await create({
      subscriberId: "born-connected",
      firstName: "Ada",
      channels: [
        { providerId: "fcm", credentials: { deviceTokens: ["t1", "t2"] } },
        { providerId: "slack", integrationIdentifier: "slack-main", credentials: { webhookUrl: "https://hooks.slack.com/c", channel: "general" } },
        { providerId: "fcm", credentials: { deviceTokens: ["t2", "t3"] } },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ subscriberId: "born-connected", firstName: "Ada" });
    expect(created.body.data.channels).toEqual([
      { providerId: "fcm", _integrationId: fcm._id, credentials: { deviceTokens: ["t1", "t2", "t3"] } },
      {
        providerId: "slack",
        integrationIdentifier: "slack-main",
        _integrationId: slack._id,
        credentials: { webhookUrl: "https://hooks.slack.com/c", channel: "general", deviceTokens: [] },
      },
    ]);
    expect(await channelsOf("born-connected")).toEqual(created.body.data.channels);

    // The upsert of an existing subscriber appends, as PATCH credentials does.
    const again = await create({ subscriberId: "born-connected", channels: [{ providerId: "fcm", credentials: { deviceTokens: ["t4"] } }] });
    expect(again.status).toBe(201);
    expect(again.body.data.firstName).toBe("Ada");
    expect(again.body.data.channels[0].credentials.deviceTokens).toEqual(["t1", "t2", "t3", "t4"]);
  });

  it("answers 400 naming the provider when it has no active integration, and creates nothing", async () => {
    const reply = await create({ subscriberId: "not-born", channels: [{ providerId: "apns", credentials: { deviceTokens: ["x"] } }] });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/do not have active apns integration/);
    expect((await stack.request("GET", "/v1/subscribers/not-born")).status).toBe(404);
  });

  it.each([
    ["an unknown provider", [{ providerId: "sendgrid", credentials: {} }], "channels[0].providerId"],
    ["missing credentials", [{ providerId: "fcm" }], "channels[0].credentials"],
    [
      "a relative webhookUrl",
      [
        { providerId: "fcm", credentials: {} },
        { providerId: "slack", credentials: { webhookUrl: "/h" } },
      ],
      "channels[1].credentials.webhookUrl",
    ],
    ["channels that are not an array", { providerId: "fcm" }, "channels"],
    ["more than 100 channels", Array.from({ length: 101 }, () => ({ providerId: "fcm", credentials: {} })), "channels"],
  ])("answers 422 for %s, writing nothing", async (_, channels, field) => {
    const reply = await create({ subscriberId: "not-born-either", firstName: "X", channels });
    expect(reply.status).toBe(422);
    expect(reply.body.errors[field].messages.length).toBeGreaterThan(0);
    expect((await stack.request("GET", "/v1/subscribers/not-born-either")).status).toBe(404);
  });

  it("binds only to integrations of the caller's environment", async () => {
    const production = { authorization: `ApiKey ${await stack.createKey("Production")}` };
    const reply = await create({ subscriberId: "prod-born", channels: [{ providerId: "fcm", credentials: { deviceTokens: ["p"] } }] }, production);
    expect(reply.status).toBe(400);
  });
});

describe("PUT /v1/subscribers/{subscriberId} with channels", () => {
  it("updates the profile and applies the channels as POST does, or, when one cannot be applied, neither", async () => {
    await stack.request("POST", "/v1/subscribers", {
      subscriberId: "put-connected",
      firstName: "Ada",
      channels: [{ providerId: "fcm", credentials: { deviceTokens: ["t1"] } }],
    });
    const put = await stack.request("PUT", "/v1/subscribers/put-connected", {
      lastName: "Lovelace",
      channels: [
        { providerId: "fcm", credentials: { deviceTokens: ["t2"] } },
        { providerId: "slack", integrationIdentifier: "slack-main", credentials: { webhookUrl: "https://hooks.slack.com/p" } },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });
    expect(put.body.data.channels).toEqual([
      { providerId: "fcm", _integrationId: fcm._id, credentials: { deviceTokens: ["t1", "t2"] } },
      {
        providerId: "slack",
        integrationIdentifier: "slack-main",
        _integrationId: slack._id,
        credentials: { webhookUrl: "https://hooks.slack.com/p", deviceTokens: [] },
      },
    ]);
    expect(await channelsOf("put-connected")).toEqual(put.body.data.channels);

    const refused = await stack.request("PUT", "/v1/subscribers/put-connected", {
      lastName: "Byron",
      channels: [{ providerId: "apns", credentials: { deviceTokens: ["x"] } }],
    });
    expect(refused.status).toBe(400);
    const invalid = await stack.request("PUT", "/v1/subscribers/put-connected", { lastName: "Byron", channels: [{ providerId: "sendgrid", credentials: {} }] });
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors["channels[0].providerId"].messages.length).toBeGreaterThan(0);
    const kept = await stack.request("GET", "/v1/subscribers/put-connected");
    expect(kept.body.data).toMatchObject({ lastName: "Lovelace", channels: put.body.data.channels });
  });
});
