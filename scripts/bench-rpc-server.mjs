// The RPC servers bench/rpc.mjs compares, each a process of its own, serving the gRPC health check:
//   KIND=ours          serveRpc of @notify/runtime (grpc-js);
//   KIND=connect-node  connect-node's adapter on node:http2 (Connect, gRPC and gRPC-web), the
//                      transport the services used before (DESIGN §5's floor (c)).
// Env: KIND, PORT. SIGTERM stops it.
import * as http2 from "node:http2";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@notify/proto";
import { createLogger, serveRpc } from "@notify/runtime";

const { KIND, PORT } = process.env;
let stop;
if (KIND === "ours") {
  const server = await serveRpc({ host: "127.0.0.1", port: Number(PORT), log: createLogger("bench-rpc", "silent"), routes: () => undefined });
  stop = () => server.close();
} else {
  const handler = connectNodeAdapter({
    acceptCompression: [],
    routes: (router) => router.service(Health, { check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }) }),
  });
  const server = http2.createServer(handler).listen(Number(PORT), "127.0.0.1");
  stop = () => new Promise((resolve) => server.close(resolve));
}
process.once("SIGTERM", async () => {
  await stop();
  process.exit(0);
});
