import { exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutboundHttp } from "../src/outbound.js";
import { fcm } from "../src/push/fcm.js";
import { ProviderError, type Provider } from "../src/types.js";
import { startReceiver, type Answer, type Received, type Receiver } from "@notify/testing";
import { sendContext, testOutbound } from "./helpers.js";
import { json, pushMessage } from "./push-helpers.js";

const CLIENT_EMAIL = "notify@project-1.iam.gserviceaccount.com";
let receiver: Receiver;
let http: OutboundHttp;
let serviceAccount: string;
let privateKey: string;
let tokenCalls = 0;
let accessToken = "access-1";
let lifetimeSeconds = 3599;

/** FCM's answer for one token, as FCM words it. */
function fcmAnswer(token: string): Answer {
  if (token.startsWith("good")) return { status: 200, body: { name: `projects/project-1/messages/${token}-id` } };
  if (token === "dead") {
    return {
      status: 404,
      body: {
        error: {
          code: 404,
          message: "Requested entity was not found.",
          status: "NOT_FOUND",
          details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "UNREGISTERED" }],
        },
      },
    };
  }
  if (token === "garbled") {
    return {
      status: 400,
      body: {
        error: {
          code: 400,
          message: "The registration token is not a valid FCM registration token",
          status: "INVALID_ARGUMENT",
          details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "INVALID_ARGUMENT" }],
        },
      },
    };
  }
  if (token === "busy") return { status: 503, headers: { "retry-after": "7" }, body: { error: { code: 503, status: "UNAVAILABLE" } } };
  return { status: 400, body: { error: { code: 400, message: "Invalid JSON payload received.", status: "INVALID_ARGUMENT" } } };
}

beforeAll(async () => {
  const { publicKey, privateKey: key } = await generateKeyPair("RS256", { extractable: true });
  privateKey = await exportPKCS8(key);
  receiver = await startReceiver((request: Received): Answer => {
    if (request.url === "/token") {
      tokenCalls += 1;
      const form = new URLSearchParams(request.body);
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") return { status: 400, body: { error: "unsupported_grant_type" } };
      return { status: 200, body: { access_token: accessToken, expires_in: lifetimeSeconds, token_type: "Bearer" } };
    }
    if (request.url !== "/v1/projects/project-1/messages:send") return { status: 404, body: { error: { code: 404 } } };
    if (request.headers.authorization !== `Bearer ${accessToken}`) return { status: 401, body: { error: { code: 401, status: "UNAUTHENTICATED" } } };
    const message = json(request).message as { token?: string; topic?: string };
    if (message.topic !== undefined) return { status: 200, body: { name: `projects/project-1/messages/topic-${message.topic}` } };
    return fcmAnswer(message.token ?? "");
  });
  http = testOutbound();
  serviceAccount = JSON.stringify({
    type: "service_account",
    project_id: "project-1",
    client_email: CLIENT_EMAIL,
    private_key: privateKey,
    token_uri: `${receiver.url}/token`,
  });
  // The assertion is checked where it arrives, like Google's endpoint does.
  const answer = receiver.respond;
  receiver.respond = (request) => {
    if (request.url === "/token")
      verified.push(
        jwtVerify(new URLSearchParams(request.body).get("assertion") ?? "", publicKey, { issuer: CLIENT_EMAIL, audience: `${receiver.url}/token` }),
      );
    return answer(request);
  };
});
afterAll(async () => {
  await http.close();
  await receiver.close();
});

const verified: Promise<{ payload: Record<string, unknown>; protectedHeader: Record<string, unknown> }>[] = [];
const requestsTo = (path: string) => receiver.received.filter((request) => request.url === path);

describe("fcm", () => {
  it("signs an RS256 assertion, exchanges it at the service account's token_uri and sends one v1 request per token", async () => {
    const provider = fcm() as Provider<"push">;
    const context = sendContext(http, { serviceAccount, baseUrl: receiver.url });
    const result = await provider.send(pushMessage(["good-1", "dead", "good-2"], { overrides: { data: { deepLink: "/orders/42" } } }), context);
    expect(result.id).toBe("projects/project-1/messages/good-1-id");
    expect(result.invalidTokens).toEqual(["dead"]);
    expect(tokenCalls).toBe(1);
    const { payload, protectedHeader } = await verified[0]!;
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload.scope).toBe("https://www.googleapis.com/auth/firebase.messaging");
    const sends = requestsTo("/v1/projects/project-1/messages:send").map((request) => json(request).message as Record<string, unknown>);
    expect(sends.map((message) => message.token).sort()).toEqual(["dead", "good-1", "good-2"]);
    expect(sends[0]).toMatchObject({ notification: { title: "Order shipped", body: "Your order 42 is on its way" }, data: { deepLink: "/orders/42" } });

    // The access token is kept: a second send does not go back to the token endpoint.
    await provider.send(pushMessage(["good-3"]), context);
    expect(tokenCalls).toBe(1);
  });

  it("merges the trigger's provider overrides into each token's message, not into the token exchange", async () => {
    const provider = fcm() as Provider<"push">;
    receiver.received.length = 0;
    const providerData = {
      android: { collapseKey: "orders", ttl: 3_600_000, notification: { priority: "high" } },
      _passthrough: { body: { fcmOptions: { analyticsLabel: "spring" } }, headers: { "x-goog-trace": "t" } },
    };
    await provider.send(pushMessage(["good-1", "good-2"]), {
      ...sendContext(http, { serviceAccount, baseUrl: receiver.url }, "fcm-provider-data"),
      providerData,
    });
    const sends = requestsTo("/v1/projects/project-1/messages:send");
    expect(sends).toHaveLength(2);
    for (const request of sends) {
      // Known fields in the spelling Novu's FCM provider gives them; _passthrough's as written.
      // firebase-admin's forms in the v1 API's, as it converts what Novu merges in: a TTL in milliseconds, a priority's name.
      expect(json(request).message).toMatchObject({
        android: { collapse_key: "orders", ttl: "3600s", notification: { notification_priority: "PRIORITY_HIGH" } },
        fcmOptions: { analyticsLabel: "spring" },
      });
      expect(request.headers["x-goog-trace"]).toBe("t");
    }
    for (const request of requestsTo("/token")) expect(request.headers["x-goog-trace"]).toBeUndefined();
  });

  it("sends once to a topic the provider overrides name, and never drops a device for a token the overrides put in its place", async () => {
    const provider = fcm() as Provider<"push">;
    const context = sendContext(http, { serviceAccount, baseUrl: receiver.url }, "fcm-topic");
    receiver.received.length = 0;
    const toTopic = await provider.send(pushMessage(["good-1", "good-2"]), { ...context, providerData: { topic: "news" } });
    expect(toTopic.id).toBe("projects/project-1/messages/topic-news");
    const sends = requestsTo("/v1/projects/project-1/messages:send").map((request) => json(request).message as Record<string, unknown>);
    expect(sends).toEqual([expect.objectContaining({ topic: "news", notification: expect.any(Object) })]);
    expect(sends[0]).not.toHaveProperty("token");

    // A topic needs no device of the subscriber's.
    receiver.received.length = 0;
    expect((await provider.send(pushMessage([]), { ...context, providerData: { topic: "news" } })).id).toBe("projects/project-1/messages/topic-news");
    // Devices the overrides name are the tokens sent to, not a field of the message.
    receiver.received.length = 0;
    await provider.send(pushMessage(["good-7"]), { ...context, providerData: { tokens: ["good-7"] } });
    expect(requestsTo("/v1/projects/project-1/messages:send").map((request) => json(request).message)).toEqual([
      expect.not.objectContaining({ tokens: expect.anything() }),
    ]);

    const elsewhere = await provider.send(pushMessage(["good-1"]), { ...context, providerData: { _passthrough: { body: { token: "dead" } } } }).then(
      () => expect.fail("the send succeeded"),
      (error: unknown) => error as ProviderError,
    );
    expect(elsewhere.invalidTokens ?? []).toEqual([]);
  });

  it("sends a data message with the payload as strings when overrides say type data", async () => {
    const provider = fcm() as Provider<"push">;
    receiver.received.length = 0;
    await provider.send(
      pushMessage(["good-1"], { overrides: { type: "data", android: { priority: "high" } } }),
      sendContext(http, { serviceAccount, baseUrl: receiver.url }),
    );
    const message = json(requestsTo("/v1/projects/project-1/messages:send")[0]!).message;
    expect(message).toEqual({
      token: "good-1",
      data: { orderId: "42", carrier: "ups", title: "Order shipped", body: "Your order 42 is on its way", message: "Your order 42 is on its way" },
      android: { priority: "high" },
    });
  });

  it("converts firebase-admin's forms in android and apns overrides to the v1 API's", async () => {
    const provider = fcm() as Provider<"push">;
    receiver.received.length = 0;
    const overrides = {
      android: {
        ttl: 3_600_000,
        priority: "high",
        notification: {
          imageUrl: "https://example.com/a.png",
          clickAction: "OPEN",
          priority: "high",
          visibility: "public",
          proxy: "deny",
          eventTimestamp: "2026-11-28T10:00:00.000Z",
          vibrateTimingsMillis: [200, 1_500],
          lightSettings: { color: "#FF000080", lightOnDurationMillis: 100, lightOffDurationMillis: 2_000 },
        },
      },
      apns: {
        headers: { "apns-priority": "10" },
        payload: {
          aps: { contentAvailable: true, mutableContent: 0, threadId: "orders", alert: { locKey: "SHIPPED" }, sound: { name: "alarm", critical: true } },
          orderId: "42",
        },
        fcmOptions: { imageUrl: "https://example.com/b.png" },
      },
      webPush: { headers: { Urgency: "high" } },
      fcmOptions: { analyticsLabel: "shipping" },
    };
    await provider.send(pushMessage(["good-1"], { overrides }), sendContext(http, { serviceAccount, baseUrl: receiver.url }));
    expect(json(requestsTo("/v1/projects/project-1/messages:send")[0]!).message).toEqual({
      token: "good-1",
      notification: { title: "Order shipped", body: "Your order 42 is on its way" },
      android: {
        ttl: "3600s",
        priority: "high",
        notification: {
          image: "https://example.com/a.png",
          clickAction: "OPEN",
          notification_priority: "PRIORITY_HIGH",
          visibility: "PUBLIC",
          proxy: "DENY",
          event_time: "2026-11-28T10:00:00.000Z",
          vibrate_timings: ["0.2s", "1.5s"],
          light_settings: { color: { red: 1, green: 0, blue: 0, alpha: 128 / 255 }, light_on_duration: "0.1s", light_off_duration: "2s" },
        },
      },
      apns: {
        headers: { "apns-priority": "10" },
        payload: {
          aps: { "content-available": 1, "thread-id": "orders", alert: { "loc-key": "SHIPPED" }, sound: { name: "alarm", critical: 1 } },
          orderId: "42",
        },
        fcm_options: { image: "https://example.com/b.png" },
      },
      webpush: { headers: { Urgency: "high" } },
      fcm_options: { analyticsLabel: "shipping" },
    });
  });

  it("fails as a whole only when no token was accepted, still reporting the invalid ones", async () => {
    const provider = fcm() as Provider<"push">;
    const context = sendContext(http, { serviceAccount, baseUrl: receiver.url });
    const dead = await provider.send(pushMessage(["dead", "garbled"]), context).catch((error: unknown) => error);
    expect(dead).toBeInstanceOf(ProviderError);
    expect((dead as ProviderError).transient).toBe(false);
    expect((dead as ProviderError).invalidTokens).toEqual(["dead", "garbled"]);

    const mixed = (await provider.send(pushMessage(["dead", "busy"]), context).catch((error: unknown) => error)) as ProviderError;
    expect(mixed.transient).toBe(true);
    expect(mixed.retryAfterMs).toBe(7000);
    expect(mixed.invalidTokens).toEqual(["dead"]);
  });

  it("maps 5xx with Retry-After to transient and a 400 about the message to final", async () => {
    const provider = fcm() as Provider<"push">;
    const context = sendContext(http, { serviceAccount, baseUrl: receiver.url });
    const busy = (await provider.send(pushMessage(["busy"]), context).catch((error: unknown) => error)) as ProviderError;
    expect(busy).toBeInstanceOf(ProviderError);
    expect([busy.transient, busy.retryAfterMs, busy.status]).toEqual([true, 7000, 503]);
    const invalid = (await provider.send(pushMessage(["other"]), context).catch((error: unknown) => error)) as ProviderError;
    expect([invalid.transient, invalid.status, invalid.invalidTokens]).toEqual([false, 400, undefined]);
    expect(invalid.message).toContain("Invalid JSON payload");
  });

  it("fetches a new access token after FCM refuses the kept one", async () => {
    const provider = fcm() as Provider<"push">;
    const context = sendContext(http, { serviceAccount, baseUrl: receiver.url }, "integration-401");
    await provider.send(pushMessage(["good-1"]), context);
    const before = tokenCalls;
    accessToken = "access-2";
    const refused = (await provider.send(pushMessage(["good-1"]), context).catch((error: unknown) => error)) as ProviderError;
    expect([refused.transient, refused.status]).toEqual([true, 401]);
    expect((await provider.send(pushMessage(["good-1"]), context)).id).toBe("projects/project-1/messages/good-1-id");
    expect(tokenCalls).toBe(before + 1);
  });

  it("mints one access token for concurrent sends of one integration", async () => {
    const provider = fcm() as Provider<"push">;
    const context = sendContext(http, { serviceAccount, baseUrl: receiver.url }, "integration-concurrent");
    const before = tokenCalls;
    await Promise.all([1, 2, 3].map((n) => provider.send(pushMessage([`good-${n}`]), context)));
    expect(tokenCalls).toBe(before + 1);
  });

  it("renews the access token shortly before it expires", async () => {
    const provider = fcm() as Provider<"push">;
    const context = sendContext(http, { serviceAccount, baseUrl: receiver.url }, "integration-short-lived");
    lifetimeSeconds = 1;
    try {
      const before = tokenCalls;
      await provider.send(pushMessage(["good-1"]), context);
      await provider.send(pushMessage(["good-1"]), context);
      expect(tokenCalls).toBe(before + 1);
      await new Promise((resolve) => setTimeout(resolve, 600));
      await provider.send(pushMessage(["good-1"]), context);
      expect(tokenCalls).toBe(before + 2);
    } finally {
      lifetimeSeconds = 3599;
    }
  });

  it("refuses missing or unreadable settings without quoting them", async () => {
    const provider = fcm() as Provider<"push">;
    await expect(provider.send(pushMessage(["good-1"]), sendContext(http, {}))).rejects.toThrow(/serviceAccount/);
    const unreadable = (await provider
      .send(pushMessage(["good-1"]), sendContext(http, { serviceAccount: `{"private_key": "${privateKey.slice(40, 80)}` }))
      .catch((error: unknown) => error)) as ProviderError;
    expect(unreadable.transient).toBe(false);
    expect(unreadable.message).not.toContain(privateKey.slice(40, 80));
    const noEmail = JSON.stringify({ project_id: "p", private_key: privateKey });
    await expect(provider.send(pushMessage(["good-1"]), sendContext(http, { serviceAccount: noEmail }))).rejects.toThrow(/client_email/);
    const badKey = JSON.stringify({
      project_id: "p",
      client_email: CLIENT_EMAIL,
      private_key: "-----BEGIN PRIVATE KEY-----\nsecret-material\n-----END PRIVATE KEY-----",
      token_uri: `${receiver.url}/token`,
    });
    const refused = (await provider
      .send(pushMessage(["good-1"]), sendContext(http, { serviceAccount: badKey }, "integration-bad-key"))
      .catch((error: unknown) => error)) as ProviderError;
    expect(refused.transient).toBe(false);
    expect(refused.message).not.toContain("secret-material");
  });

  it("reports the token endpoint's refusal as final, without the assertion", async () => {
    const provider = fcm() as Provider<"push">;
    const answer = receiver.respond;
    receiver.respond = (request) =>
      request.url === "/token" ? { status: 400, body: { error: "invalid_grant", error_description: "Invalid JWT Signature." } } : answer(request);
    try {
      const refused = (await provider
        .send(pushMessage(["good-1"]), sendContext(http, { serviceAccount, baseUrl: receiver.url }, "integration-grant"))
        .catch((error: unknown) => error)) as ProviderError;
      expect([refused.transient, refused.status]).toEqual([false, 400]);
      expect(refused.message).toContain("invalid_grant");
      const assertion = new URLSearchParams(receiver.received.at(-1)!.body).get("assertion")!;
      expect(refused.message).not.toContain(assertion);
    } finally {
      receiver.respond = answer;
    }
  });
});
