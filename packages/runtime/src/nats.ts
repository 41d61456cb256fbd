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

/** A NATS connection made in the background, for processes that work (less well) without one. */
export interface BackgroundNats {
  /** The connection once it is made; undefined until then. */
  current(): NatsConnection | undefined;
  /** Resolves with the connection once it is made. */
  connected: Promise<NatsConnection>;
  /** Drains the connection, or closes it whenever it completes if it is still being made. */
  close(): Promise<void>;
}

/**
 * Starts connecting and waits at most `waitMs` for it: a reachable server is connected before the
 * process serves, an unreachable one does not hold up the start (the connection keeps trying).
 */
export async function connectNatsInBackground(servers: string, name: string, waitMs = 2_000): Promise<BackgroundNats> {
  let connection: NatsConnection | undefined;
  const connected = connectNats(servers, name).then((made) => (connection = made));
  await Promise.race([connected, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
  return {
    current: () => connection,
    connected,
    async close() {
      if (connection) await connection.drain().catch(() => undefined);
      else void connected.then((made) => made.close());
    },
  };
}
