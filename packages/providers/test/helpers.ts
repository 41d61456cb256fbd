import { startReceiver, type Receiver } from "@notify/testing";
import { afterAll, beforeEach } from "vitest";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, type OutboundHttp } from "../src/outbound.js";
import { createProviders } from "../src/registry.js";
import type { ProviderCredentials, SendContext } from "../src/types.js";

/** The outbound guard as the project's tests run it: local receivers (@notify/testing's startReceiver) allowed. */
export const testOutbound = (): OutboundHttp => createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });

/**
 * What a test file sends through, made at its top level: a local receiver answering `respond`
 * (200 with no body unless given), the outbound guard that lets calls reach it, and the
 * providers; closed after the file. Before each test the receiver forgets what it got and goes
 * back to `respond`.
 */
export async function sendingFixture(respond: Receiver["respond"] = () => ({})) {
  const receiver = await startReceiver(respond);
  const http = testOutbound();
  const providers = createProviders();
  afterAll(async () => {
    await providers.close();
    await http.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.respond = respond;
  });
  return { receiver, http, providers };
}

export function sendContext(http: OutboundHttp, credentials: ProviderCredentials, integrationId = "integration-1"): SendContext {
  return { integrationId, credentials, http, idempotencyKey: "message-1" };
}

/** The value of an application/x-www-form-urlencoded body as an object. */
export const formOf = (body: string) => Object.fromEntries(new URLSearchParams(body));

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
