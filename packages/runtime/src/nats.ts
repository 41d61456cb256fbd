import { connect, type NatsConnection } from "nats";

export type { NatsConnection };

/** Connects and keeps reconnecting forever: a NATS restart must not take a process down. */
export async function connectNats(servers: string, name: string): Promise<NatsConnection> {
  return connect({ servers: servers.replace(/^nats:\/\//, "").split(","), name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
}
