import type { NatsConnection } from "@notify/runtime";
import { JSONCodec } from "nats";

const codec = JSONCodec<unknown>();

/**
 * Asks a worker over NATS for work that reaches the internet, which only the worker may do, and
 * answers its decoded answer. No NATS connection, no worker listening or no answer in time throws
 * `unavailable(why)`.
 */
export async function askWorker<Answer>(
  nats: () => NatsConnection | undefined,
  subject: string,
  request: unknown,
  timeoutMs: number,
  unavailable: (why: string) => Error,
): Promise<Answer> {
  const connection = nats();
  if (!connection) throw unavailable("no NATS connection");
  try {
    return codec.decode((await connection.request(subject, codec.encode(request), { timeout: timeoutMs })).data) as Answer;
  } catch (error) {
    throw unavailable(error instanceof Error ? error.message : String(error));
  }
}
