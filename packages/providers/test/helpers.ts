import { createOutbound, DEFAULT_OUTBOUND_POLICY, type OutboundHttp } from "../src/outbound.js";
import type { ProviderCredentials, SendContext } from "../src/types.js";

/** The outbound guard as the project's tests run it: local receivers (@notify/testing's startReceiver) allowed. */
export const testOutbound = (): OutboundHttp => createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });

export function sendContext(http: OutboundHttp, credentials: ProviderCredentials, integrationId = "integration-1"): SendContext {
  return { integrationId, credentials, http, idempotencyKey: "message-1" };
}

/** The value of an application/x-www-form-urlencoded body as an object. */
export const formOf = (body: string) => Object.fromEntries(new URLSearchParams(body));

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
