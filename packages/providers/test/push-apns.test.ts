import { execFileSync } from "node:child_process";
import { createSecureServer, createServer, type Http2Server, type IncomingHttpHeaders } from "node:http2";
import type { AddressInfo } from "node:net";
import { exportPKCS8, generateKeyPair, jwtVerify, type CryptoKey } from "jose";
import { selfSignedCertificate } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutboundHttp } from "../src/outbound.js";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, OutboundRefused } from "../src/outbound.js";
import { apns } from "../src/push/apns.js";
import { ProviderError, type Provider } from "../src/types.js";
import { sendContext, testOutbound } from "./helpers.js";
import { pushMessage } from "./push-helpers.js";

const TEAM_ID = "TEAM123456";
const KEY_ID = "KEY7654321";
const BUNDLE_ID = "com.example.app";

interface Received {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The bearer JWT's verification against the test's public key (rejects when it does not verify). */
  verified: Promise<{ payload: Record<string, unknown>; protectedHeader: Record<string, unknown> }>;
}

let server: Http2Server;
let base = "";
let publicKey: CryptoKey;
let secretKey = "";
let sessions = 0;
const received: Received[] = [];
/** The provider token the receiver calls expired (the first it sees for "stale-jwt"). */
const refusedTokens = new Set<string>();
let http: OutboundHttp;

/** APNs' answer for one device token, as Apple words it. */
function answerFor(token: string): { status: number; headers?: Record<string, string>; body?: unknown } {
  if (token.startsWith("good")) return { status: 200, headers: { "apns-id": `apns-${token}` } };
  if (token === "gone") return { status: 410, body: { reason: "Unregistered", timestamp: 1_700_000_000_000 } };
  if (token === "bad") return { status: 400, body: { reason: "BadDeviceToken" } };
  if (token === "busy") return { status: 429, headers: { "retry-after": "3" }, body: { reason: "TooManyRequests" } };
  if (token === "down") return { status: 503, body: { reason: "ServiceUnavailable" } };
  return { status: 400, body: { reason: "PayloadEmpty" } };
}

beforeAll(async () => {
  const pair = await generateKeyPair("ES256", { extractable: true });
  publicKey = pair.publicKey;
  secretKey = await exportPKCS8(pair.privateKey);
  // An h2c receiver standing in for api.push.apple.com.
  server = createServer();
  server.on("session", () => {
    sessions += 1;
  });
  server.on("stream", (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      const authorization = String(headers.authorization ?? "");
      const verified = jwtVerify(authorization.replace(/^bearer /, ""), publicKey, { issuer: TEAM_ID, algorithms: ["ES256"] });
      verified.catch(() => undefined);
      received.push({ headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>, verified });
      const token = String(headers[":path"]).replace("/3/device/", "");
      if (token === "silent") return;
      if (token === "stale-jwt" && (refusedTokens.size === 0 || refusedTokens.has(authorization))) {
        refusedTokens.add(authorization);
        stream.respond({ ":status": 403 });
        stream.end(JSON.stringify({ reason: "ExpiredProviderToken" }));
        return;
      }
      const { status, headers: extra = {}, body } = answerFor(token);
      stream.respond({ ":status": status, ...extra });
      stream.end(body === undefined ? undefined : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  http = testOutbound();
});
afterAll(async () => {
  await http.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const credentials = () => ({ secretKey, apiKey: KEY_ID, projectName: TEAM_ID, applicationId: BUNDLE_ID, baseUrl: base });

describe("apns", () => {
  it("posts each token over one reused HTTP/2 session with the topic, push type and an ES256 provider token", async () => {
    const provider = apns() as Provider<"push">;
    try {
      received.length = 0;
      const before = sessions;
      const result = await provider.send(
        pushMessage(["good-1", "gone", "good-2"], { overrides: { badge: 3, sound: "ping.aiff", threadId: "orders" } }),
        sendContext(http, credentials()),
      );
      expect(result.id).toBe("apns-good-1");
      expect(result.invalidTokens).toEqual(["gone"]);
      expect(received.map((request) => request.headers[":path"]).sort()).toEqual(["/3/device/gone", "/3/device/good-1", "/3/device/good-2"]);
      const first = received[0]!;
      expect(first.headers[":method"]).toBe("POST");
      expect(first.headers["apns-topic"]).toBe(BUNDLE_ID);
      expect(first.headers["apns-push-type"]).toBe("alert");
      const { protectedHeader, payload } = await first.verified;
      expect(protectedHeader).toMatchObject({ alg: "ES256", kid: KEY_ID });
      expect(typeof payload.iat).toBe("number");
      expect(first.body).toEqual({
        orderId: 42,
        carrier: "ups",
        aps: { alert: { title: "Order shipped", body: "Your order 42 is on its way" }, badge: 3, sound: "ping.aiff", "thread-id": "orders" },
      });

      await provider.send(pushMessage(["good-3"]), sendContext(http, credentials()));
      expect(sessions - before).toBe(1);
      // The provider token is kept, not minted per request.
      expect(new Set(received.map((request) => request.headers.authorization)).size).toBe(1);
    } finally {
      await provider.close?.();
    }
  });

  it("takes the trigger's provider overrides as node-apn's fields, and their _passthrough into the payload and headers", async () => {
    const provider = apns() as Provider<"push">;
    try {
      received.length = 0;
      const providerData = {
        badge: 7,
        // Merged into the trigger's payload, not in its place, as Novu merges it.
        payload: { channel: "mobile" },
        _passthrough: { body: { aps: { "interruption-level": "critical" }, campaign: "spring" }, headers: { "apns-expiration": "0" } },
      };
      await provider.send(pushMessage(["good-1"], { overrides: { sound: "ping.aiff" }, payload: { orderId: 42 } }), {
        ...sendContext(http, credentials()),
        providerData,
      });
      const [request] = received;
      expect(request!.headers["apns-expiration"]).toBe("0");
      expect(request!.body).toMatchObject({
        orderId: 42,
        channel: "mobile",
        campaign: "spring",
        aps: { badge: 7, sound: "ping.aiff", "interruption-level": "critical" },
      });
    } finally {
      await provider.close?.();
    }
  });

  it("takes node-apn's override names: headers, aps flags and a topic of its own", async () => {
    const provider = apns() as Provider<"push">;
    try {
      received.length = 0;
      const overrides = {
        topic: "com.example.other",
        pushType: "background",
        priority: "normal",
        collapseId: "order-42",
        expiry: 1_900_000_000,
        contentAvailable: true,
        mutableContent: 1,
        category: "SHIPPING",
        payload: { deepLink: "/orders/42" },
      };
      await provider.send(pushMessage(["good-1"], { overrides }), sendContext(http, credentials()));
      const { headers, body } = received[0]!;
      expect([headers["apns-topic"], headers["apns-push-type"], headers["apns-priority"], headers["apns-collapse-id"], headers["apns-expiration"]]).toEqual([
        "com.example.other",
        "background",
        "5",
        "order-42",
        "1900000000",
      ]);
      expect(body).toEqual({
        deepLink: "/orders/42",
        aps: { alert: { title: "Order shipped", body: "Your order 42 is on its way" }, category: "SHIPPING", "content-available": 1, "mutable-content": 1 },
      });
    } finally {
      await provider.close?.();
    }
  });

  it("takes node-apn's alert (a string, or an object of alert fields) and sends a rawPayload as it is", async () => {
    const provider = apns() as Provider<"push">;
    try {
      received.length = 0;
      await provider.send(pushMessage(["good-1"], { overrides: { alert: "Plain words" } }), sendContext(http, credentials()));
      await provider.send(
        pushMessage(["good-1"], { overrides: { alert: { body: "Other words", "launch-image": "a.png" }, subtitleLocKey: "SUB", subtitleLocArgs: ["x"] } }),
        sendContext(http, credentials()),
      );
      const raw = { aps: { alert: "Raw", badge: 9 }, custom: true };
      await provider.send(pushMessage(["good-1"], { overrides: { rawPayload: raw, badge: 1 } }), sendContext(http, credentials()));
      expect(received.map(({ body }) => body.aps)).toEqual([
        { alert: "Plain words" },
        { alert: { title: "Order shipped", body: "Other words", "subtitle-loc-key": "SUB", "subtitle-loc-args": ["x"], "launch-image": "a.png" } },
        raw.aps,
      ]);
      expect(received[2]!.body).toEqual(raw);
    } finally {
      await provider.close?.();
    }
  });

  it("reports a 410 token as invalid, never a BadDeviceToken one (a wrong environment answers it for all), and fails only when no token was accepted", async () => {
    const provider = apns() as Provider<"push">;
    try {
      const error = (await provider.send(pushMessage(["bad", "gone"]), sendContext(http, credentials())).catch((caught: unknown) => caught)) as ProviderError;
      expect(error).toBeInstanceOf(ProviderError);
      expect(error.transient).toBe(false);
      expect(error.invalidTokens).toEqual(["gone"]);
      expect(error.message).toContain("BadDeviceToken");
    } finally {
      await provider.close?.();
    }
  });

  it("maps 429 and 5xx to transient (with Retry-After) and other 4xx to final", async () => {
    const provider = apns() as Provider<"push">;
    try {
      const busy = (await provider.send(pushMessage(["busy"]), sendContext(http, credentials())).catch((caught: unknown) => caught)) as ProviderError;
      expect([busy.transient, busy.status, busy.retryAfterMs]).toEqual([true, 429, 3000]);
      const down = (await provider.send(pushMessage(["down"]), sendContext(http, credentials())).catch((caught: unknown) => caught)) as ProviderError;
      expect([down.transient, down.status]).toEqual([true, 503]);
      const empty = (await provider.send(pushMessage(["other"]), sendContext(http, credentials())).catch((caught: unknown) => caught)) as ProviderError;
      expect([empty.transient, empty.status]).toEqual([false, 400]);
      expect(empty.message).toContain("PayloadEmpty");
      expect(empty.message).not.toContain(secretKey.slice(30, 60));
    } finally {
      await provider.close?.();
    }
  });

  it("gives up on a request that is never answered, as a transient failure", async () => {
    const provider = apns() as Provider<"push">;
    const impatient = createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"], timeoutMs: 300 });
    try {
      const silent = (await provider.send(pushMessage(["silent"]), sendContext(impatient, credentials())).catch((caught: unknown) => caught)) as ProviderError;
      expect(silent).toBeInstanceOf(ProviderError);
      expect(silent.transient).toBe(true);
      expect(silent.message).toMatch(/no answer/);
    } finally {
      await provider.close?.();
      await impatient.close();
    }
  });

  it("mints a new provider token after APNs calls the kept one expired", async () => {
    const provider = apns() as Provider<"push">;
    try {
      const expired = (await provider.send(pushMessage(["stale-jwt"]), sendContext(http, credentials())).catch((caught: unknown) => caught)) as ProviderError;
      expect([expired.transient, expired.status]).toEqual([true, 403]);
      // JWTs are stamped in whole seconds: wait for the next one so the new token differs.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      received.length = 0;
      await expect(provider.send(pushMessage(["stale-jwt"]), sendContext(http, credentials()))).rejects.toThrow(/PayloadEmpty/);
      expect(refusedTokens.has(String(received[0]!.headers.authorization))).toBe(false);
    } finally {
      await provider.close?.();
    }
  });

  it("closes its sessions on close() and opens a new one afterwards", async () => {
    const provider = apns() as Provider<"push">;
    const before = sessions;
    await provider.send(pushMessage(["good-1"]), sendContext(http, credentials()));
    await provider.close?.();
    await provider.send(pushMessage(["good-1"]), sendContext(http, credentials()));
    await provider.close?.();
    expect(sessions - before).toBe(2);
  });

  it("refuses missing settings by name and never quotes the key", async () => {
    const provider = apns() as Provider<"push">;
    const { applicationId: _bundle, ...withoutBundle } = credentials();
    await expect(provider.send(pushMessage(["good-1"]), sendContext(http, withoutBundle))).rejects.toThrow(/applicationId/);
    const { projectName: _team, ...withoutTeam } = credentials();
    await expect(provider.send(pushMessage(["good-1"]), sendContext(http, withoutTeam))).rejects.toThrow(/projectName/);
    const garbled = (await provider
      .send(
        pushMessage(["good-1"]),
        sendContext(http, { ...credentials(), secretKey: "-----BEGIN PRIVATE KEY-----\nsecret-material\n-----END PRIVATE KEY-----" }, "integration-bad-key"),
      )
      .catch((caught: unknown) => caught)) as ProviderError;
    expect(garbled.transient).toBe(false);
    expect(garbled.message).not.toContain("secret-material");
  });

  it("connects only where the outbound guard allows", async () => {
    const provider = apns() as Provider<"push">;
    const strict = createOutbound(DEFAULT_OUTBOUND_POLICY);
    const before = sessions;
    try {
      await expect(provider.send(pushMessage(["good-1"]), sendContext(strict, credentials()))).rejects.toBeInstanceOf(OutboundRefused);
      await expect(
        provider.send(pushMessage(["good-1"]), sendContext(strict, { ...credentials(), baseUrl: base.replace("127.0.0.1", "localhost") })),
      ).rejects.toBeInstanceOf(OutboundRefused);
      expect(sessions).toBe(before);
    } finally {
      await strict.close();
      await provider.close?.();
    }
  });

  it.skipIf(!hasOpenssl())("speaks TLS to the vetted address with the base's host name as SNI, and checks the certificate", async () => {
    const { certificate, key } = selfSignedCertificate("localhost", "ec", ["-pkeyopt", "ec_paramgen_curve:P-256"]);
    const names: string[] = [];
    const secure = createSecureServer({
      key,
      cert: certificate,
      SNICallback: (name, callback) => {
        names.push(name);
        callback(null);
      },
    });
    await new Promise<void>((resolve) => secure.listen(0, "127.0.0.1", resolve));
    const provider = apns() as Provider<"push">;
    try {
      const port = (secure.address() as AddressInfo).port;
      const refused = (await provider
        .send(pushMessage(["good-1"]), sendContext(http, { ...credentials(), baseUrl: `https://localhost:${port}` }))
        .catch((caught: unknown) => caught)) as ProviderError;
      // A self-signed certificate is not trusted: the connection is refused, never used unverified.
      expect(refused).toBeInstanceOf(ProviderError);
      expect(refused.message).toMatch(/cannot connect to localhost:\d+: .*certificate/);
      expect(names).toEqual(["localhost"]);
    } finally {
      await provider.close?.();
      await new Promise<void>((resolve) => secure.close(() => resolve()));
    }
  });
});

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
