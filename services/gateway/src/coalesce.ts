import type { CallOptions } from "@connectrpc/connect";
import { createCoalescer, ENVIRONMENT_HEADER, ORGANIZATION_HEADER } from "@notify/runtime";

/** A scope header of a call's options. */
export function scopeHeaderOf(options: CallOptions | undefined, name: typeof ORGANIZATION_HEADER | typeof ENVIRONMENT_HEADER): string | undefined {
  const given = options?.headers;
  // Routes pass the plain record of scopeHeaders(); building a Headers object per request is not free.
  if (given === undefined || given instanceof Headers || Array.isArray(given)) return new Headers(given).get(name) ?? undefined;
  return (given as Record<string, string>)[name];
}

/** Calls are only ever batched with calls of the same caller scope. */
export function scopeKeyOf(options: CallOptions | undefined): string {
  return `${scopeHeaderOf(options, ORGANIZATION_HEADER)}/${scopeHeaderOf(options, ENVIRONMENT_HEADER)}`;
}

interface Pending<Request> {
  request: Request;
  headers: CallOptions["headers"];
  /** Identical requests waiting in the same batch share this key and one item. */
  key: string;
}

/**
 * Batches one read method: calls of one environment that arrive while earlier batches are under
 * way travel as one batch RPC, and identical requests waiting for the same batch share one item
 * (and answer).
 * A request never joins a batch already sent, so it always sees every write that finished
 * before it arrived.
 */
export function batched<Request, Answer>(
  send: (requests: Request[], headers: CallOptions["headers"]) => Promise<Answer[]>,
  keyOf: (request: Request) => string = (request) => JSON.stringify(request),
) {
  const waiting = new Map<string, Promise<Answer>>();
  const coalescer = createCoalescer<Pending<Request>, Answer>({
    maxBatch: 200,
    // One batch under way at a time, as for triggers: the next is as large as it can be. A heavy
    // subscriber's feed was served faster than with four in flight, and the unseen count and the
    // spread loads did not move (`pnpm bench messages`).
    maxInFlight: 1,
    run: (_, items) => {
      for (const item of items) waiting.delete(item.key);
      return send(
        items.map((item) => item.request),
        items[0]!.headers,
      );
    },
  });
  return (request: Request, options: CallOptions | undefined): Promise<Answer> => {
    const scope = scopeKeyOf(options);
    // The routes build a request's fields in one order, so equal requests have equal keys (a
    // protobuf encoding per request cost more than the rest of the batching).
    const key = `${scope}\n${keyOf(request)}`;
    let answer = waiting.get(key);
    if (!answer) {
      answer = coalescer.submit(scope, { request, headers: options?.headers, key });
      waiting.set(key, answer);
    }
    return answer;
  };
}
