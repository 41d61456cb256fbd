import dns from "node:dns";
import { createClient } from "@connectrpc/connect";
import { subscribersV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../src/log.js";
import { createRpcTransport, scopeHeaders, serveRpc, type RpcServer, type RpcTransport } from "../src/rpc.js";

// Two replicas of one service behind one name, as a headless Service lists them: each answers
// with its own address, so the caller's spread of calls shows.
const REPLICAS = ["127.0.0.1", "127.0.0.2"];
const SERVICE_NAME = "replicas.notify.test";

const servers: RpcServer[] = [];
let rpc: RpcTransport;
beforeAll(async () => {
  let port = 0;
  for (const host of REPLICAS) {
    const server = await serveRpc({
      host,
      port,
      log: createLogger("rpc-balancing-test", "silent"),
      routes: (registry) => {
        registry.service(subscribersV1.SubscriberService, { updateSubscriber: (request) => ({ id: host, subscriberId: request.subscriberId }) });
      },
    });
    port = server.port;
    servers.push(server);
  }
  const lookup = dns.promises.lookup;
  vi.spyOn(dns.promises, "lookup").mockImplementation(((hostname: string, options: dns.LookupAllOptions) =>
    hostname === SERVICE_NAME ? Promise.resolve(REPLICAS.map((address) => ({ address, family: 4 }))) : lookup(hostname, options)) as typeof lookup);
  rpc = createRpcTransport(`http://${SERVICE_NAME}:${port}`, 5_000);
});
afterAll(async () => {
  rpc?.close();
  vi.restoreAllMocks();
  await Promise.all(servers.map((server) => server.close()));
});

describe("calls to a name with several replicas", () => {
  it("reach every replica, not only the first address", async () => {
    const client = createClient(subscribersV1.SubscriberService, rpc.transport);
    const served = new Set<string>();
    for (let call = 0; call < 50 && served.size < REPLICAS.length; call++) {
      const reply = await client.updateSubscriber({ subscriberId: "ada" }, { headers: scopeHeaders({ organizationId: "o", environmentId: "e" }) });
      served.add(reply.id);
    }
    expect([...served].sort()).toEqual(REPLICAS);
  });
});
