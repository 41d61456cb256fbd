import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { Novu as NovuApi } from "novu-api-v1";
import { Novu } from "@novu/js";
import { connectRedis, createLogger, createPool, type Pool, type Redis } from "@notify/runtime";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/app.js";
import { connectClients } from "../src/clients.js";
import { forgetKeys } from "../src/auth.js";
import { readConfig } from "../src/config.js";
import { createEnvironments, type Accounts } from "../src/environments.js";
import { createOrganizations } from "../src/organizations.js";
import { route } from "../src/route.js";
import { encryptionKeyOf, sealerOf } from "../src/config.js";
import { createSessionTokens, SESSION_AUDIENCE, SESSION_ISSUER } from "../src/sessions.js";
import * as store from "../src/store.js";
import { environmentIdentifier, openInbox, openSession, requireHmac, subscriberHash, type InboxSession } from "./inbox-helpers.js";
import { GATEWAY_ENCRYPTION_KEY, startStack, type Data, type Json, type Stack } from "./stack.js";

const OBJECT_ID = /^[0-9a-f]{24}$/;
const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;
const ORIGIN = "https://app.example.com";

let stack: Stack;
let pool: Pool;
let redis: Redis;
let accounts: Accounts;
/** A gateway of the stack's database with probe routes of each audience. */
let probe: { server: Server; url: string };
let stopClients: () => void;

/** What the probe routes answer: what their input carried. */
const probeRoutes = [
  route({ audience: "inbox", method: "GET", path: "/v1/inbox/probe", handle: async ({ session, scope }) => ({ session, scope }) }),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/inbox/probe/:id/read",
    params: z.object({ id: z.string() }),
    body: z.undefined(),
    handle: async ({ params, session }) => ({ id: params.id, subscriberId: session.subscriberId }),
  }),
  route({ audience: "inbox", method: "DELETE", path: "/v1/inbox/probe/:id", status: 204, body: z.undefined(), handle: async () => undefined }),
  route({ method: "GET", path: "/v1/probe", handle: async ({ scope }) => ({ scope }) }),
];

beforeAll(async () => {
  stack = await startStack({ worker: false });
  pool = createPool(stack.database.url, 2);
  redis = await connectRedis("redis://127.0.0.1:6379");
  const config = readConfig({ GATEWAY_ENCRYPTION_KEY, LOG_LEVEL: "silent" });
  const log = createLogger("probe", "silent");
  const environments = createEnvironments({
    pool,
    sealer: sealerOf(config),
    encryptionKey: encryptionKeyOf(config),
    forgetKeys: (keyHashes) => forgetKeys(redis, keyHashes),
    log,
  });
  accounts = {
    environments,
    organizations: createOrganizations(pool, log),
    sessions: createSessionTokens({ environments, ttlSeconds: 60 }),
    inbox: { maxSnoozeDurationHours: 1 },
  };
  // Nothing downstream is called by the probe routes.
  const unreachable = "http://127.0.0.1:9";
  const downstream = connectClients({
    SUBSCRIBERS_URL: unreachable,
    MESSAGES_URL: unreachable,
    TRIGGERS_URL: unreachable,
    INTEGRATIONS_URL: unreachable,
    TOPICS_URL: unreachable,
    RPC_TIMEOUT_MS: 1000,
    SNS_REQUESTS_SUBJECT: "unused",
    WEBHOOK_SETUP_SUBJECT: "unused",
  });
  stopClients = downstream.close;
  const app = createApp({
    log,
    clients: downstream.clients,
    routes: probeRoutes,
    auth: { pool, redis, cacheSeconds: 0 },
    accounts,
    idempotency: { redis, ttlSeconds: 60, log },
    outbound: { allowedCidrs: [] },
    readiness: { accepting: () => true, dependencies: { pool, redis, nats: () => undefined, services: downstream.health, timeoutMs: 100 } },
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  probe = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});

afterAll(async () => {
  await new Promise((resolve) => probe?.server.close(resolve));
  stopClients?.();
  await redis?.quit();
  await pool?.end();
  await stack?.stop();
});

const jwtPayloadOf = (token: string) => {
  try {
    return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
  } catch {
    return token;
  }
};

/** A request to the probe gateway. */
async function probeRequest(method: string, path: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(`${probe.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as Json };
}

const startSession = (body: unknown, headers: Record<string, string> = {}) =>
  stack.request<Data<InboxSession> & Json>("POST", "/v1/inbox/session", body, { authorization: "", ...headers });

describe("environments", () => {
  it("answers the caller's environment and the organization's, with identifiers and without keys", async () => {
    const productionKey = await stack.createKey("Production");
    const me = await stack.request("GET", "/v1/environments/me");
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual({
      _id: expect.stringMatching(OBJECT_ID),
      name: "Development",
      _organizationId: expect.stringMatching(OBJECT_ID),
      identifier: expect.any(String),
      type: "dev",
    });
    const production = await stack.request("GET", "/v1/environments/me", undefined, { authorization: `ApiKey ${productionKey}` });
    expect(production.body.data).toMatchObject({
      name: "Production",
      type: "prod",
      _parentId: me.body.data._id,
      _organizationId: me.body.data._organizationId,
    });
    expect(production.body.data.identifier).not.toBe(me.body.data.identifier);
    expect(JSON.stringify(production.body)).not.toContain(productionKey);

    const listed = await stack.request("GET", "/v1/environments");
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([me.body.data, production.body.data]);
    expect(JSON.stringify(listed.body)).not.toContain(stack.key);

    // As @novu/api reads them.
    const sdk = new NovuApi({ secretKey: stack.key, serverURL: stack.url });
    const environments = await sdk.environments.list();
    expect(environments.result.map((environment) => [environment.name, environment.identifier])).toEqual([
      ["Development", me.body.data.identifier],
      ["Production", production.body.data.identifier],
    ]);
  });

  it("are not answered to a session token or without a key", async () => {
    const { token } = await openSession(stack, "env-reader");
    expect((await stack.request("GET", "/v1/environments/me", undefined, { authorization: `Bearer ${token}` })).status).toBe(401);
    expect((await stack.request("GET", "/v1/environments", undefined, { authorization: "" })).status).toBe(401);
  });
});

describe("POST /v1/inbox/session", () => {
  it("creates the subscriber and answers a token and the unread counts", async () => {
    const applicationIdentifier = await environmentIdentifier(stack);
    const reply = await startSession({ applicationIdentifier, subscriber: { subscriberId: "sub-1", firstName: "Ada" } });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toEqual({
      token: expect.stringMatching(JWT),
      totalUnreadCount: 0,
      unreadCount: { total: 0, severity: { high: 0, medium: 0, low: 0, none: 0 } },
      removeNovuBranding: false,
      isDevelopmentMode: true,
      maxSnoozeDurationHours: 30 * 24,
      applicationIdentifier,
      contextKeys: [],
    });
    const subscriber = await stack.request("GET", "/v2/subscribers/sub-1");
    expect(subscriber.body.data).toMatchObject({ subscriberId: "sub-1", firstName: "Ada" });
    const claims = JSON.parse(Buffer.from(reply.body.data.token.split(".")[1]!, "base64url").toString());
    expect(claims).toMatchObject({ _id: subscriber.body.data._id, subscriberId: "sub-1", contextKeys: [], aud: SESSION_AUDIENCE, iss: SESSION_ISSUER });
    expect(claims.exp - claims.iat).toBe(15 * 86_400);
  });

  it("accepts the subscriber as a string and the legacy top-level subscriberId", async () => {
    const applicationIdentifier = await environmentIdentifier(stack);
    expect((await startSession({ applicationIdentifier, subscriber: "sub-string" })).status).toBe(201);
    expect((await startSession({ applicationIdentifier, subscriberId: "sub-legacy" })).status).toBe(201);
    expect((await stack.request("GET", "/v2/subscribers/sub-string")).status).toBe(200);
    expect((await stack.request("GET", "/v2/subscribers/sub-legacy")).status).toBe(200);
  });

  it("counts the subscriber's unseen in-app messages", async () => {
    const applicationIdentifier = await environmentIdentifier(stack);
    await startSession({ applicationIdentifier, subscriber: { subscriberId: "sub-counted" } });
    const reply = await startSession({ applicationIdentifier, subscriber: { subscriberId: "sub-counted" } });
    expect(reply.body.data.unreadCount.total).toBe(reply.body.data.totalUnreadCount);
  });

  it("refuses an unknown, empty or keyless applicationIdentifier and a missing subscriberId", async () => {
    for (const applicationIdentifier of ["nope", "", "pk_keyless_abc", undefined, "x".repeat(500)]) {
      const reply = await startSession({ applicationIdentifier, subscriber: { subscriberId: "sub-1" } });
      expect(reply.status, String(applicationIdentifier)).toBe(400);
      expect(reply.body.message).toBe("Please provide a valid application identifier");
      expect(reply.body.data).toBeUndefined();
    }
    const applicationIdentifier = await environmentIdentifier(stack);
    const missing = await startSession({ applicationIdentifier, subscriber: {} });
    expect(missing.status).toBe(422);
    expect((await startSession({ applicationIdentifier, subscriber: 7 })).status).toBe(422);
    expect((await startSession("not json")).status).toBe(400);
  });

  it("keeps each environment's subscribers apart", async () => {
    const otherKey = await stack.createKey("Isolated");
    const other = await openSession(stack, "sub-isolated", { key: otherKey });
    expect((await stack.request("GET", "/v2/subscribers/sub-isolated")).status).toBe(404);
    expect((await stack.request("GET", "/v2/subscribers/sub-isolated", undefined, { authorization: `ApiKey ${otherKey}` })).status).toBe(200);
    // The token names its own environment only.
    const seen = await probeRequest("GET", "/v1/inbox/probe", { authorization: `Bearer ${other.token}` });
    const isolated = await stack.request("GET", "/v1/environments/me", undefined, { authorization: `ApiKey ${otherKey}` });
    expect(seen.body.data.scope.environmentId).toBe(isolated.body.data._id);
    expect(seen.body.data.session).toMatchObject({ subscriberId: "sub-isolated", subscriberDbId: expect.stringMatching(OBJECT_ID) });
  });
});

describe("HMAC", () => {
  it("is required when the in_app integration says so: a missing or wrong hash gets no token", async () => {
    const otherKey = await stack.createKey("Other");
    await requireHmac(stack, true);
    try {
      const applicationIdentifier = await environmentIdentifier(stack);
      for (const hash of [
        undefined,
        "",
        "00".repeat(32),
        subscriberHash(stack.key, "sub-other"),
        subscriberHash(otherKey, "sub-hmac"),
        subscriberHash(stack.key, "sub-hmac").toUpperCase(),
      ]) {
        const reply = await startSession({
          applicationIdentifier,
          subscriber: { subscriberId: "sub-hmac" },
          ...(hash === undefined ? {} : { subscriberHash: hash }),
        });
        expect(reply.status, String(hash)).toBe(400);
        expect(reply.body.message).toBe("Please provide a valid HMAC hash");
        expect(JSON.stringify(reply.body)).not.toMatch(JWT);
      }
      expect((await stack.request("GET", "/v2/subscribers/sub-hmac")).status).toBe(404);
      const reply = await startSession({
        applicationIdentifier,
        subscriber: { subscriberId: "sub-hmac" },
        subscriberHash: subscriberHash(stack.key, "sub-hmac"),
      });
      expect(reply.status).toBe(201);
      expect(reply.body.data.token).toMatch(JWT);

      // Any active key of the environment verifies, so keys can be rotated.
      const second = await stack.createKey("Development");
      expect((await startSession({ applicationIdentifier, subscriber: "sub-hmac", subscriberHash: subscriberHash(second, "sub-hmac") })).status).toBe(201);
    } finally {
      await requireHmac(stack, false);
    }
  });

  it("works with @novu/js: the right hash opens the Inbox, a wrong one fails its session with 400", async () => {
    await requireHmac(stack, true);
    try {
      const novu = await openInbox(stack, "sub-js-hmac", { subscriberHash: true });
      expect(novu.subscriberId).toBe("sub-js-hmac");
      const refused = await openInbox(stack, "sub-js-hmac", { subscriberHash: subscriberHash(stack.key, "someone-else") }).then(
        () => undefined,
        (error: { status?: number }) => error,
      );
      expect(refused?.status).toBe(400);
    } finally {
      await requireHmac(stack, false);
    }
  });

  it("writes profile fields only with a valid hash; without one a known subscriber is left as it is", async () => {
    const applicationIdentifier = await environmentIdentifier(stack);
    await startSession({ applicationIdentifier, subscriber: { subscriberId: "sub-profile", firstName: "First" } });
    await startSession({ applicationIdentifier, subscriber: { subscriberId: "sub-profile", firstName: "Changed" } });
    await startSession({ applicationIdentifier, subscriber: { subscriberId: "sub-profile", firstName: "Wrong" }, subscriberHash: "ab".repeat(32) });
    expect((await stack.request("GET", "/v2/subscribers/sub-profile")).body.data.firstName).toBe("First");
    const verified = await startSession({
      applicationIdentifier,
      subscriber: { subscriberId: "sub-profile", firstName: "Verified", email: "v@example.com" },
      subscriberHash: subscriberHash(stack.key, "sub-profile"),
    });
    expect(verified.status).toBe(201);
    expect((await stack.request("GET", "/v2/subscribers/sub-profile")).body.data).toMatchObject({ firstName: "Verified", email: "v@example.com" });
  });
});

describe("@novu/js", () => {
  it("starts a session against the stack", async () => {
    const applicationIdentifier = await environmentIdentifier(stack);
    const novu = new Novu({ applicationIdentifier, subscriber: "sub-js", apiUrl: stack.url, socketUrl: stack.url });
    const resolved = await new Promise<{ data?: { token: string; applicationIdentifier?: string }; error?: unknown }>((resolve) => {
      const stop = novu.on("session.initialize.resolved", (event) => {
        stop();
        resolve(event);
      });
    });
    expect(resolved.error).toBeUndefined();
    expect(resolved.data?.token).toMatch(JWT);
    expect(resolved.data?.applicationIdentifier).toBe(applicationIdentifier);
    expect((await stack.request("GET", "/v2/subscribers/sub-js")).status).toBe(200);
  });

  it("reports an unknown applicationIdentifier as a 400 session error", async () => {
    const novu = new Novu({ applicationIdentifier: "unknown-app", subscriber: "sub-js", apiUrl: stack.url, socketUrl: stack.url });
    const resolved = await new Promise<{ error?: unknown }>((resolve) => {
      const stop = novu.on("session.initialize.resolved", (event) => {
        stop();
        resolve(event);
      });
    });
    expect((resolved.error as { status?: number }).status).toBe(400);
  });
});

describe("audiences", () => {
  it("a session token opens Inbox routes only; an API key opens API routes only", async () => {
    const { token } = await openSession(stack, "sub-audience");
    const inbox = await probeRequest("GET", "/v1/inbox/probe", { authorization: `Bearer ${token}` });
    expect(inbox.status).toBe(200);
    expect(inbox.body.data.session.subscriberId).toBe("sub-audience");
    expect(inbox.body.data.scope).toEqual(inbox.body.data.session.scope);

    for (const authorization of [`ApiKey ${stack.key}`, "", `Bearer`, `Basic ${token}`]) {
      const refused = await probeRequest("GET", "/v1/inbox/probe", authorization ? { authorization } : {});
      expect(refused.status, authorization).toBe(401);
      expect(refused.body).toMatchObject({ statusCode: 401, message: expect.any(String) });
    }
    expect((await probeRequest("GET", "/v1/probe", { authorization: `ApiKey ${stack.key}` })).status).toBe(200);
    expect((await probeRequest("GET", "/v1/probe", { authorization: `Bearer ${token}` })).status).toBe(401);
    // And on the real gateway's API routes.
    const subscribers = await stack.request("GET", "/v1/subscribers", undefined, { authorization: `Bearer ${token}` });
    expect(subscribers.status).toBe(401);
    expect(subscribers.body.message).toBe('Invalid authentication scheme: "Bearer"');
  });

  it("refuses forged, changed and expired tokens with 401 JSON", async () => {
    const { token } = await openSession(stack, "sub-forged");
    const [header, payload] = token.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString()) as Record<string, unknown>;
    const environment = (await accounts.environments.byId(claims.environmentId as string))!;
    const signed = (changes: Record<string, unknown>, key = environment.signingKey) =>
      new SignJWT({ ...claims, ...changes }).setProtectedHeader({ alg: "HS256" }).sign(key);
    const otherEnvironment = (await accounts.environments.byIdentifier(await environmentIdentifier(stack, await stack.createKey("Forger"))))!;
    const refused = [
      `${header}.${Buffer.from(JSON.stringify({ ...claims, subscriberId: "someone-else" })).toString("base64url")}.${token.split(".")[2]}`,
      await signed({ exp: Math.floor(Date.now() / 1000) - 10 }),
      await signed({ aud: "user" }),
      await signed({}, otherEnvironment.signingKey),
      await signed({ organizationId: "0".repeat(24) }),
      "not-a-token",
    ];
    expect((await probeRequest("GET", "/v1/inbox/probe", { authorization: `Bearer ${await signed({})}` })).status).toBe(200);
    for (const forged of refused) {
      const reply = await probeRequest("GET", "/v1/inbox/probe", { authorization: `Bearer ${forged}` });
      expect(reply.status, JSON.stringify(jwtPayloadOf(forged))).toBe(401);
      expect(reply.body.message).toBe("Invalid or expired session token");
    }
  });

  it("body-less PATCH and DELETE with Content-Type: application/json work", async () => {
    const { token } = await openSession(stack, "sub-bodyless");
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const read = await probeRequest("PATCH", "/v1/inbox/probe/m1/read", headers);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({ id: "m1", subscriberId: "sub-bodyless" });
    // An empty body goes with Content-Length: 0 (fetch sets it; a client may not set it itself).
    expect((await probeRequest("PATCH", "/v1/inbox/probe/m1/read", headers, "")).status).toBe(200);
    expect((await probeRequest("DELETE", "/v1/inbox/probe/m1", headers)).status).toBe(204);
  });
});

describe("CORS", () => {
  const preflight = (path: string, origin = ORIGIN) =>
    fetch(`${stack.url}${path}`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "PATCH",
        "access-control-request-headers": "authorization,content-type,novu-api-version,novu-client-version",
      },
    });

  it("answers preflights of the Inbox's and the Notification Center's routes without credentials", async () => {
    for (const path of ["/v1/inbox/session", "/v1/inbox/notifications/abc/read", "/v1/widgets/session/initialize", "/v1/widgets/messages/read"]) {
      const reply = await preflight(path);
      expect(reply.status).toBe(204);
      expect(reply.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(reply.headers.get("access-control-allow-methods")).toBe("GET, POST, PATCH, DELETE");
      expect(reply.headers.get("access-control-allow-headers")).toBe(
        "Authorization, Content-Type, Novu-API-Version, Novu-Client-Version, Novu-Application-Identifier, User-Agent",
      );
      expect(Number(reply.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    }
    // Server routes are not for browsers.
    expect((await preflight("/v1/subscribers")).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("allows any origin by default, and only the configured ones once set", async () => {
    const applicationIdentifier = await environmentIdentifier(stack);
    const open = await startSession({ applicationIdentifier, subscriber: "sub-cors" }, { origin: "https://anywhere.example" });
    expect(open.status).toBe(201);
    expect(open.headers.get("access-control-allow-origin")).toBe("https://anywhere.example");
    expect(open.headers.get("vary")).toMatch(/origin/i);

    // A new environment, configured before any gateway reads it.
    const key = await stack.createKey("Browsers");
    expect(await store.updateInboxOrigins(pool, "Default", "Browsers", [ORIGIN])).toBe(true);
    const identifier = (await pool.query<{ identifier: string }>("SELECT identifier FROM gateway.environments WHERE name = 'Browsers'")).rows[0]!.identifier;
    const allowed = await startSession({ applicationIdentifier: identifier, subscriber: "sub-cors" }, { origin: ORIGIN });
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const foreign = await startSession({ applicationIdentifier: identifier, subscriber: "sub-cors" }, { origin: "https://evil.example" });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    // Token routes judge by the token's environment.
    const token = allowed.body.data.token;
    const fromApp = await probeRequest("GET", "/v1/inbox/probe", { authorization: `Bearer ${token}`, origin: ORIGIN });
    expect(fromApp.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const fromElsewhere = await probeRequest("GET", "/v1/inbox/probe", { authorization: `Bearer ${token}`, origin: "https://evil.example" });
    expect(fromElsewhere.status).toBe(200);
    expect(fromElsewhere.headers.get("access-control-allow-origin")).toBeNull();
    // An answer of no known environment holds nothing of one: its error is readable anywhere.
    const unknown = await startSession({ applicationIdentifier: "nope", subscriber: "sub-cors" }, { origin: "https://evil.example" });
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("access-control-allow-origin")).toBe("https://evil.example");
    expect(key).toBeTruthy();
  });
});
