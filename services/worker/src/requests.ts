import type { Logger } from "@notify/runtime";
import { JSONCodec, type NatsConnection } from "nats";

const codec = JSONCodec<unknown>();

/**
 * Answers the JSON requests the gateway publishes on `subject` for work that reaches the internet,
 * which only the worker may: one worker of the queue group answers each. A message that is not
 * such a request (anything on NATS may publish there) gets `refusal`. `answer` settles with an
 * answer, never a rejection.
 */
export function answerRequests<Request, Answer>(
  nats: NatsConnection,
  subject: string,
  isRequest: (value: unknown) => value is Request,
  answer: (request: Request) => Promise<Answer>,
  refusal: Answer,
  log: Logger,
): { stop(): void } {
  const subscription = nats.subscribe(subject, {
    queue: "worker",
    callback: (error, message) => {
      if (error) return;
      let request: unknown;
      try {
        request = codec.decode(message.data);
      } catch {
        request = undefined;
      }
      const reply = isRequest(request) ? answer(request) : Promise.resolve(refusal);
      // NATS may refuse the reply (one larger than the server takes): the gateway's wait ends on its own.
      void reply
        .then((answered) => message.respond(codec.encode(answered)))
        .catch((failure: unknown) => log.warn({ err: failure, subject }, "request not answered"));
    },
  });
  return { stop: () => subscription.unsubscribe() };
}
