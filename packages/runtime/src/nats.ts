import { connect, type NatsConnection } from "nats";

export type { NatsConnection };

/**
 * Connects, waiting for a server that is not up yet, and keeps reconnecting forever: a NATS
 * restart must not take a process down.
 */
export async function connectNats(servers: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: servers.replace(/^nats:\/\//, "").split(","),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    // Otherwise every request (each JetStream publish) captures two stack traces up front, in
    // case it times out: half of the relay's publish CPU in a profile.
    noAsyncTraces: true,
  });
}

/** Runs `attempt` until it succeeds, backing off up to 5 s (set-up that needs a server that may be restarting). */
export async function retryUntilDone<T>(attempt: () => Promise<T>, onRetry: (error: unknown, delayMs: number) => void): Promise<T> {
  for (let delay = 200; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await attempt();
    } catch (error) {
      onRetry(error, delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
