import { WebhookRefused, type SnsEndpointAnswer, type SnsEndpointRequest, type SnsEndpoints } from "@notify/providers/events";
import type { NatsConnection } from "@notify/runtime";
import { HttpError } from "./errors.js";
import { askWorker } from "./worker-requests.js";

/** How long a call to AWS through the worker may take: SNS waits 15 s for a webhook's answer. */
const SNS_CALL_TIMEOUT_MS = 10_000;

/**
 * The calls to Amazon SNS that SES webhooks need, made by a worker over NATS: the worker is the
 * only process that reaches the internet. AWS or the worker out of reach is a 503, which SNS
 * retries; a certificate URL that serves none refuses the message; a confirmation SNS turns down is a 400.
 */
export function snsEndpointsOver(nats: () => NatsConnection | undefined, subject: string): SnsEndpoints {
  const unavailable = (why: string) => new HttpError(503, `Amazon SNS could not be reached to read the webhook (${why}); it is taken when SNS retries`);
  async function call(request: SnsEndpointRequest): Promise<SnsEndpointAnswer> {
    const answer = await askWorker<SnsEndpointAnswer>(nats, subject, request, SNS_CALL_TIMEOUT_MS, unavailable);
    if (answer.error === undefined) return answer;
    if (answer.transient) throw unavailable(answer.error);
    if (request.action === "certificate") throw new WebhookRefused("signature", `ses: the SigningCertURL's certificate could not be fetched: ${answer.error}`);
    throw new HttpError(400, `The SNS subscription could not be confirmed: ${answer.error}`);
  }
  return {
    async certificate(url) {
      return (await call({ action: "certificate", url })).certificate ?? "";
    },
    async confirm(url) {
      await call({ action: "confirm", url });
    },
  };
}
