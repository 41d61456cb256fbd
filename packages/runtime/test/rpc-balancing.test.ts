import dns from "node:dns";
import { createClient } from "@connectrpc/connect";
import { subscribersV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../src/log.js";
import { createRpcTransport, scopeHeaders, serveRpc, type RpcServer, type RpcTransport } from "../src/rpc.js";

// Replicas of one service behind one name, as a headless Service lists them: each answers with
// its own address, so the caller's spread of calls shows. The name resolves to the first
// replica only until a test adds the second, as a scale-up would.
const REPLICAS = ["127.0.0.1", "127.0.0.2"];
const SERVICE_NAME = "replicas.notify.test";
// Channels are renewed quickly here, so the calls below cross many renewals.
const CHANNEL_AGE_MS = 100;

let resolved = REPLICAS.slice(0, 1);
const servers: RpcServer[] = [];
let rpc: RpcTransport;
beforeAll(async () => {
  let port = 0;
  for (const host of REPLICAS) {
    const server = await serveRpc({
      host,
      port,
      log: createLogger("rpc-balancing-test", "silent"),
      internalToken: undefined,
      routes: (registry) => {
        registry.service(subscribersV1.SubscriberService, { updateSubscriber: (request) => ({ id: host, subscriberId: request.subscriberId }) });
      },
    });
    port = server.port;
    servers.push(server);
  }
  const lookup = dns.promises.lookup;
  vi.spyOn(dns.promises, "lookup").mockImplementation(((hostname: string, options: dns.LookupAllOptions) =>
    hostname === SERVICE_NAME ? Promise.resolve(resolved.map((address) => ({ address, family: 4 }))) : lookup(hostname, options)) as typeof lookup);
  rpc = createRpcTransport(`http://${SERVICE_NAME}:${port}`, 5_000, { channelAgeMs: CHANNEL_AGE_MS });
});
afterAll(async () => {
  rpc?.close();
  vi.restoreAllMocks();
  await Promise.all(servers.map((server) => server.close()));
});

const call = () =>
  createClient(subscribersV1.SubscriberService, rpc.transport).updateSubscriber(
    { subscriberId: "ada" },
    { headers: scopeHeaders({ organizationId: "o", environmentId: "e" }) },
  );

async function servedBy(calls: number): Promise<string[]> {
  const served = new Set<string>();
  for (let attempt = 0; attempt < calls; attempt++) served.add((await call()).id);
  return [...served].sort();
}

describe("calls to a name with several replicas", () => {
  it("reach every replica, a replica added later once the channel was renewed", async () => {
    expect(await servedBy(10)).toEqual(REPLICAS.slice(0, 1));
    resolved = REPLICAS;
    await new Promise((resolve) => setTimeout(resolve, CHANNEL_AGE_MS));
    expect(await servedBy(20)).toEqual(REPLICAS);
  });

  it("all succeed while channels are renewed under them", async () => {
    const until = Date.now() + CHANNEL_AGE_MS * 10;
    const callers = Array.from({ length: 8 }, async () => {
      let answered = 0;
      while (Date.now() < until) {
        await call();
        answered++;
      }
      return answered;
    });
    const answered = await Promise.all(callers);
    expect(answered.every((count) => count > 0)).toBe(true);
  });
});
