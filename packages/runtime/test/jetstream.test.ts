import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats, consumeJobs, createLogger, ensureJobStream, jobSubject, publishJobs, type JobStream, type NatsConnection } from "../src/index.js";
import { until } from "./until.js";

let nats: NatsConnection;
const suffix = randomBytes(4).toString("hex");
const stream: JobStream = { name: `TEST_JOBS_${suffix}`, subjectPrefix: `test.${suffix}.jobs` };
const log = createLogger("test", "silent");

beforeAll(async () => {
  nats = await connectNats("nats://127.0.0.1:4222", "runtime-test");
  await ensureJobStream(nats, stream);
  await ensureJobStream(nats, stream); // idempotent
});
afterAll(async () => {
  await (await nats.jetstreamManager()).streams.delete(stream.name).catch(() => undefined);
  await nats.drain();
});

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("job stream", () => {
  it("drops a re-publish with the same msgID and delivers each job once", async () => {
    await publishJobs(nats, [
      { subject: jobSubject(stream, "a"), data: encode("one"), msgID: "id-1" },
      { subject: jobSubject(stream, "a"), data: encode("two"), msgID: "id-2" },
    ]);
    await publishJobs(nats, [{ subject: jobSubject(stream, "a"), data: encode("one again"), msgID: "id-1" }]);
    const seen: string[] = [];
    const consumption = await consumeJobs(nats, {
      stream,
      durable: "once",
      concurrency: 4,
      maxDeliver: 3,
      backoffMs: [50],
      ackWaitMs: 5_000,
      log,
      handle: async (message) => {
        seen.push(decode(message.data));
      },
      deadLetter: async () => undefined,
    });
    await until(() => seen.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(consumption.active()).toBe(true);
    await consumption.stop();
    expect(consumption.active()).toBe(false);
    expect(seen.sort()).toEqual(["one", "two"]);
  });

  it("fails a publish no stream acknowledges, whatever else the batch held", async () => {
    const nowhere = { subject: `nowhere.${Date.now()}`, data: encode("lost"), msgID: "n-1" };
    await expect(publishJobs(nats, [{ subject: jobSubject(stream, "b"), data: encode("fine"), msgID: "n-0" }, nowhere])).rejects.toThrow(/503/);
    await expect(publishJobs(nats, [nowhere], 500)).rejects.toThrow();
  });

  it("fails at once on a closed connection", async () => {
    const closed = await connectNats("nats://127.0.0.1:4222", "closed");
    await closed.close();
    await expect(publishJobs(closed, [{ subject: jobSubject(stream, "c"), data: encode("late"), msgID: "c-1" }], 200)).rejects.toThrow(/CLOSED/);
  });

  it("retries a failing job with back-off and dead-letters it after max deliveries", async () => {
    const retryStream: JobStream = { name: `${stream.name}_R`, subjectPrefix: `test.${suffix}.retry` };
    await ensureJobStream(nats, retryStream);
    await publishJobs(nats, [{ subject: jobSubject(retryStream, "x"), data: encode("flaky"), msgID: "f-1" }]);
    await publishJobs(nats, [{ subject: jobSubject(retryStream, "x"), data: encode("broken"), msgID: "b-1" }]);
    const attempts = new Map<string, number>();
    const deadLettered: string[] = [];
    const done: string[] = [];
    const consumption = await consumeJobs(nats, {
      stream: retryStream,
      durable: "retrying",
      concurrency: 2,
      maxDeliver: 3,
      backoffMs: [30, 60],
      ackWaitMs: 5_000,
      log,
      handle: async (message) => {
        const body = decode(message.data);
        const attempt = (attempts.get(body) ?? 0) + 1;
        attempts.set(body, attempt);
        if (body === "broken" || attempt < 2) throw new Error(`fail ${body} ${attempt}`);
        done.push(body);
      },
      deadLetter: async (message) => {
        deadLettered.push(decode(message.data));
      },
    });
    await until(() => done.length === 1 && deadLettered.length === 1);
    await consumption.stop();
    expect(done).toEqual(["flaky"]);
    expect(attempts.get("flaky")).toBe(2);
    expect(attempts.get("broken")).toBe(3);
    expect(deadLettered).toEqual(["broken"]);
    await (await nats.jetstreamManager()).streams.delete(retryStream.name);
  });

  it("dead-letters a job at its first failure when the failure is permanent", async () => {
    const refusingStream: JobStream = { name: `${stream.name}_P`, subjectPrefix: `test.${suffix}.permanent` };
    await ensureJobStream(nats, refusingStream);
    await publishJobs(nats, [
      { subject: jobSubject(refusingStream, "x"), data: encode("refused"), msgID: "p-1" },
      { subject: jobSubject(refusingStream, "x"), data: encode("fine"), msgID: "p-2" },
    ]);
    const attempts = new Map<string, number>();
    const deadLettered: string[] = [];
    const done: string[] = [];
    const consumption = await consumeJobs(nats, {
      stream: refusingStream,
      durable: "refusing",
      concurrency: 2,
      maxDeliver: 5,
      backoffMs: [30],
      ackWaitMs: 5_000,
      log,
      handle: async (message) => {
        const body = decode(message.data);
        attempts.set(body, (attempts.get(body) ?? 0) + 1);
        if (body === "refused") throw Object.assign(new Error("invalid data"), { permanent: true });
        done.push(body);
      },
      deadLetter: async (message) => {
        deadLettered.push(decode(message.data));
      },
      isPermanent: (error) => (error as { permanent?: boolean }).permanent === true,
    });
    await until(() => done.length === 1 && deadLettered.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 200)); // no redelivery follows
    await consumption.stop();
    expect(attempts).toEqual(
      new Map([
        ["refused", 1],
        ["fine", 1],
      ]),
    );
    expect(deadLettered).toEqual(["refused"]);
    await (await nats.jetstreamManager()).streams.delete(refusingStream.name);
  });

  it("hands waiting jobs over as batches and falls back to one by one when a batch fails", async () => {
    const batchStream: JobStream = { name: `${stream.name}_B`, subjectPrefix: `test.${suffix}.batch` };
    await ensureJobStream(nats, batchStream);
    for (let index = 0; index < 20; index += 1) {
      await publishJobs(nats, [{ subject: jobSubject(batchStream, "x"), data: encode(index === 7 ? "poison" : `job-${index}`), msgID: `b-${index}` }]);
    }
    const batchSizes: number[] = [];
    const done: string[] = [];
    const deadLettered: string[] = [];
    const consumption = await consumeJobs(nats, {
      stream: batchStream,
      durable: "batching",
      concurrency: 2,
      maxBatch: 50,
      maxDeliver: 2,
      backoffMs: [20],
      ackWaitMs: 5_000,
      log,
      handle: async (message) => {
        const body = decode(message.data);
        if (body === "poison") throw new Error("poison");
        done.push(body);
      },
      handleBatch: async (batch) => {
        batchSizes.push(batch.length);
        const bodies = batch.map((message) => decode(message.data));
        if (bodies.includes("poison")) throw new Error("a poison job in the batch");
        done.push(...bodies);
      },
      deadLetter: async (message) => {
        deadLettered.push(decode(message.data));
      },
    });
    await until(() => new Set(done).size === 19 && deadLettered.length === 1);
    await consumption.stop();
    expect(Math.max(...batchSizes)).toBeGreaterThan(1);
    expect(new Set(done).size).toBe(19);
    expect(deadLettered).toEqual(["poison"]);
    await (await nats.jetstreamManager()).streams.delete(batchStream.name);
  });

  it("keeps a job that runs longer than its first back-off to one delivery", async () => {
    const longStream: JobStream = { name: `${stream.name}_L`, subjectPrefix: `test.${suffix}.long` };
    await ensureJobStream(nats, longStream);
    await publishJobs(nats, [{ subject: jobSubject(longStream, "x"), data: encode("long"), msgID: "l-1" }]);
    let deliveries = 0;
    let finished = false;
    const consumption = await consumeJobs(nats, {
      stream: longStream,
      durable: "long",
      concurrency: 1,
      maxDeliver: 5,
      backoffMs: [100],
      ackWaitMs: 1_000,
      log,
      handle: async () => {
        deliveries += 1;
        // Longer than the back-off and than the ack wait: only working() keeps the delivery.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        finished = true;
      },
      deadLetter: async () => undefined,
    });
    await until(() => finished);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await consumption.stop();
    expect(deliveries).toBe(1);
    const info = await (await nats.jetstreamManager()).consumers.info(longStream.name, "long");
    expect(info.config.ack_wait).toBe(1_000_000_000);
    await (await nats.jetstreamManager()).streams.delete(longStream.name);
  });
  it("takes new jobs while many handed back for later wait to be due", async () => {
    const laterStream: JobStream = { name: `${stream.name}_D`, subjectPrefix: `test.${suffix}.deferred` };
    await ensureJobStream(nats, laterStream);
    // More jobs waiting for later than the consumer's bound on unacknowledged jobs would hold.
    const waiting = 200;
    await publishJobs(
      nats,
      Array.from({ length: waiting }, (_, index) => ({ subject: jobSubject(laterStream, "x"), data: encode(`later-${index}`), msgID: `d-${index}` })),
    );
    const deferred = new Set<string>();
    const done: string[] = [];
    const consumption = await consumeJobs(nats, {
      stream: laterStream,
      durable: "deferring",
      concurrency: 2,
      maxAckPending: -1,
      maxDeliver: -1,
      backoffMs: [100],
      ackWaitMs: 5_000,
      log,
      handle: async (message) => {
        const body = decode(message.data);
        if (body.startsWith("later-")) {
          deferred.add(body);
          return { retryInMs: 60_000 };
        }
        done.push(body);
        return undefined;
      },
      deadLetter: async () => undefined,
    });
    await until(() => deferred.size === waiting);
    await publishJobs(nats, [{ subject: jobSubject(laterStream, "x"), data: encode("now"), msgID: "d-now" }]);
    await until(() => done.length === 1, 5_000);
    await consumption.stop();
    expect(done).toEqual(["now"]);
    await (await nats.jetstreamManager()).streams.delete(laterStream.name);
  });
});
