// Floor (b) of performance-floors.md, the pieces shared by the floor server (a process of its own,
// bench-floor-server.mjs) and the in-process gateway bench (bench/gateway.mjs).
import { createHash } from "node:crypto";

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

/** The ApiKey check: the header's key hashed and compared, as the gateway's auth does on a cache hit. */
export function floorKeyCheck(key) {
  const keyHash = sha256(key);
  return (ctx) => {
    if (sha256(ctx.get("authorization").slice(7)) !== keyHash) ctx.throw(401);
  };
}

/** The unseen-count GET on `router`, answered with a constant, or with `body`'s bytes as JSON. */
export function routeUnseenFloor(router, checkKey, body) {
  router.get("/v1/subscribers/:subscriberId/notifications/unseen", (ctx) => {
    checkKey(ctx);
    if (body) {
      ctx.type = "application/json";
      ctx.body = body;
    } else ctx.body = { data: { count: 100 } };
  });
}
