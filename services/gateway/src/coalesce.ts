/**
 * Turns concurrent calls into batched ones (group commit). Calls with the same key queue up;
 * a batch leaves as soon as fewer than `maxInFlight` batches of that key are under way, taking
 * everything queued (up to `maxBatch`). So a lone call waits for nothing, and under load the
 * batches grow by themselves to whatever arrived while the earlier ones were in flight: a
 * per-request RPC costs more CPU than the rest of a request, and a batch of a hundred little more
 * than one (DESIGN §5, `pnpm bench rpc`). A fixed wait would add its delay when idle and still send batches of one
 * or two when requests arrive more slowly than one per wait.
 */
import type { CallOptions } from "@connectrpc/connect";
import { ENVIRONMENT_HEADER, ORGANIZATION_HEADER } from "@notify/runtime";

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

export interface CoalescerOptions<I, O> {
  maxBatch: number;
  /** Batches of one key under way at once; more calls queue for the next batch. */
  maxInFlight: number;
  /** Answers every item, in order; a rejection fails every caller of the batch. */
  run(key: string, items: I[]): Promise<O[]>;
}

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

interface KeyState<I, O> {
  queue: Waiting<I, O>[];
  inFlight: number;
  /** A send is scheduled for the end of this turn of the event loop. */
  scheduled: boolean;
}

export function createCoalescer<I, O>(options: CoalescerOptions<I, O>) {
  const keys = new Map<string, KeyState<I, O>>();

  function send(key: string, state: KeyState<I, O>): void {
    while (state.queue.length > 0 && state.inFlight < options.maxInFlight) {
      const batch = state.queue.splice(0, options.maxBatch);
      state.inFlight += 1;
      options
        .run(
          key,
          batch.map((waiting) => waiting.item),
        )
        .then(
          (answers) => {
            batch.forEach((caller, index) => {
              if (index < answers.length) caller.resolve(answers[index] as O);
              else caller.reject(new Error(`batch answered ${answers.length} of ${batch.length} items`));
            });
          },
          (error: unknown) => {
            for (const caller of batch) caller.reject(error);
          },
        )
        .finally(() => {
          state.inFlight -= 1;
          send(key, state);
          if (state.inFlight === 0 && state.queue.length === 0) keys.delete(key);
        });
    }
  }

  return {
    submit(key: string, item: I): Promise<O> {
      return new Promise<O>((resolve, reject) => {
        const state = keys.get(key) ?? { queue: [], inFlight: 0, scheduled: false };
        keys.set(key, state);
        state.queue.push({ item, resolve, reject });
        if (state.queue.length >= options.maxBatch) {
          send(key, state);
        } else if (!state.scheduled) {
          // Requests whose bytes arrived in the same turn of the event loop travel together.
          state.scheduled = true;
          setImmediate(() => {
            state.scheduled = false;
            send(key, state);
          });
        }
      });
    },
  };
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
export function batched<Request, Answer>(send: (requests: Request[], headers: CallOptions["headers"]) => Promise<Answer[]>) {
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
    // The routes build a request's fields in one order, so equal requests have equal JSON (a
    // protobuf encoding per request cost more than the rest of the batching).
    const key = `${scope}\n${JSON.stringify(request)}`;
    let answer = waiting.get(key);
    if (!answer) {
      answer = coalescer.submit(scope, { request, headers: options?.headers, key });
      waiting.set(key, answer);
    }
    return answer;
  };
}
