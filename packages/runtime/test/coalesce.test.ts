import { describe, expect, it } from "vitest";
import { createCoalescer } from "../src/coalesce.js";

describe("createCoalescer", () => {
  it("sends concurrent calls with one key as one batch and answers each caller its own item", async () => {
    const batches: [string, number[]][] = [];
    const coalescer = createCoalescer<number, number>({
      maxBatch: 100,
      maxInFlight: 1,
      run: async (key, items) => {
        batches.push([key, items]);
        return items.map((item) => item * 10);
      },
    });
    const answers = await Promise.all([1, 2, 3].map((item) => coalescer.submit("env-a", item)));
    expect(answers).toEqual([10, 20, 30]);
    expect(batches).toEqual([["env-a", [1, 2, 3]]]);
  });

  it("keeps keys apart and flushes as soon as a batch is full", async () => {
    const batches: [string, number[]][] = [];
    const coalescer = createCoalescer<number, number>({
      maxBatch: 2,
      maxInFlight: 1,
      run: async (key, items) => {
        batches.push([key, items]);
        return items;
      },
    });
    const started = Date.now();
    await Promise.all([coalescer.submit("a", 1), coalescer.submit("b", 2), coalescer.submit("a", 3), coalescer.submit("b", 4)]);
    expect(Date.now() - started).toBeLessThan(500);
    expect(batches).toEqual([
      ["a", [1, 3]],
      ["b", [2, 4]],
    ]);
  });

  it("fails every caller of a batch whose run fails, and not the callers of other batches", async () => {
    const coalescer = createCoalescer<string, string>({
      maxBatch: 10,
      maxInFlight: 1,
      run: async (key, items) => {
        if (key === "down") throw new Error("unavailable");
        return items;
      },
    });
    const results = await Promise.allSettled([coalescer.submit("down", "x"), coalescer.submit("down", "y"), coalescer.submit("up", "z")]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "fulfilled"]);
  });

  it("queues calls while the key's batches are in flight and sends them together when one returns", async () => {
    const batches: number[][] = [];
    const release: (() => void)[] = [];
    const coalescer = createCoalescer<number, number>({
      maxBatch: 100,
      maxInFlight: 1,
      run: async (_, items) => {
        batches.push(items);
        await new Promise<void>((resolve) => release.push(resolve));
        return items;
      },
    });
    const first = coalescer.submit("a", 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    // The first batch is under way: these wait for it rather than going one by one.
    const later = [2, 3, 4].map((item) => coalescer.submit("a", item));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    release.shift()!();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    release.shift()!();
    expect(await Promise.all(later)).toEqual([2, 3, 4]);
  });
});
