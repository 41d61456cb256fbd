import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { Novu } from "@novu/api";
import { startReceiver, type Received, type Receiver } from "@notify/testing";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookSetupsOver } from "../src/webhook-setup-client.js";
import { createIntegration } from "./delivery-helpers.js";
import { once } from "./sdk3-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Novu's auto-configure: a worker points the provider's event webhook at this gateway's inbound
// webhook of the integration (GATEWAY_PUBLIC_URL) through the provider's own API, here a local
// stand-in, and the integration takes the signing key the provider answers.

const PUBLIC_URL = "https://notify.example.com";
const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const sendgridKey = publicKey.export({ format: "der", type: "spki" }).toString("base64");
const MAILGUN_SIGNING_KEY = "mailgun-http-signing-key";
/** What the refusing stand-in echoes back: a provider may quote the credentials it was sent. */
const REFUSED_KEY = "SG.refused-secret-key";
/** The stack's, named here so a test can ask its worker as a gateway without GATEWAY_PUBLIC_URL would. */
const WEBHOOK_SETUP_SUBJECT = `test.${randomBytes(6).toString("hex")}.webhook-setup`;

interface AutoConfigured {
  success: boolean;
  message?: string;
  integration?: { _id: string; credentials: Record<string, unknown>; configurations: Record<string, unknown> };
}

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(async (request) => {
    if (request.url.startsWith("/refusing/")) return { status: 401, body: { errors: [{ message: `authorization required for ${REFUSED_KEY}` }] } };
    // SendGrid answering slowly: a setup stays under way a while.
    if (request.url === "/slow/v3/user/webhooks/event/settings/all") await new Promise((resolve) => setTimeout(resolve, 500));
    const url = request.url.replace(/^\/slow\//, "/sendgrid/");
    // No webhook posts to notify yet: each setup creates one (the providers' tests follow a second setup).
    if (url === "/sendgrid/v3/user/webhooks/event/settings/all") return { body: { max_allowed: 5, webhooks: [] } };
    if (url === "/sendgrid/v3/user/webhooks/event/settings") return { status: 201, body: { id: "webhook-1", enabled: true } };
    if (url === "/sendgrid/v3/user/webhooks/event/settings/signed/webhook-1") return { body: { id: "webhook-1", public_key: sendgridKey } };
    if (request.url === "/mailgun/v3/domains/mg.example.com/webhooks") {
      // The domain has no webhooks yet: each setup lists none and creates all (the providers' tests follow a domain's webhooks through repeated setups).
      return { body: request.method === "GET" ? { webhooks: {} } : { message: "Webhook has been created" } };
    }
    if (request.url === "/mailgun/v5/accounts/http_signing_key") return { body: { http_signing_key: MAILGUN_SIGNING_KEY } };
    return { status: 404, body: { message: "unknown path" } };
  });
  stack = await startStack({
    outboundAllowedCidrs: "127.0.0.0/8",
    gatewayEnv: { GATEWAY_PUBLIC_URL: PUBLIC_URL, WEBHOOK_SETUP_SUBJECT },
    workerEnv: { WEBHOOK_SETUP_SUBJECT },
  });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const autoConfigure = (integrationId: string) => stack.request<Data<AutoConfigured>>("POST", `/v1/integrations/${integrationId}/auto-configure`);
const receivedUnder = (prefix: string): Received[] => receiver.received.filter((request) => request.url.startsWith(prefix));

async function integrationOf(integrationId: string) {
  const reply = await stack.request<Data<{ _id: string; _environmentId: string; _organizationId: string; configurations: Record<string, unknown> }[]>>(
    "GET",
    "/v1/integrations",
  );
  return reply.body.data.find((integration) => integration._id === integrationId)!;
}

const configurationsOf = async (integrationId: string) => (await integrationOf(integrationId)).configurations;
/** The integration's inbound webhook, as the provider is to post to it. */
const inboundOf = async (integrationId: string) =>
  `/v2/inbound-webhooks/delivery-providers/${(await integrationOf(integrationId))._environmentId}/${integrationId}`;

/** A SendGrid integration whose API is the stand-in's under `path`; `more` adds to what it is created with. */
const sendgridAt = (path: string, apiKey = "SG.key", more: Record<string, unknown> = {}) =>
  createIntegration(stack, {
    providerId: "sendgrid",
    channel: "email",
    credentials: { apiKey, from: "notify@example.com", baseUrl: `${receiver.url}${path}` },
    ...more,
  });

describe("auto-configure", () => {
  it("SendGrid: creates a signed event webhook to the integration's inbound webhook, whose events then verify with the key", async () => {
    const id = await sendgridAt("/sendgrid");

    const reply = await autoConfigure(id);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({
      success: true,
      integration: { _id: id, credentials: {}, configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: sendgridKey } },
    });

    const [listed, created, signed] = receivedUnder("/sendgrid/");
    expect(listed).toMatchObject({ method: "GET", url: "/sendgrid/v3/user/webhooks/event/settings/all", headers: { authorization: "Bearer SG.key" } });
    const inbound = await inboundOf(id);
    expect(created).toMatchObject({ method: "POST", headers: { authorization: "Bearer SG.key" } });
    expect(JSON.parse(created!.body)).toMatchObject({ enabled: true, url: `${PUBLIC_URL}${inbound}`, delivered: true, bounce: true, open: true, click: true });
    expect(signed).toMatchObject({ method: "PATCH", headers: { authorization: "Bearer SG.key" } });
    expect(JSON.parse(signed!.body)).toEqual({ enabled: true });
    expect(await configurationsOf(id)).toEqual({ inboundWebhookEnabled: true, inboundWebhookSigningKey: sendgridKey });

    // The webhook now takes SendGrid's signed events and refuses unsigned ones.
    const body = JSON.stringify([{ event: "delivered", sg_message_id: "unknown.filter0001", timestamp: Math.floor(Date.now() / 1000) }]);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign("sha256", Buffer.from(timestamp + body), privateKey).toString("base64");
    const post = (headers: Record<string, string>) =>
      fetch(`${stack.url}${inbound}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    expect((await post({ "x-twilio-email-event-webhook-signature": signature, "x-twilio-email-event-webhook-timestamp": timestamp })).status).toBe(200);
    expect((await post({})).status).toBe(401);
  });

  it("Mailgun: sets each of the domain's event webhooks and takes the account's signing key", async () => {
    const id = await createIntegration(stack, {
      providerId: "mailgun",
      channel: "email",
      credentials: { apiKey: "mg-key", domain: "mg.example.com", from: "notify@example.com", baseUrl: `${receiver.url}/mailgun` },
    });

    const reply = await autoConfigure(id);
    expect(reply.body.data).toMatchObject({ success: true, integration: { configurations: { inboundWebhookSigningKey: MAILGUN_SIGNING_KEY } } });

    const calls = receivedUnder("/mailgun/");
    const authorization = `Basic ${Buffer.from("api:mg-key").toString("base64")}`;
    expect(calls[0]).toMatchObject({ method: "GET", url: "/mailgun/v3/domains/mg.example.com/webhooks", headers: { authorization } });
    const webhooks = calls.filter((call) => call.method === "POST");
    const url = `${PUBLIC_URL}${await inboundOf(id)}`;
    expect(webhooks.map((call) => Object.fromEntries(new URLSearchParams(call.body)))).toEqual(
      ["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"].map((event) => ({ id: event, url })),
    );
    expect(webhooks.every((call) => call.headers.authorization === authorization)).toBe(true);
    expect(calls.at(-1)).toMatchObject({ method: "GET", url: "/mailgun/v5/accounts/http_signing_key", headers: { authorization } });
    expect(await configurationsOf(id)).toEqual({ inboundWebhookEnabled: true, inboundWebhookSigningKey: MAILGUN_SIGNING_KEY });

    // Again through @novu/api, whose response validation reads the answer (its model of the integration has no fields).
    const novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
    const again = await novu.integrations.integrationsControllerAutoConfigureIntegration(id, undefined, once);
    expect(again.result).toEqual({ success: true, message: "Mailgun's event webhooks are configured, with signed events", integration: {} });
  });

  it("turns a second setup of the same integration away while the first is under way, and takes the next once it is done", async () => {
    const id = await sendgridAt("/slow");
    const replies = await Promise.all([autoConfigure(id), autoConfigure(id)]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 503]);
    expect(replies.find((reply) => reply.status === 503)!.body).toMatchObject({
      message: expect.stringContaining("another setup of this integration is under way"),
    });
    expect(receivedUnder("/slow/").filter((call) => call.method === "POST")).toHaveLength(1);

    const again = await autoConfigure(id);
    expect(again.status).toBe(200);
    expect(again.body.data.success).toBe(true);
  });

  it("answers success false with the provider's refusal, credentials redacted, and leaves the integration as it was", async () => {
    const id = await sendgridAt("/refusing", REFUSED_KEY, { configurations: { inboundWebhookEnabled: false } });

    const reply = await autoConfigure(id);
    expect(reply.status).toBe(200);
    expect(reply.body.data.success).toBe(false);
    expect(reply.body.data.message).toMatch(/sendgrid answered 401/);
    expect(reply.body.data.message).toContain("[redacted]");
    expect(JSON.stringify(reply.body)).not.toContain(REFUSED_KEY);
    expect(reply.body.data.integration).toBeUndefined();
    expect(await configurationsOf(id)).toEqual({ inboundWebhookEnabled: false });
  });

  it("refuses a provider whose API cannot set its webhook up without asking a worker (400 whether one runs or not), and an unknown integration", async () => {
    const id = await createIntegration(stack, { providerId: "postmark", channel: "email", credentials: { apiKey: "pm-key", from: "notify@example.com" } });
    const nats = await connect({ servers: "nats://127.0.0.1:4222" });
    try {
      const asked = nats.subscribe(WEBHOOK_SETUP_SUBJECT);
      const refused = await autoConfigure(id);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ message: "Auto-configuration of inbound webhooks is not supported for provider: postmark" });
      await nats.flush();
      expect(asked.getReceived()).toBe(0);
    } finally {
      await nats.close();
    }
    expect((await autoConfigure("0".repeat(24))).status).toBe(404);
  });

  it("says GATEWAY_PUBLIC_URL is needed when the gateway does not know its address, and calls no provider; writes the integration itself; 503 without a worker", async () => {
    const id = await sendgridAt("/unaddressed");
    const integration = await integrationOf(id);
    const nats = await connect({ servers: "nats://127.0.0.1:4222" });
    try {
      const scope = { organizationId: integration._organizationId, environmentId: integration._environmentId };
      const unaddressed = webhookSetupsOver(() => nats, WEBHOOK_SETUP_SUBJECT, undefined);
      expect(await unaddressed(scope, id)).toEqual({ refused: expect.stringMatching(/set GATEWAY_PUBLIC_URL/) });
      expect(receivedUnder("/unaddressed/")).toEqual([]);

      // Asked by a gateway that then stops waiting (no HTTP request here): the worker writes the
      // integration itself, and its answer on NATS holds no signing key.
      const addressed = await sendgridAt("/sendgrid");
      const answer = await webhookSetupsOver(() => nats, WEBHOOK_SETUP_SUBJECT, PUBLIC_URL)(scope, addressed);
      expect(answer).toEqual({ configured: "SendGrid's event webhook is configured, with signed events" });
      expect(await configurationsOf(addressed)).toEqual({ inboundWebhookEnabled: true, inboundWebhookSigningKey: sendgridKey });
      // No worker listening: a 503 at once, not a wait.
      const nobody = webhookSetupsOver(() => nats, `test.${randomBytes(6).toString("hex")}.nobody`, PUBLIC_URL);
      await expect(nobody(scope, id)).rejects.toMatchObject({ status: 503 });
    } finally {
      await nats.close();
    }
  });
});
