import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { connectNats } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSubscriber, newMessage, seeder } from "./messages-fixtures.js";
import { privateNats } from "./private-nats.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Fault tests: a worker killed mid-job and a NATS outage, on a NATS server of this file's own.

const workerEntry = fileURLToPath(new URL("../../worker/dist/server.js", import.meta.url));

const nats = await privateNats();

let stack: Stack;
let worker: ChildProcess | undefined;

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, [workerEntry], {
    env: { ...process.env, ...stack.workerEnv, WORKER_ACK_WAIT_MS: "2000", WORKER_PAGE_SIZE: "25", WORKER_CONCURRENCY: "2" },
    stdio: "ignore",
  });
  worker = child;
  return child;
}

beforeAll(async () => {
  await nats.start();
  stack = await startStack({ worker: false, natsUrl: nats.url });
});
afterAll(async () => {
  worker?.kill("SIGKILL");
  await stack?.stop();
  await nats.remove();
});

async function countFor(transactionId: string): Promise<{ total: number; distinct: number }> {
  let page = 0;
  const subscribers: string[] = [];
  for (;;) {
    const reply = await stack.request<Data<{ _subscriberId: string }[]> & { hasMore: boolean }>(
      "GET",
      `/v1/messages?transactionId=${transactionId}&limit=1000&page=${page}`,
    );
    subscribers.push(...reply.body.data.map((message) => message._subscriberId));
    if (!reply.body.hasMore) break;
    page += 1;
  }
  return { total: subscribers.length, distinct: new Set(subscribers).size };
}

describe("faults", () => {
  let workflow: string;
  beforeAll(async () => {
    const created = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", {
      name: "Fault note",
      active: true,
      steps: [{ template: { type: "in_app", content: "n" } }],
    });
    workflow = created.body.data.triggers[0].identifier;
  });

  it("a worker killed (SIGKILL) in the middle of a 1,000-recipient trigger leaves exactly one message per recipient after a restart", async () => {
    const members = Array.from({ length: 1000 }, (_, index) => `crowd-${index}`);
    for (let start = 0; start < members.length; start += 50) {
      await Promise.all(members.slice(start, start + 50).map((id) => stack.request("POST", "/v1/subscribers", { subscriberId: id })));
    }
    expect((await stack.request("POST", "/v1/topics/crowd/subscribers", { subscribers: members })).body.data.succeeded).toHaveLength(1000);

    const first = startWorker();
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: { type: "Topic", topicKey: "crowd" }, transactionId: "t-crash" });
    expect(reply.body.data.status).toBe("processed");
    await eventually(async () => ((await countFor("t-crash")).total >= 50 ? true : undefined), 20_000, 5);
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    const atKill = (await countFor("t-crash")).total;
    expect(atKill).toBeLessThan(1000); // it really was killed mid-job

    startWorker();
    await eventually(async () => ((await countFor("t-crash")).total >= 1000 ? true : undefined), 40_000);
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // a late duplicate would show up by now
    expect(await countFor("t-crash")).toEqual({ total: 1000, distinct: 1000 });
    worker?.kill("SIGTERM");
  }, 90_000);

  it("a trigger accepted while NATS is down is delivered once NATS is back", async () => {
    startWorker();
    await stack.request("POST", "/v1/subscribers", { subscriberId: "patient" });
    await nats.stop();
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "patient", transactionId: "t-outage" });
    expect(reply.status).toBe(201);
    expect(reply.body.data.status).toBe("processed");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await countFor("t-outage")).total).toBe(0);
    await nats.start();
    await eventually(async () => ((await countFor("t-outage")).total === 1 ? true : undefined), 40_000);
    worker?.kill("SIGTERM");
  }, 60_000);

  it("keeps no feed page while NATS is down, and keeps pages current again once it is back", async () => {
    const reader = await createSubscriber(stack, "outage-reader");
    const seed = seeder(stack, reader.scope);
    const feedLength = async () => (await stack.request("GET", "/v1/subscribers/outage-reader/notifications/feed")).body.data.length as number;
    try {
      expect(await feedLength()).toBe(0);
      await nats.stop();
      // Announced into the void: only a gateway that stopped keeping pages answers it at once.
      await seed.create([newMessage(reader)]);
      expect(await feedLength()).toBe(1);

      await nats.start();
      // Each process reconnects on its own schedule: wait until the messages service announces
      // again (a message it writes is seen announced here), then past the gateway's grace.
      const watcher = await connectNats(nats.url, "faults-test");
      try {
        let announced = false;
        watcher.subscribe(`notify.changes.feeds.${reader.scope.environmentId}`, { callback: () => (announced = true) });
        await watcher.flush();
        await eventually(
          async () => {
            await seed.create([newMessage(reader)]);
            return announced ? true : undefined;
          },
          30_000,
          250,
        );
      } finally {
        await watcher.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 2_500)); // the gateway trusts its connection again
      const before = await feedLength();
      expect(await feedLength()).toBe(before); // a page kept again
      // Written past the gateway, so announced to it over NATS: current as soon as that arrives,
      // long before the kept page would have expired.
      await seed.create([newMessage(reader)]);
      await eventually(async () => ((await feedLength()) === before + 1 ? true : undefined), 3_000, 20);
    } finally {
      seed.close();
      if (!nats.running) await nats.start();
    }
  }, 60_000);
});
