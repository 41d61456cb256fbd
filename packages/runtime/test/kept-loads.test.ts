import { describe, expect, it, vi } from "vitest";
import { keptLoads } from "../src/kept-loads.js";

describe("keptLoads", () => {
  it("shares one load between the callers of a key, also while it is under way", async () => {
    const kept = keptLoads<string>({ max: 10, ttlMs: 60_000 });
    let release!: (value: string) => void;
    const load = vi.fn(() => new Promise<string>((resolve) => (release = resolve)));
    const first = kept("a", load);
    const second = kept("a", load);
    release("pem");
    expect(await Promise.all([first, second])).toEqual(["pem", "pem"]);
    expect(await kept("a", load)).toBe("pem");
    expect(load).toHaveBeenCalledTimes(1);
  });

  it("drops a failed load at once: the next caller loads again", async () => {
    const kept = keptLoads<string>({ max: 10, ttlMs: 60_000 });
    await expect(kept("a", () => Promise.reject(new Error("unreachable")))).rejects.toThrow("unreachable");
    expect(await kept("a", async () => "second")).toBe("second");
  });

  it("loads a key again once its answer is older than the TTL", async () => {
    const kept = keptLoads<string>({ max: 10, ttlMs: 200 });
    expect(await kept("a", async () => "old")).toBe("old");
    expect(await kept("a", async () => "new")).toBe("old");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await kept("a", async () => "new")).toBe("new");
  });

  it("keeps at most max keys, the least recently used going first, and counts hits and misses", async () => {
    const counts = { hit: 0, miss: 0 };
    const kept = keptLoads<string>({ max: 2, ttlMs: 60_000, lookups: { hit: () => counts.hit++, miss: () => counts.miss++ } });
    await kept("a", async () => "a1");
    await kept("b", async () => "b1");
    await kept("a", async () => "a2");
    await kept("c", async () => "c1");
    expect(await kept("a", async () => "a3")).toBe("a1");
    expect(await kept("b", async () => "b2")).toBe("b2");
    expect(counts).toEqual({ hit: 2, miss: 4 });
  });
});
