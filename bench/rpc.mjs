// RPC between processes: the transport every service uses (grpc-js on both ends, runtime's
// createRpcTransport and serveRpc) against connect-node on both ends (Connect protocol, binary),
// which DESIGN §5 asks to compare. A unary health check, 100 calls in flight, client in this
// process, server in its own (scripts/bench-rpc-server.mjs); the two alternate, three runs each.
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Health } from "@notify/proto";
import { createRpcTransport } from "@notify/runtime";
import { cpuSeconds, freePort, percentile, startProcess, stopProcess, waitFor } from "../scripts/bench-lib.mjs";

const CALLS = Number(process.env.BENCH_RPC_CALLS ?? 40_000);
const IN_FLIGHT = 100;
const ROUNDS = 3;

function connectNodeTransport(baseUrl) {
  const sessionManager = new Http2SessionManager(baseUrl);
  return {
    transport: createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, sessionManager, acceptCompression: [] }),
    close: () => sessionManager.abort(),
  };
}

/** Calls per second and CPU per call of client and server, for `CALLS` calls after a warm-up. */
async function measure(kind) {
  const port = await freePort();
  const server = startProcess(`rpc-${kind}`, { KIND: kind, PORT: String(port) }, new URL("../scripts/bench-rpc-server.mjs", import.meta.url));
  const url = `http://127.0.0.1:${port}`;
  const rpc = kind === "ours" ? createRpcTransport(url, 10_000) : connectNodeTransport(url);
  const health = createClient(Health, rpc.transport);
  try {
    await waitFor(async () => (await health.check({})).status > 0, `rpc server ${kind}`);
    for (let index = 0; index < 2_000; index++) await health.check({});
    const serverBefore = cpuSeconds(server.pid);
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (sent < CALLS) {
          sent += 1;
          await health.check({});
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const client = process.cpuUsage(clientBefore);
    return { rate: CALLS / seconds, clientUs: (client.user + client.system) / CALLS, serverUs: ((cpuSeconds(server.pid) - serverBefore) * 1e6) / CALLS };
  } finally {
    rpc.close();
    await stopProcess(server);
  }
}

export default async function rpcBench({ report }) {
  const ours = [];
  const floor = [];
  for (let round = 0; round < ROUNDS; round++) {
    floor.push(await measure("connect-node"));
    ours.push(await measure("ours"));
    console.log(`rpc round ${round + 1}: ours ${Math.round(ours[round].rate)} calls/s, connect-node ${Math.round(floor[round].rate)} calls/s`);
  }
  const median = (runs, pick) => percentile(runs.map(pick), 50);
  report({
    name: `unary RPC, ${IN_FLIGHT} in flight (grpc-js both ends vs connect-node both ends)`,
    value: median(ours, (run) => run.rate),
    unit: "calls/s",
    floor: median(floor, (run) => run.rate),
  });
  report({ name: "  client CPU per call", value: median(ours, (run) => run.clientUs), unit: "µs", floor: median(floor, (run) => run.clientUs) });
  report({ name: "  server CPU per call", value: median(ours, (run) => run.serverUs), unit: "µs", floor: median(floor, (run) => run.serverUs) });
}
