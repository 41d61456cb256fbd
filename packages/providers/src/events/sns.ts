import { createVerify, X509Certificate } from "node:crypto";
import { fieldsOf, textOf } from "./fields.js";
import { WebhookRefused } from "./types.js";

/**
 * Amazon SNS's HTTP(S) deliveries (how Amazon SES reports what became of its mails): each request
 * is an SNS message signed with a certificate AWS serves, named in the message. Checking one takes
 * that certificate, and a subscription starts only once its confirmation URL has been visited:
 * both are calls to AWS, which only the worker makes (SnsEndpoints).
 */

export interface SnsEndpointRequest {
  action: "certificate" | "confirm";
  url: string;
}

/** Whether a decoded request is an SnsEndpointRequest (anything on NATS may publish to the subject). */
export function isSnsEndpointRequest(value: unknown): value is SnsEndpointRequest {
  const request = fieldsOf(value);
  return (request.action === "certificate" || request.action === "confirm") && typeof request.url === "string";
}

export interface SnsEndpointAnswer {
  /** The PEM certificate asked for. */
  certificate?: string | undefined;
  /** Why the call failed, and whether it may succeed later (AWS unreachable, a 5xx). */
  error?: string | undefined;
  transient?: boolean | undefined;
}

/** The calls to AWS a webhook of SNS needs, made elsewhere (the worker reaches the internet). */
export interface SnsEndpoints {
  /** The PEM certificate at a SigningCertURL. */
  certificate(url: string): Promise<string>;
  /** Visits a SubscriptionConfirmation's SubscribeURL, which confirms the subscription. */
  confirm(url: string): Promise<void>;
}

export type SnsMessageType = "Notification" | "SubscriptionConfirmation" | "UnsubscribeConfirmation";

export interface SnsMessage {
  Type: SnsMessageType;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  Subject?: string | undefined;
  SubscribeURL?: string | undefined;
  Token?: string | undefined;
}

const MESSAGE_TYPES: readonly string[] = ["Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation"];

/** The digest of each signature version SNS signs with. */
const DIGESTS: Readonly<Record<string, string>> = { "1": "RSA-SHA1", "2": "RSA-SHA256" };

/** SNS's own hosts, one per region (China's under amazonaws.com.cn): certificates and confirmations come only from them. */
const SNS_HOST = /^sns\.[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d\.amazonaws\.com(?:\.cn)?$/;

/** Why a URL an SNS message names is not one of SNS's own (https, an SNS host), if it is not. */
export function snsUrlRefusal(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text.slice(0, 200)}" is not a URL`;
  }
  if (url.protocol !== "https:" || url.username || url.password || url.port || !SNS_HOST.test(url.hostname))
    return `${url.origin} is not an Amazon SNS endpoint (https://sns.<region>.amazonaws.com)`;
  return undefined;
}

function refused(why: string): WebhookRefused {
  return new WebhookRefused("signature", `ses: ${why}`);
}

/** The SNS message a body holds; refused when it is not one. */
export function snsMessageOf(body: unknown): SnsMessage {
  const fields = fieldsOf(body);
  const text = (name: string) => textOf(fields[name]);
  const type = text("Type");
  if (!type || !MESSAGE_TYPES.includes(type)) throw new WebhookRefused("body", "ses: the body is not an Amazon SNS message (Type)");
  const required = ["MessageId", "TopicArn", "Timestamp", "SignatureVersion", "Signature", "SigningCertURL"] as const;
  const missing = required.filter((name) => text(name) === undefined);
  if (missing.length > 0) throw new WebhookRefused("body", `ses: the SNS message has no ${missing.join(", ")}`);
  if (type !== "Notification" && (text("SubscribeURL") === undefined || text("Token") === undefined))
    throw new WebhookRefused("body", `ses: the SNS ${type} has no SubscribeURL or Token`);
  return {
    Type: type as SnsMessageType,
    MessageId: text("MessageId")!,
    TopicArn: text("TopicArn")!,
    Message: typeof fields.Message === "string" ? fields.Message : "",
    Timestamp: text("Timestamp")!,
    SignatureVersion: text("SignatureVersion")!,
    Signature: text("Signature")!,
    SigningCertURL: text("SigningCertURL")!,
    Subject: text("Subject"),
    SubscribeURL: text("SubscribeURL"),
    Token: text("Token"),
  };
}

/** What SNS signs: some of the message's fields, each name and value on a line of its own, in this order. */
function signedText(message: SnsMessage): string {
  const names =
    message.Type === "Notification"
      ? (["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"] as const)
      : (["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"] as const);
  return names.flatMap((name) => (message[name] === undefined ? [] : [`${name}\n${message[name]}\n`])).join("");
}

/**
 * Checks an SNS message's signature with the certificate its SigningCertURL names (fetched
 * through `endpoints`), and answers it; throws WebhookRefused("signature") when it does not hold.
 * With `region`, the topic must be in that region (the integration's).
 */
export async function verifiedSnsMessage(body: unknown, endpoints: SnsEndpoints, region?: string): Promise<SnsMessage> {
  const message = snsMessageOf(body);
  const digest = DIGESTS[message.SignatureVersion];
  if (!digest) throw refused(`SNS signature version ${message.SignatureVersion} is not one notify checks`);
  const certificateRefusal = snsUrlRefusal(message.SigningCertURL);
  if (certificateRefusal) throw refused(`the SigningCertURL: ${certificateRefusal}`);
  if (message.SubscribeURL !== undefined) {
    const subscribeRefusal = snsUrlRefusal(message.SubscribeURL);
    if (subscribeRefusal) throw refused(`the SubscribeURL: ${subscribeRefusal}`);
  }
  const topicRegion = message.TopicArn.split(":")[3];
  if (region && topicRegion !== region) throw refused(`the topic ${message.TopicArn} is not in the integration's region ${region}`);
  const pem = await endpoints.certificate(message.SigningCertURL);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch {
    throw refused("the SigningCertURL does not serve a certificate");
  }
  if (Date.parse(certificate.validTo) < Date.now()) throw refused("the certificate at the SigningCertURL has expired");
  const verifier = createVerify(digest);
  verifier.update(signedText(message), "utf8");
  if (!verifier.verify(certificate.publicKey, message.Signature, "base64")) throw refused("the SNS signature does not match the message");
  return message;
}
