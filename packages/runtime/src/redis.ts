import { ClientClosedError, ClientOfflineError, ConnectionTimeoutError, createClient, SocketClosedUnexpectedlyError, SocketTimeoutError } from "redis";

export type Redis = ReturnType<typeof createClient>;

/** Connects with bounded reconnect back-off; commands fail fast while disconnected instead of queueing forever. */
export async function connectRedis(url: string): Promise<Redis> {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2_000) },
  });
  client.on("error", () => undefined); // reconnects on its own; callers see failed commands
  await client.connect();
  return client;
}

/**
 * Whether a command failed because Redis cannot be reached (down, restarting, or the client still
 * reconnecting), not because of the command. Told apart by class: node-redis leaves every error's
 * `name` as "Error".
 */
export function isRedisUnavailable(error: unknown): boolean {
  return (
    error instanceof ClientOfflineError ||
    error instanceof ClientClosedError ||
    error instanceof ConnectionTimeoutError ||
    error instanceof SocketClosedUnexpectedlyError ||
    error instanceof SocketTimeoutError
  );
}
