/**
 * Turns concurrent calls into batched ones (group commit). Calls with the same key queue up;
 * a batch leaves as soon as fewer than `maxInFlight` batches of that key are under way, taking
 * everything queued (up to `maxBatch`). So a lone call waits for nothing, and under load the
 * batches grow by themselves to whatever arrived while the earlier ones were in flight: one
 * round trip (an RPC, a statement) costs about what a batch of a hundred does (DESIGN §5). A
 * fixed wait would add its delay when idle and still send batches of one or two when requests
 * arrive more slowly than one per wait.
 */
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
