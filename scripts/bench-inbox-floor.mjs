// The floor of `pnpm bench inbox` (1), a process of its own: GET /v1/inbox/notifications answered
// with no hop. Koa + router, the Bearer session token verified as the gateway does (jose, HS256,
// audience widget_user), the messages service's own list statement (store.selectInboxPage), its
// row mapping and the gateway's InboxNotification mapping, the subscribers and the workflow kept
// in memory as the services keep their copies.
// Env: PORT, DATABASE_URL, ENVIRONMENT_ID, SECRET (hex HS256 key of the floor's tokens), WORKFLOW (JSON).
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import Router from "@koa/router";
import Koa from "koa";
import { createPool } from "@notify/runtime";

const { PORT, DATABASE_URL, ENVIRONMENT_ID, SECRET, WORKFLOW } = process.env;

const fromGateway = createRequire(new URL("../services/gateway/package.json", import.meta.url));
const { jwtVerify } = await import(pathToFileURL(fromGateway.resolve("jose")).href);
const store = await import(new URL("../services/messages/dist/store.js", import.meta.url).href);
const { messageFromRow } = await import(new URL("../services/messages/dist/mapping.js", import.meta.url).href);
const { inboxPageToJson } = await import(new URL("../services/gateway/dist/mappers/inbox.js", import.meta.url).href);

const pool = createPool(DATABASE_URL, 10);
const key = Buffer.from(SECRET, "hex");
const workflow = JSON.parse(WORKFLOW);
const EVERY_MESSAGE = {
  tagGroups: [],
  read: null,
  seen: null,
  archived: null,
  snoozed: null,
  severities: null,
  dataGroups: [],
  createdGte: null,
  createdLte: null,
  contextKeys: null,
  feedId: null,
};

const subscribers = new Map();
const { rows } = await pool.query("SELECT id, subscriber_id, first_name, last_name, email FROM subscribers.subscribers WHERE environment_id = $1", [
  ENVIRONMENT_ID,
]);
for (const row of rows) {
  subscribers.set(row.id, { id: row.id, subscriberId: row.subscriber_id, firstName: row.first_name ?? undefined, lastName: row.last_name ?? undefined });
}

const router = new Router();
router.get("/v1/inbox/notifications", async (ctx) => {
  let claims;
  try {
    ({ payload: claims } = await jwtVerify(ctx.get("authorization").slice(7), key, { algorithms: ["HS256"], audience: "widget_user" }));
  } catch {
    ctx.throw(401);
  }
  const limit = Math.min(100, Number(ctx.query.limit ?? 10));
  const page = await store.selectInboxPage(pool, ENVIRONMENT_ID, claims._id, { filter: EVERY_MESSAGE, after: null, offset: 0, limit });
  const reply = {
    messages: page.slice(0, limit).map(messageFromRow),
    hasMore: page.length > limit,
    subscriber: subscribers.get(claims._id),
    workflows: [workflow],
  };
  ctx.body = inboxPageToJson(reply, {});
});

const app = new Koa();
app.use(router.routes());
const server = app.listen(Number(PORT), "127.0.0.1");
process.once("SIGTERM", () => server.close(() => void pool.end()));
