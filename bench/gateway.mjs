// The gateway's own CPU per request, in process: its Koa app is driven with Node's IncomingMessage
// and ServerResponse over a socket that discards its writes, so no syscall, load generator or
// other process adds its noise. HTTP runs on these machines move by more than the few µs a change
// to the gateway's request path is worth. The messages service is an in-process router transport
// answering canned replies through the gateway's own batched calls. Each route is measured
// with 100 requests in flight, as in the HTTP bench (identical requests share one batch: the cost
// per request), and alone (a batch of one: what each downstream call costs the gateway, with the
// in-process transport's encoding of the reply, which the messages service pays in real life). The
// floor is (b) of performance-floors.md built the same way: Koa + @koa/router + an ApiKey check +
// a JSON body. The feed is measured twice: through the batched RPC, and answered from a page kept
// from an earlier poll (messages-client.ts).
import { randomBytes } from "node:crypto";
import { IncomingMessage, ServerResponse } from "node:http";
import { Duplex } from "node:stream";
import Router from "@koa/router";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import Koa from "koa";
import { commonV1, messagesV1 } from "@notify/proto";
import { connectRedis, createLogger } from "@notify/runtime";
import { percentile } from "../scripts/bench-lib.mjs";
import { floorKeyCheck, routeUnseenFloor } from "../scripts/floor-b.mjs";

const gateway = (file) => import(new URL(`../services/gateway/dist/${file}`, import.meta.url).href);
const { createApp } = await gateway("app.js");
const { routes } = await gateway("routes.js");
const { cacheKeyOf, hashKey } = await gateway("accounts.js");
const { countUnseenBatched, createFeedPages, feedPageBatched } = await gateway("messages-client.js");

const ROUNDS = 5;

class DiscardingSocket extends Duplex {
  _read() {}
  _write(_chunk, _encoding, callback) {
    callback();
  }
  _writev(_chunks, callback) {
    callback();
  }
}

/** One GET through `handler`, as Node's HTTP server would hand it over; resolves with the status. */
function get(handler, url, headers) {
  return new Promise((resolve) => {
    const socket = new DiscardingSocket();
    const request = new IncomingMessage(socket);
    request.method = "GET";
    request.url = url;
    request.headers = headers;
    request.push(null);
    const response = new ServerResponse(request);
    response.assignSocket(socket);
    response.on("finish", () => resolve(response.statusCode));
    handler(request, response);
  });
}

/** Median µs per request over the rounds after the first, `inFlight` requests at a time. */
async function cost(handler, url, headers, inFlight) {
  const status = await get(handler, url, headers);
  if (status !== 200) throw new Error(`${url}: ${status}`);
  const requests = inFlight === 1 ? 4_000 : inFlight * 400;
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (let sent = 0; sent < requests; sent += inFlight) {
      await Promise.all(Array.from({ length: inFlight }, () => get(handler, url, headers)));
    }
    if (round > 0) rounds.push(((performance.now() - started) * 1000) / requests);
  }
  return percentile(rounds, 50);
}

/** Floor (b) in process, as the floor server serves it. */
function floorApp(key) {
  const router = new Router();
  routeUnseenFloor(router, floorKeyCheck(key));
  return new Koa().use(router.routes()).callback();
}

/** A feed page as the messages service answers it: 20 in-app messages, their workflow, the subscriber. */
function feedPage() {
  const now = { seconds: BigInt(Math.floor(Date.now() / 1000)), nanos: 0 };
  const id = (n) => n.toString(16).padStart(24, "0");
  const messages = Array.from({ length: 20 }, (_, index) => ({
    id: id(index + 1),
    templateId: id(100),
    environmentId: id(101),
    messageTemplateId: id(102),
    organizationId: id(103),
    notificationId: id(200 + index),
    subscriberId: id(104),
    templateIdentifier: "welcome",
    createdAt: now,
    updatedAt: now,
    deliveredAt: [now],
    content: { case: "text", value: `Your order ${index} has shipped` },
    transactionId: `bench-${index}`,
    channel: commonV1.Channel.IN_APP,
    providerId: "novu",
    cta: { type: "redirect", url: "https://example.com/orders" },
    feedId: id(105),
    payloadJson: JSON.stringify({ orderId: index }),
  }));
  return { messages, hasMore: true, totalCount: 20, subscriber: { id: id(104), subscriberId: "bench-heavy", firstName: "Ada" } };
}

export default async function gatewayBench({ report }) {
  const redis = await connectRedis("redis://127.0.0.1:6379");
  const key = randomBytes(16).toString("hex");
  const cacheKey = cacheKeyOf(hashKey(key));
  try {
    // The key's scope as auth caches it, so no request reaches Postgres.
    await redis.set(cacheKey, JSON.stringify({ organizationId: "0".repeat(24), environmentId: "1".repeat(24) }), { EX: 600 });
    const page = feedPage();
    const transport = createRouterTransport(({ service }) => {
      service(messagesV1.MessageService, {
        batchCountMessages: ({ counts }) => ({ results: counts.map(() => ({ result: { case: "count", value: 5 } })) }),
        batchGetFeed: ({ feeds }) => ({ results: feeds.map(() => ({ result: { case: "feed", value: page } })) }),
      });
    });
    const log = createLogger("gateway", "warn");
    const appWith = (feedPages) => {
      const messages = createClient(messagesV1.MessageService, transport);
      const clients = { batched: { countUnseen: countUnseenBatched(messages), feedPage: feedPageBatched(messages, feedPages) } };
      return createApp({
        log,
        clients,
        routes,
        auth: { redis, pool: undefined, cacheSeconds: 60 },
        // Only the Inbox's routes and sessions read them; none of these requests does.
        accounts: { environments: undefined, sessions: undefined },
        idempotency: { redis, ttlSeconds: 60, log },
        outbound: { allowedCidrs: [] },
        readiness: {},
      }).callback();
    };
    const handler = appWith(undefined);
    // Feed pages kept as while NATS is followed (server.ts): every poll after the first is a hit.
    const feedPages = createFeedPages(32 * 2 ** 20);
    feedPages.setLive(true);
    const keepingHandler = appWith(feedPages);
    const headers = { host: "localhost", authorization: `ApiKey ${key}` };

    const unseenUrl = "/v1/subscribers/bench-heavy/notifications/unseen?limit=100";
    const feedUrl = "/v1/subscribers/bench-heavy/notifications/feed?limit=20";
    const floorHandler = floorApp(key);
    for (const inFlight of [100, 1]) {
      const floor = await cost(floorHandler, "/v1/subscribers/bench-heavy/notifications/unseen", headers, inFlight);
      const livez = await cost(handler, "/livez", { host: "localhost" }, inFlight);
      const unseen = await cost(handler, unseenUrl, headers, inFlight);
      const feed = await cost(handler, feedUrl, headers, inFlight);
      const keptFeed = await cost(keepingHandler, feedUrl, headers, inFlight);
      const per = `${inFlight} in flight, in process: CPU per request`;
      report({ name: `floor (b), ${per}`, value: floor, unit: "µs" });
      report({ name: `gateway /livez (no auth, no RPC), ${per}`, value: livez, unit: "µs", floor });
      report({ name: `gateway unseen count (auth, validation, coalesced RPC), ${per}`, value: unseen, unit: "µs", floor });
      report({ name: `gateway first feed page of 20 (the same, and the page rendered once per batch), ${per}`, value: feed, unit: "µs", floor });
      report({ name: `gateway first feed page of 20, the page kept from an earlier poll, ${per}`, value: keptFeed, unit: "µs", floor });
    }
  } finally {
    await redis.del(cacheKey);
    await redis.quit();
  }
}
