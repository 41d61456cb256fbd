import { once } from "node:events";
import { eventually } from "@notify/testing";
import { createPool } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { startProcessStack, type ProcessStack } from "./process-stack.js";

let stack: ProcessStack;
let workflow: string;
beforeAll(async () => {
  stack = await startProcessStack();
  workflow = await createWorkflow(stack, "Shutdown", [{ template: { type: "in_app", content: "Hello" } }]);
  await stack.request("POST", "/v1/subscribers", { subscriberId: "ada" });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

/** How many in-app messages each transaction starting with `prefix` has, read from the messages service's tables. */
async function messagesByTransaction(prefix: string): Promise<Map<string, number>> {
  const pool = createPool(stack.database.url, 1);
  try {
    const { rows } = await pool.query<{ transaction_id: string; n: number }>(
      "SELECT transaction_id, count(*)::int AS n FROM messages.messages WHERE channel = 'in_app' AND starts_with(transaction_id, $1) GROUP BY transaction_id",
      [prefix],
    );
    return new Map(rows.map((row) => [row.transaction_id, row.n]));
  } finally {
    await pool.end();
  }
}

const trigger = (url: string, transactionId: string) =>
  fetch(`${url}/v1/events/trigger`, {
    method: "POST",
    headers: { authorization: `ApiKey ${stack.key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: workflow, to: "ada", transactionId }),
  });

describe("graceful shutdown (SIGTERM)", () => {
  it("a gateway under load reports not ready, keeps serving through the drain, finishes what it took and exits: no request fails", async () => {
    const leaving = await stack.startGatewayReplica({ SHUTDOWN_DRAIN_MS: "1500" });
    // A load balancer's view: the leaving replica while its readiness answers 200, the other after.
    let target = leaving.url;
    const watching = setInterval(() => {
      void fetch(`${leaving.url}/readyz`)
        .then((reply) => reply.status)
        .catch(() => 0)
        .then((status) => {
          if (status !== 200) target = stack.url;
        });
    }, 100);
    const statuses: number[] = [];
    const failures: string[] = [];
    let servedByLeavingAfterSignal = 0;
    let signalled = false;
    let done = false;
    let sent = 0;
    const worker = async () => {
      while (!done) {
        const url = target;
        try {
          const reply = await trigger(url, `t-gw-${sent++}`);
          await reply.arrayBuffer();
          statuses.push(reply.status);
          if (signalled && url === leaving.url) servedByLeavingAfterSignal += 1;
        } catch (error) {
          failures.push(String((error as { cause?: unknown }).cause ?? error));
        }
      }
    };
    const load = Array.from({ length: 8 }, worker);
    await eventually(async () => (statuses.length >= 50 ? true : undefined), 30_000);
    const exited = once(leaving.child, "exit");
    leaving.child.kill("SIGTERM");
    signalled = true;
    const [code] = await exited;
    const answeredAtExit = statuses.length;
    await eventually(async () => (statuses.length >= answeredAtExit + 50 ? true : undefined), 30_000);
    done = true;
    await Promise.all(load);
    clearInterval(watching);

    expect(code).toBe(0);
    expect(failures).toEqual([]);
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    // The drain served requests after the signal, until the balancer stopped sending them.
    expect(servedByLeavingAfterSignal).toBeGreaterThan(0);
    expect(target).toBe(stack.url);
  }, 120_000);

  it("a worker under load finishes or hands back the jobs it holds and exits; a new worker does the rest: no job lost, none done twice", async () => {
    // The gateway test's triggers leave messages too: count this test's only.
    const prefix = "t-worker-";
    const transactions = Array.from({ length: 300 }, (_, index) => `${prefix}${index}`);
    const accepting = (async () => {
      for (let start = 0; start < transactions.length; start += 20) {
        const replies = await Promise.all(transactions.slice(start, start + 20).map((transactionId) => trigger(stack.url, transactionId)));
        for (const reply of replies) expect(reply.status).toBe(201);
      }
    })();
    // Stopped while it works: some messages written, not all.
    await eventually(async () => ((await messagesByTransaction(prefix)).size > 10 ? true : undefined), 60_000, 20);
    const exited = once(stack.children.worker, "exit");
    stack.children.worker.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
    await accepting;
    const atStop = (await messagesByTransaction(prefix)).size;
    expect(atStop).toBeLessThan(transactions.length);

    await stack.restart("worker");
    const written = await eventually(async () => {
      const counts = await messagesByTransaction(prefix);
      return transactions.every((transactionId) => counts.has(transactionId)) ? counts : undefined;
    }, 90_000);
    expect(transactions.filter((transactionId) => written.get(transactionId) !== 1)).toEqual([]);
  }, 180_000);
});
