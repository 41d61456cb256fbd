import { createPool, type Pool } from "@notify/runtime";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSubscriber, seeder } from "./messages-fixtures.js";
import { startStack, type Stack } from "./stack.js";

// Every call the gateway makes has a deadline: a request whose downstream work hangs is answered,
// not left open. Here the hang is real: the message's row is locked by another transaction.

const DEADLINE_MS = 1_500;
let stack: Stack;
let pool: Pool;

beforeAll(async () => {
  stack = await startStack({ worker: false, gatewayEnv: { RPC_TIMEOUT_MS: String(DEADLINE_MS) } });
  pool = createPool(stack.database.url, 1);
});
afterAll(async () => {
  await pool?.end();
  await stack?.stop();
});

it("answers 503 with Retry-After when a call outlives its deadline, and serves the request once the lock is gone", async () => {
  const ada = await createSubscriber(stack, "ada");
  const seed = seeder(stack, ada.scope);
  const [messageId] = await seed.inApp(ada, 1);
  seed.close();
  const markAs = () => stack.request("POST", `/v1/subscribers/ada/messages/mark-as`, { messageId, markAs: "read" });

  const locker = await pool.connect();
  try {
    await locker.query("BEGIN");
    await locker.query("SELECT 1 FROM messages.messages WHERE id = $1 FOR UPDATE", [messageId]);
    const started = performance.now();
    const stalled = await markAs();
    const waited = performance.now() - started;
    expect(stalled.status).toBe(503);
    expect(stalled.headers.get("retry-after")).toBe("1");
    expect(stalled.body).toMatchObject({ statusCode: 503 });
    expect(waited).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(waited).toBeLessThan(DEADLINE_MS + 5_000);
  } finally {
    await locker.query("ROLLBACK");
    locker.release();
  }

  const served = await markAs();
  expect(served.status).toBe(201);
  expect(served.body.data[0]).toMatchObject({ _id: messageId, read: true, seen: true });
});

it("lets mark-all, whose work grows with the inbox, outlast the default deadline", async () => {
  const bo = await createSubscriber(stack, "bo");
  const seed = seeder(stack, bo.scope);
  const [messageId] = await seed.inApp(bo, 1);
  seed.close();

  const locker = await pool.connect();
  await locker.query("BEGIN");
  await locker.query("SELECT 1 FROM messages.messages WHERE id = $1 FOR UPDATE", [messageId]);
  const unlocked = new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + 1_000)).then(() => locker.query("ROLLBACK"));
  try {
    const started = performance.now();
    const marked = await stack.request("POST", `/v1/subscribers/bo/messages/mark-all`, { markAs: "read" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(DEADLINE_MS + 900);
    expect(marked.status).toBe(201);
    expect(marked.body).toEqual({ data: 1 });
  } finally {
    await unlocked;
    locker.release();
  }
});
