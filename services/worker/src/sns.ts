import { OutboundRefused, type OutboundHttp } from "@notify/providers";
import { isSnsEndpointRequest, snsUrlRefusal, type SnsEndpointAnswer, type SnsEndpointRequest } from "@notify/providers/events";
import { keptLoads, type Logger } from "@notify/runtime";
import type { NatsConnection } from "nats";
import { answerRequests } from "./requests.js";

/** Certificates kept at once; SNS signs with few, and names the one it used in every message. */
const CERTIFICATES_KEPT = 64;
/** How long a certificate is used before it is fetched again. */
const CERTIFICATE_KEPT_MS = 24 * 3_600_000;

export interface SnsEndpointDeps {
  nats: NatsConnection;
  outbound: OutboundHttp;
  log: Logger;
  /** SNS_REQUESTS_SUBJECT: where the gateway asks. */
  subject: string;
  /** SNS_ENDPOINT_ORIGIN: where SNS's URLs are fetched from instead of AWS (a test's stand-in). */
  origin?: string | undefined;
}

class SnsCallFailed extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/**
 * Serves the calls to Amazon SNS that webhooks of SES need (SnsEndpoints), for the gateway, which
 * does not reach the internet: the certificate a message's signature is checked with, kept a day,
 * and the visit that confirms a subscription. Only SNS's own https URLs are called, through the
 * outbound guard; one worker of the queue group answers each request.
 */
export function serveSnsEndpoints(deps: SnsEndpointDeps): { stop(): void } {
  const certificate = keptLoads<string>({ max: CERTIFICATES_KEPT, ttlMs: CERTIFICATE_KEPT_MS });

  async function get(url: string): Promise<string> {
    const refusal = snsUrlRefusal(url);
    if (refusal) throw new SnsCallFailed(refusal, false);
    const { pathname, search, host } = new URL(url);
    let status: number;
    let text: string;
    try {
      ({ status, text } = await deps.outbound.request(deps.origin ? `${deps.origin}${pathname}${search}` : url, { method: "GET" }));
    } catch (error) {
      throw new SnsCallFailed(`${host} could not be reached: ${error instanceof Error ? error.message : String(error)}`, !(error instanceof OutboundRefused));
    }
    if (status !== 200) throw new SnsCallFailed(`${host} answered ${status}`, status >= 500 || status === 429);
    return text;
  }

  async function answer(request: SnsEndpointRequest): Promise<SnsEndpointAnswer> {
    try {
      if (request.action === "certificate") return { certificate: await certificate(request.url, () => get(request.url)) };
      await get(request.url);
      deps.log.info({ topic: new URL(request.url).searchParams.get("TopicArn") }, "SNS subscription confirmed");
      return {};
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      deps.log.warn({ action: request.action, error: text }, "SNS call failed");
      return { error: text, transient: error instanceof SnsCallFailed && error.transient };
    }
  }

  return answerRequests(deps.nats, deps.subject, isSnsEndpointRequest, answer, { error: "not an SNS endpoint request", transient: false }, deps.log);
}
