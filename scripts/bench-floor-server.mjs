// The floors of performance-floors.md that are servers, run as a process of their own like the
// services they are compared with (a floor sharing the load generator's event loop would
// understate itself):
//   FLOOR=http        floor (b): Koa + router + ApiKey check + JSON body, answering an unseen
//                     count GET with a constant (no RPC, no query); with BODY_FILE, that file's
//                     bytes instead (a response as large as the one it is compared with);
//   FLOOR=acceptance  floor (g): (b) for a trigger POST + Redis SET NX EX + JetStream
//                     publish-with-ack, no RPC hop;
//   FLOOR=e2e         the same HTTP → JetStream path, plus a pull consumer writing each fetched
//                     batch with one multi-row INSERT (trigger → row committed).
// Env: FLOOR, PORT, BODY_FILE (http), STREAM (acceptance, e2e), DATABASE_URL (e2e). SIGTERM stops it and deletes its stream.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import Router from "@koa/router";
import Koa from "koa";
import { AckPolicy, connect, nanos, RetentionPolicy, StorageType } from "nats";
import getRawBody from "raw-body";
import { createClient } from "redis";
import { createPool } from "@notify/runtime";
import { floorKeyCheck, routeUnseenFloor } from "./floor-b.mjs";

const { FLOOR, PORT, BODY_FILE, STREAM, DATABASE_URL } = process.env;

const checkKey = floorKeyCheck("floor-key");

/** Routes of the trigger floors on `router`; returns what stops them. */
async function triggerFloor(router) {
  const withConsumer = FLOOR === "e2e";
  const nats = await connect({ servers: "127.0.0.1:4222" });
  const manager = await nats.jetstreamManager();
  await manager.streams.add({ name: STREAM, subjects: [`${STREAM}.>`], retention: RetentionPolicy.Workqueue, storage: StorageType.File });
  const js = nats.jetstream();
  const redis = createClient({ url: "redis://127.0.0.1:6379" });
  await redis.connect();

  router.post("/v1/events/trigger", async (ctx) => {
    checkKey(ctx);
    const body = JSON.parse((await getRawBody(ctx.req, { limit: "5mb" })).toString());
    const transactionId = body.transactionId ?? randomBytes(8).toString("hex");
    if (!withConsumer) await redis.set(`bench:floor:${transactionId}`, "1", { NX: true, EX: 60 });
    await js.publish(`${STREAM}.trigger`, new TextEncoder().encode(JSON.stringify({ ...body, transactionId })), { msgID: transactionId });
    ctx.status = 201;
    ctx.body = { data: { acknowledged: true, status: "processed", transactionId } };
  });

  let running = true;
  let consuming = Promise.resolve();
  const pool = withConsumer ? createPool(DATABASE_URL, 4) : undefined;
  if (pool) {
    await pool.query(
      "CREATE TABLE IF NOT EXISTS bench_floor_rows (transaction_id text PRIMARY KEY, sent_at double precision, committed_at timestamptz DEFAULT clock_timestamp())",
    );
    await manager.consumers.add(STREAM, { durable_name: "floor", ack_policy: AckPolicy.Explicit, ack_wait: nanos(30_000) });
    const consumer = await js.consumers.get(STREAM, "floor");
    consuming = (async () => {
      while (running) {
        const batch = await consumer.fetch({ max_messages: 256, expires: 1000 });
        const rows = [];
        for await (const message of batch) rows.push([message, JSON.parse(new TextDecoder().decode(message.data))]);
        if (rows.length === 0) continue;
        await pool.query("INSERT INTO bench_floor_rows (transaction_id, sent_at) SELECT * FROM unnest($1::text[], $2::float8[]) ON CONFLICT DO NOTHING", [
          rows.map(([, body]) => body.transactionId),
          rows.map(([, body]) => body.payload.sentAt),
        ]);
        for (const [message] of rows) message.ack();
      }
    })();
  }
  return {
    async stopConsuming() {
      running = false;
      await consuming;
    },
    async close() {
      await manager.streams.delete(STREAM);
      await redis.quit();
      await nats.close();
      await pool?.end();
    },
  };
}

const router = new Router();
const triggers = FLOOR === "http" ? undefined : await triggerFloor(router);
if (FLOOR === "http") routeUnseenFloor(router, checkKey, BODY_FILE ? readFileSync(BODY_FILE) : undefined);
const app = new Koa();
app.silent = true;
app.use(router.routes());
const server = app.listen(Number(PORT), "127.0.0.1");

process.once("SIGTERM", async () => {
  await triggers?.stopConsuming();
  // Requests the load generator left in flight finish before their stream goes.
  await new Promise((resolve) => {
    server.close(resolve);
    server.closeIdleConnections();
  });
  await triggers?.close();
  process.exit(0);
});
