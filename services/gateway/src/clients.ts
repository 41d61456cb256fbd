import { createClient, type Client } from "@connectrpc/connect";
import { Health, subscribersV1 } from "@notify/proto";
import { createRpcTransport } from "@notify/runtime";
import type { GatewayConfig } from "./config.js";

/** One client per downstream service; every route reaches services only through these. */
export interface Clients {
  subscribers: Client<typeof subscribersV1.SubscriberService>;
}

export type ServiceName = keyof Clients;

export interface ConnectedClients {
  clients: Clients;
  /** The gRPC health service of each downstream, for readiness. */
  health: Record<ServiceName, Client<typeof Health>>;
  close(): void;
}

export function connectClients(config: Pick<GatewayConfig, "SUBSCRIBERS_URL">): ConnectedClients {
  const subscribers = createRpcTransport(config.SUBSCRIBERS_URL);
  return {
    clients: { subscribers: createClient(subscribersV1.SubscriberService, subscribers.transport) },
    health: { subscribers: createClient(Health, subscribers.transport) },
    close() {
      subscribers.close();
    },
  };
}
