import { createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { type InboundWebhook, WebhookRefused } from "./types.js";

/** How far a signed timestamp may be from now, as the Standard Webhooks libraries allow. */
const TOLERANCE_SECONDS = 5 * 60;

/** The DER prefix that makes a raw 32-byte Ed25519 key a SubjectPublicKeyInfo. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function refused(providerId: string, why: string): WebhookRefused {
  return new WebhookRefused("signature", `${providerId}: ${why}`);
}

function header(webhook: InboundWebhook, providerId: string, name: string): string {
  const value = webhook.headers[name];
  if (!value) throw refused(providerId, `the request has no ${name} header`);
  return value;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function withinTolerance(providerId: string, seconds: string): void {
  const at = Number(seconds);
  if (!Number.isFinite(at) || Math.abs(Date.now() / 1000 - at) > TOLERANCE_SECONDS) throw refused(providerId, "the signed timestamp is too far from now");
}

/** A public key written as PEM or as base64 of its DER SubjectPublicKeyInfo (how SendGrid shows it). */
function publicKeyOf(providerId: string, text: string, rawPrefix?: Buffer): KeyObject {
  try {
    if (text.includes("-----BEGIN")) return createPublicKey(text);
    const der = Buffer.from(text, "base64");
    return createPublicKey({ key: rawPrefix && der.length === 32 ? Buffer.concat([rawPrefix, der]) : der, format: "der", type: "spki" });
  } catch {
    throw refused(providerId, "the integration's inboundWebhookSigningKey is not a public key");
  }
}

/** SendGrid's signed event webhook: ECDSA (P-256, SHA-256) over the timestamp header and the body. */
export function verifySendgrid(webhook: InboundWebhook, signingKey: string): void {
  const signature = header(webhook, "sendgrid", "x-twilio-email-event-webhook-signature");
  const timestamp = header(webhook, "sendgrid", "x-twilio-email-event-webhook-timestamp");
  const key = publicKeyOf("sendgrid", signingKey);
  const signed = Buffer.concat([Buffer.from(timestamp), webhook.body]);
  if (!verify("sha256", signed, key, Buffer.from(signature, "base64"))) throw refused("sendgrid", "the signature does not match the body");
}

/** Mailgun: HMAC-SHA256 of the body's signature timestamp and token, keyed by the HTTP webhook signing key. */
export function verifyMailgun(body: unknown, signingKey: string): void {
  const signature = (body as { signature?: { timestamp?: unknown; token?: unknown; signature?: unknown } } | null)?.signature;
  const { timestamp, token, signature: given } = signature ?? {};
  if (typeof timestamp !== "string" || typeof token !== "string" || typeof given !== "string")
    throw refused("mailgun", "the body has no signature with timestamp, token and signature");
  const expected = createHmac("sha256", signingKey)
    .update(timestamp + token)
    .digest("hex");
  if (!sameText(expected, given)) throw refused("mailgun", "the signature does not match");
}

/** Svix (Resend) signs as Standard Webhooks does, under svix-* header names. */
export function verifySvix(providerId: string, webhook: InboundWebhook, signingKey: string): void {
  const prefix = webhook.headers["svix-id"] !== undefined ? "svix" : "webhook";
  const headers = {
    "webhook-id": header(webhook, providerId, `${prefix}-id`),
    "webhook-timestamp": header(webhook, providerId, `${prefix}-timestamp`),
    "webhook-signature": header(webhook, providerId, `${prefix}-signature`),
  };
  let checker: Webhook;
  try {
    checker = new Webhook(signingKey);
  } catch {
    throw refused(providerId, "the integration's inboundWebhookSigningKey is not a webhook secret (whsec_…)");
  }
  try {
    checker.verify(webhook.body.toString("utf8"), headers, { jsonParse: false });
  } catch (error) {
    throw refused(providerId, (error as Error).message);
  }
}

/**
 * Twilio: HMAC-SHA1 of the URL it called followed by each form parameter's name and value in
 * name order, keyed by the account's auth token.
 */
export function verifyTwilio(webhook: InboundWebhook, body: unknown, signingKey: string): void {
  const signature = header(webhook, "twilio", "x-twilio-signature");
  const params = Object.entries((body ?? {}) as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signed = webhook.url + params.map(([name, value]) => `${name}${String(value)}`).join("");
  const expected = createHmac("sha1", signingKey).update(signed).digest("base64");
  if (!sameText(expected, signature)) throw refused("twilio", "the signature does not match the URL and parameters");
}

/** Telnyx: Ed25519 over the timestamp header, a bar and the body, with the account's public key. */
export function verifyTelnyx(webhook: InboundWebhook, signingKey: string): void {
  const signature = header(webhook, "telnyx", "telnyx-signature-ed25519");
  const timestamp = header(webhook, "telnyx", "telnyx-timestamp");
  withinTolerance("telnyx", timestamp);
  const key = publicKeyOf("telnyx", signingKey, ED25519_SPKI_PREFIX);
  const signed = Buffer.concat([Buffer.from(`${timestamp}|`), webhook.body]);
  if (!verify(null, signed, key, Buffer.from(signature, "base64"))) throw refused("telnyx", "the signature does not match the body");
}
