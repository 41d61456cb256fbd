import { createClient } from "redis";

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
