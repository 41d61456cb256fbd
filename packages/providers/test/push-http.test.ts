import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { expo } from "../src/push/expo.js";
import { oneSignal } from "../src/push/one-signal.js";
import { pushWebhook } from "../src/push/push-webhook.js";
import { pusherBeams } from "../src/push/pusher-beams.js";
import { pushpad } from "../src/push/pushpad.js";
import type { ProviderError, Provider, ProviderCredentials } from "../src/types.js";
import type { Answer, Received } from "@notify/testing";
import { sendContext, sendingFixture } from "./helpers.js";
import { json, pushMessage } from "./push-helpers.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const WEBHOOK_SECRET = "whsec-super-secret";

/** Each vendor's documented path, auth header and answer; anything else is refused as the vendor would. */
function vendor(request: Received): Answer {
  switch (request.url) {
    case "/--/api/v2/push/send": {
      if (request.headers.authorization !== "Bearer expo-access-token")
        return { status: 401, body: { errors: [{ code: "UNAUTHORIZED", message: "bad token" }] } };
      const messages = JSON.parse(request.body) as { to: string }[];
      if (messages.length > 100) return { status: 400, body: { errors: [{ code: "PUSH_TOO_MANY_NOTIFICATIONS" }] } };
      if (messages.some(({ to }) => to.includes("crash"))) return { status: 500, body: { errors: [{ code: "INTERNAL_SERVER_ERROR" }] } };
      const data = messages.map(({ to }) =>
        to.includes("dead")
          ? {
              status: "error",
              message: `"${to}" is not a registered push notification recipient`,
              details: { error: "DeviceNotRegistered", expoPushToken: to },
            }
          : to.includes("limited")
            ? { status: "error", message: "rate exceeded", details: { error: "MessageRateExceeded" } }
            : { status: "ok", id: `ticket-${to}` },
      );
      return { status: 200, body: { data } };
    }
    case "/notifications": {
      if (request.headers.authorization !== "Basic onesignal-rest-key")
        return { status: 403, body: { errors: ["Access denied. Please include an 'Authorization: ...' header with a valid API key"] } };
      const body = json(request) as { include_player_ids?: string[]; include_aliases?: { external_id: string[] } };
      const external = body.include_aliases?.external_id;
      const targets = external ?? body.include_player_ids ?? [];
      const dead = targets.filter((id) => id.includes("dead"));
      if (dead.length === targets.length) return { status: 200, body: { id: "", errors: ["All included players are not subscribed"] } };
      const errors = external ? { invalid_aliases: { external_id: dead } } : { invalid_player_ids: dead };
      return { status: 200, body: { id: "onesignal-notification-1", ...(dead.length > 0 ? { errors } : {}) } };
    }
    case "/api/v1/projects/4242/notifications":
      if (request.headers.authorization !== "Bearer pushpad-token") return { status: 401, body: { error: "unauthorized" } };
      return { status: 201, body: { id: 987, scheduled: 2, uids: json(request).uids } };
    case "/publish_api/v1/instances/beams-instance/publishes/users":
      if (request.headers.authorization !== "Bearer beams-secret") return { status: 401, body: { error: "Unauthorized", description: "Incorrect API Key" } };
      return { status: 200, body: { publishId: "pubid-1" } };
    case "/hooks/push": {
      const expected = createHmac("sha256", WEBHOOK_SECRET).update(request.body, "utf8").digest("hex");
      if (request.headers["x-novu-signature"] !== expected) return { status: 401, body: { error: "bad signature" } };
      return { status: 200, body: { id: "webhook-1" } };
    }
    case "/busy":
    case "/busy/--/api/v2/push/send":
      return { status: 429, headers: { "retry-after": "11" }, body: { errors: [{ code: "TOO_MANY_REQUESTS" }] } };
    case "/down/notifications":
      return { status: 502, body: "bad gateway" };
    default:
      return { status: 400, body: { errors: [`unknown path ${request.url}`] } };
  }
}

const { receiver, http, providers } = await sendingFixture(vendor);

const last = () => receiver.received.at(-1)!;
const send = (provider: () => Provider, credentials: ProviderCredentials, tokens: string[], overrides: Record<string, unknown> = {}) =>
  (provider() as Provider<"push">).send(pushMessage(tokens, { overrides }), sendContext(http, credentials));
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail("the send succeeded"),
    (error: unknown) => error as ProviderError,
  );

describe("push providers over HTTP", () => {
  it("registers every push provider", () => {
    for (const id of ["fcm", "apns", "expo", "one-signal", "pushpad", "pusher-beams", "push-webhook"]) expect(providers.get("push", id)?.id).toBe(id);
  });

  it("expo: one message per token, the access token as bearer, DeviceNotRegistered reported", async () => {
    const credentials = { apiKey: "expo-access-token", baseUrl: receiver.url };
    const result = await send(expo, credentials, ["ExponentPushToken[a]", "ExponentPushToken[dead]"], { sound: "default", badge: 2, channelId: "orders" });
    expect(result).toEqual({ id: "ticket-ExponentPushToken[a]", invalidTokens: ["ExponentPushToken[dead]"] });
    const request = last();
    expect([request.method, request.url, request.headers["content-type"]]).toEqual(["POST", "/--/api/v2/push/send", "application/json"]);
    expect(JSON.parse(request.body)).toEqual([
      {
        to: "ExponentPushToken[a]",
        title: "Order shipped",
        body: "Your order 42 is on its way",
        data: { orderId: 42, carrier: "ups" },
        badge: 2,
        sound: "default",
        channelId: "orders",
      },
      {
        to: "ExponentPushToken[dead]",
        title: "Order shipped",
        body: "Your order 42 is on its way",
        data: { orderId: 42, carrier: "ups" },
        badge: 2,
        sound: "default",
        channelId: "orders",
      },
    ]);
    const dead = await failure(send(expo, credentials, ["ExponentPushToken[dead]"]));
    expect([dead.transient, dead.invalidTokens]).toEqual([false, ["ExponentPushToken[dead]"]]);
    expect(dead.message).toContain("DeviceNotRegistered");
    const limited = await failure(send(expo, credentials, ["ExponentPushToken[limited]"]));
    expect(limited.transient).toBe(true);
  });

  it("expo: sends in batches of 100, a failed batch failing only its own tokens", async () => {
    const credentials = { apiKey: "expo-access-token", baseUrl: receiver.url };
    const tokens = [...Array.from({ length: 100 }, (_, n) => `ExponentPushToken[${n}]`), "ExponentPushToken[crash]"];
    const before = receiver.received.length;
    const result = await send(expo, credentials, tokens);
    expect(result).toEqual({ id: "ticket-ExponentPushToken[0]" });
    expect(receiver.received.length - before).toBe(2);
    const crashed = await failure(send(expo, credentials, ["ExponentPushToken[crash]"]));
    expect([crashed.transient, crashed.status]).toEqual([true, 500]);
  });

  it("expo: sends without an access token when the project has none", async () => {
    const refused = await failure(send(expo, { baseUrl: receiver.url }, ["ExponentPushToken[a]"]));
    expect(last().headers.authorization).toBeUndefined();
    expect([refused.transient, refused.status]).toEqual([false, 401]);
  });

  it("one-signal: app id, player ids and a stable UUID idempotency key; invalid players reported", async () => {
    const provider = oneSignal() as Provider<"push">;
    expect(provider.idempotent).toBe(true);
    const credentials = { apiKey: "onesignal-rest-key", applicationId: "app-1", baseUrl: receiver.url };
    const result = await send(oneSignal, credentials, ["player-1", "player-dead"], { sound: "chime", icon: "ic_stat", subtitle: "Today" });
    expect(result).toEqual({ id: "onesignal-notification-1", invalidTokens: ["player-dead"] });
    const body = json(last());
    expect(last().url).toBe("/notifications");
    expect(body).toMatchObject({
      app_id: "app-1",
      include_player_ids: ["player-1", "player-dead"],
      headings: { en: "Order shipped" },
      contents: { en: "Your order 42 is on its way" },
      subtitle: { en: "Today" },
      data: { orderId: 42, carrier: "ups" },
      // OneSignal's names for the badge fields, as its API reference and Novu spell them.
      ios_badgeType: "Increase",
      ios_badgeCount: 1,
      ios_sound: "chime",
      android_sound: "chime",
      small_icon: "ic_stat",
    });
    expect(body.idempotency_key).toMatch(UUID);
    await send(oneSignal, credentials, ["player-1"]);
    expect(json(last()).idempotency_key).toBe(body.idempotency_key);

    // OneSignal's user model: the tokens are the users' external ids, none of them a device to forget.
    const byUser = await send(oneSignal, { ...credentials, apiVersion: "externalId" }, ["user-1", "user-dead"]);
    expect(byUser).toEqual({ id: "onesignal-notification-1" });
    expect(json(last())).toMatchObject({ include_aliases: { external_id: ["user-1", "user-dead"] }, target_channel: "push" });
    expect(json(last())).not.toHaveProperty("include_player_ids");

    const none = await failure(send(oneSignal, credentials, ["player-dead"]));
    expect(none.transient).toBe(false);
    expect(none.message).toContain("not subscribed");
    const os2 = await failure(send(oneSignal, { ...credentials, apiKey: "os_v2_app_secretvalue" }, ["player-1"]));
    expect(last().headers.authorization).toBe("Key os_v2_app_secretvalue");
    expect(none.message + os2.message).not.toContain("secretvalue");
    const down = await failure(send(oneSignal, { ...credentials, baseUrl: `${receiver.url}/down` }, ["player-1"]));
    expect([down.transient, down.status]).toEqual([true, 502]);
  });

  it("pushpad: the project's notifications with the tokens as uids", async () => {
    const result = await send(pushpad, { apiKey: "pushpad-token", applicationId: "4242", baseUrl: receiver.url }, ["user-1", "user-2"], {
      target_url: "https://example.com/orders/42",
    });
    expect(result).toEqual({ id: "987" });
    expect(json(last())).toEqual({
      title: "Order shipped",
      body: "Your order 42 is on its way",
      target_url: "https://example.com/orders/42",
      uids: ["user-1", "user-2"],
    });
    expect(last().headers.accept).toBe("application/json");
    await expect(send(pushpad, { apiKey: "pushpad-token", baseUrl: receiver.url }, ["user-1"])).rejects.toThrow(/applicationId/);
  });

  it("pusher-beams: publishes to users with the APNs, FCM and web parts", async () => {
    const result = await send(pusherBeams, { instanceId: "beams-instance", secretKey: "beams-secret", baseUrl: receiver.url }, ["user-1"], {
      sound: "ding",
      icon: "ic",
      ttl: 60,
    });
    expect(result).toEqual({ id: "pubid-1" });
    expect(json(last())).toEqual({
      users: ["user-1"],
      apns: { aps: { alert: { title: "Order shipped", body: "Your order 42 is on its way" }, sound: "ding" } },
      fcm: {
        notification: { title: "Order shipped", body: "Your order 42 is on its way", icon: "ic", sound: "ding" },
        data: { orderId: 42, carrier: "ups" },
        time_to_live: 60,
      },
      web: {
        notification: { title: "Order shipped", body: "Your order 42 is on its way", icon: "ic" },
        data: { orderId: 42, carrier: "ups" },
        time_to_live: 60,
      },
    });
    const refused = await failure(send(pusherBeams, { instanceId: "beams-instance", secretKey: "wrong-beams-secret", baseUrl: receiver.url }, ["user-1"]));
    expect([refused.transient, refused.status]).toEqual([false, 401]);
    expect(refused.message).toContain("Incorrect API Key");
    expect(refused.message).not.toContain("wrong-beams-secret");
    await expect(send(pusherBeams, { secretKey: "beams-secret" }, ["user-1"])).rejects.toThrow(/instanceId/);
  });

  it("push-webhook: Novu's body, signed with HMAC-SHA256 of the exact bytes", async () => {
    const result = await send(pushWebhook, { webhookUrl: `${receiver.url}/hooks/push`, secretKey: WEBHOOK_SECRET }, ["device-1"], { sound: "ding" });
    expect(result).toEqual({ id: "webhook-1" });
    const request = last();
    expect(request.headers["x-novu-signature"]).toBe(createHmac("sha256", WEBHOOK_SECRET).update(request.body, "utf8").digest("hex"));
    expect(JSON.parse(request.body)).toEqual({
      target: ["device-1"],
      title: "Order shipped",
      content: "Your order 42 is on its way",
      overrides: { sound: "ding" },
      payload: { orderId: 42, carrier: "ups", subscriber: { subscriberId: "subscriber-1", email: "ada@example.com" } },
    });
    // After a digest, the digest in the payload; the message's id beside it.
    const step = { digest: true, events: [{ orderId: 41 }, { orderId: 42 }], total_count: 2 };
    await (pushWebhook() as Provider<"push">).send(
      pushMessage(["device-1"], { step, messageId: "6a0000000000000000000042" }),
      sendContext(http, { webhookUrl: `${receiver.url}/hooks/push`, secretKey: WEBHOOK_SECRET }),
    );
    expect(JSON.parse(last().body)).toMatchObject({ messageId: "6a0000000000000000000042", payload: { orderId: 42, step } });
    const forged = await failure(send(pushWebhook, { webhookUrl: `${receiver.url}/hooks/push`, secretKey: "another-secret" }, ["device-1"]));
    expect([forged.transient, forged.status]).toEqual([false, 401]);
    expect(forged.message).not.toContain("another-secret");
    await expect(send(pushWebhook, { webhookUrl: `${receiver.url}/hooks/push` }, ["device-1"])).rejects.toThrow(/secretKey/);
    await expect(send(pushWebhook, { secretKey: WEBHOOK_SECRET }, ["device-1"])).rejects.toThrow(/webhookUrl/);
  });

  it("push-webhook: one signed request per device token; the trigger's provider overrides may name the URL and key", async () => {
    receiver.received.length = 0;
    const result = await send(pushWebhook, { webhookUrl: `${receiver.url}/hooks/push`, secretKey: WEBHOOK_SECRET }, ["device-1", "device-2"]);
    expect(result).toEqual({ id: "webhook-1" });
    expect(receiver.received.map((request) => JSON.parse(request.body).target).sort()).toEqual([["device-1"], ["device-2"]]);

    receiver.received.length = 0;
    const providerData = { webhookUrl: `${receiver.url}/hooks/push`, hmacSecretKey: WEBHOOK_SECRET, badge: 2 };
    await (pushWebhook() as Provider<"push">).send(pushMessage(["device-1"]), {
      ...sendContext(http, { webhookUrl: `${receiver.url}/hooks/elsewhere`, secretKey: "integration-secret" }),
      providerData,
    });
    const [request] = receiver.received;
    expect(request!.url).toBe("/hooks/push");
    const body = JSON.parse(request!.body);
    expect(body.badge).toBe(2);
    expect(body).not.toHaveProperty("webhookUrl");
    expect(body).not.toHaveProperty("hmacSecretKey");
  });

  it("maps 429 with Retry-After to a transient error and a 400 to a final one", async () => {
    const busy = await failure(send(pushWebhook, { webhookUrl: `${receiver.url}/busy`, secretKey: WEBHOOK_SECRET }, ["device-1"]));
    expect([busy.transient, busy.status, busy.retryAfterMs]).toEqual([true, 429, 11_000]);
    const expoBusy = await failure(send(expo, { baseUrl: `${receiver.url}/busy` }, ["ExponentPushToken[a]"]));
    expect([expoBusy.transient, expoBusy.retryAfterMs]).toEqual([true, 11_000]);
    const bad = await failure(send(pushWebhook, { webhookUrl: `${receiver.url}/unknown`, secretKey: WEBHOOK_SECRET }, ["device-1"]));
    expect([bad.transient, bad.status]).toEqual([false, 400]);
  });
});
