import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { announcer, connectNats, createFollowedCache, createLogger, EVERY_KEY, followChanges, scrapeMetrics, type NatsConnection } from "../src/index.js";
import { until } from "./until.js";

const log = createLogger("test", "silent");
const subscriber = (name: string) => ({ name });

describe("createFollowedCache", () => {
  const live = () => {
    const cache = createFollowedCache<{ name: string }>({ name: "test", max: 100, ttlMs: 60_000 });
    cache.setLive(true);
    return cache;
  };

  it("keeps nothing until it is live, and forgets everything when it stops being live", () => {
    const cache = createFollowedCache<{ name: string }>({ name: "test", max: 100, ttlMs: 60_000 });
    cache.set(cache.ticket(), "env", "ada", subscriber("Ada"));
    expect(cache.get("env", "ada")).toBeUndefined();
    cache.setLive(true);
    cache.set(cache.ticket(), "env", "ada", subscriber("Ada"));
    expect(cache.get("env", "ada")).toEqual(subscriber("Ada"));
    expect(cache.get("other-env", "ada")).toBeUndefined();
    cache.setLive(false);
    expect(cache.get("env", "ada")).toBeUndefined();
    cache.setLive(true);
    expect(cache.get("env", "ada")).toBeUndefined();
  });

  it("drops a copy whose change is announced", () => {
    const cache = live();
    cache.set(cache.ticket(), "env", "ada", subscriber("Ada"));
    cache.set(cache.ticket(), "env", "bob", subscriber("Bob"));
    cache.forget("env", ["ada"]);
    expect(cache.get("env", "ada")).toBeUndefined();
    expect(cache.get("env", "bob")).toEqual(subscriber("Bob"));
  });

  it("does not keep a read that raced a change of the same key", () => {
    const cache = live();
    const before = cache.ticket();
    cache.forget("env", ["ada"]);
    cache.set(before, "env", "ada", subscriber("old Ada"));
    expect(cache.get("env", "ada")).toBeUndefined();
    // Another key's change does not matter; a read begun after the change is kept.
    cache.set(before, "env", "bob", subscriber("Bob"));
    expect(cache.get("env", "bob")).toEqual(subscriber("Bob"));
    cache.set(cache.ticket(), "env", "ada", subscriber("new Ada"));
    expect(cache.get("env", "ada")).toEqual(subscriber("new Ada"));
  });

  it("tells whether a key changed since a ticket (its environment's change counts; not live tells nothing)", () => {
    const cache = live();
    const before = cache.ticket();
    expect(cache.unchangedSince(before, "env", "ada")).toBe(true);
    cache.forget("env", ["bob"]);
    expect(cache.unchangedSince(before, "env", "ada")).toBe(true);
    cache.forget("env", ["ada"]);
    expect(cache.unchangedSince(before, "env", "ada")).toBe(false);
    const after = cache.ticket();
    cache.forget("env", EVERY_KEY);
    expect(cache.unchangedSince(after, "env", "cy")).toBe(false);
    const latest = cache.ticket();
    expect(cache.unchangedSince(latest, "env", "cy")).toBe(true);
    cache.setLive(false);
    expect(cache.unchangedSince(latest, "env", "cy")).toBe(false);
  });

  it("reads through: a kept copy spares the read, and a read that raced a change answers but is not kept", async () => {
    const cache = live();
    let reads = 0;
    const read = (found: { name: string } | undefined) => async () => {
      reads += 1;
      return found;
    };
    expect(await cache.readThrough("env", "ada", read(subscriber("Ada")))).toEqual(subscriber("Ada"));
    expect(await cache.readThrough("env", "ada", read(subscriber("other")))).toEqual(subscriber("Ada"));
    expect(reads).toBe(1);
    expect(await cache.readThrough("env", "nobody", read(undefined))).toBeUndefined();
    const raced = await cache.readThrough("env", "bob", async () => {
      cache.forget("env", ["bob"]);
      return subscriber("old Bob");
    });
    expect(raced).toEqual(subscriber("old Bob"));
    expect(cache.get("env", "bob")).toBeUndefined();
  });

  it("does not keep a read begun before the announcements were lost and found again", () => {
    const cache = live();
    const before = cache.ticket();
    cache.setLive(false);
    cache.setLive(true);
    cache.set(before, "env", "ada", subscriber("Ada"));
    expect(cache.get("env", "ada")).toBeUndefined();
  });

  it("does not trust reads older than the changes it still remembers", () => {
    const cache = createFollowedCache<{ name: string }>({ name: "test", max: 2, ttlMs: 60_000 });
    cache.setLive(true);
    const before = cache.ticket();
    cache.forget("env", ["ada"]);
    cache.forget("env", ["bob", "cy"]); // evicts the memory of ada's change
    cache.set(before, "env", "ada", subscriber("old Ada"));
    expect(cache.get("env", "ada")).toBeUndefined();
  });

  it("counts each lookup as a hit or a miss under its name, reads through included", async () => {
    const lookups = async (result: string) => {
      const series = `notify_cache_lookups_total{cache="counted",result="${result}"} `;
      const line = (await scrapeMetrics()).body.split("\n").find((candidate) => candidate.startsWith(series));
      return line === undefined ? undefined : Number(line.slice(series.length));
    };
    const cache = createFollowedCache<{ name: string }>({ name: "counted", max: 100, ttlMs: 60_000 });
    expect([await lookups("hit"), await lookups("miss")]).toEqual([0, 0]);
    cache.set(cache.ticket(), "env", "ada", subscriber("Ada"));
    expect(cache.get("env", "ada")).toBeUndefined(); // not live: a miss
    cache.setLive(true);
    cache.set(cache.ticket(), "env", "ada", subscriber("Ada"));
    expect(cache.get("env", "ada")).toEqual(subscriber("Ada"));
    expect(await cache.readThrough("env", "bob", async () => subscriber("Bob"))).toEqual(subscriber("Bob"));
    expect(await cache.readThrough("env", "bob", async () => undefined)).toEqual(subscriber("Bob"));
    expect([await lookups("hit"), await lookups("miss")]).toEqual([2, 2]);
  });
});

describe("createFollowedCache with several copies of a key", () => {
  const live = (options: { maxSize?: number; sizeOf?: (value: { name: string }) => number } = {}) => {
    const cache = createFollowedCache<{ name: string }>({ name: "test", max: 100, ttlMs: 60_000, ...options });
    cache.setLive(true);
    return cache;
  };

  it("drops every part of a key whose change is announced, and nothing else", () => {
    const cache = live();
    cache.set(cache.ticket(), "env", "ada", subscriber("page 1"), "1");
    cache.set(cache.ticket(), "env", "ada", subscriber("page 2"), "2");
    cache.set(cache.ticket(), "env", "bob", subscriber("page 1"), "1");
    expect(cache.get("env", "ada", "2")).toEqual(subscriber("page 2"));
    expect(cache.get("env", "ada")).toBeUndefined();
    cache.forget("env", ["ada"]);
    expect(cache.get("env", "ada", "1")).toBeUndefined();
    expect(cache.get("env", "ada", "2")).toBeUndefined();
    expect(cache.get("env", "bob", "1")).toEqual(subscriber("page 1"));
  });

  it("drops every copy of the environment when EVERY_KEY changed, and keeps no read that raced it", () => {
    const cache = live();
    cache.set(cache.ticket(), "env", "ada", subscriber("Ada"), "1");
    cache.set(cache.ticket(), "env", "bob", subscriber("Bob"));
    cache.set(cache.ticket(), "other-env", "ada", subscriber("Ada elsewhere"), "1");
    const before = cache.ticket();
    cache.forget("env", EVERY_KEY);
    expect(cache.get("env", "ada", "1")).toBeUndefined();
    expect(cache.get("env", "bob")).toBeUndefined();
    expect(cache.get("other-env", "ada", "1")).toEqual(subscriber("Ada elsewhere"));
    cache.set(before, "env", "cy", subscriber("old Cy"));
    expect(cache.get("env", "cy")).toBeUndefined();
    cache.set(cache.ticket(), "env", "cy", subscriber("Cy"));
    expect(cache.get("env", "cy")).toEqual(subscriber("Cy"));
  });

  it("keeps the copies' sizes under maxSize, the least recently used going first", () => {
    const cache = live({ maxSize: 100, sizeOf: (value) => value.name.length });
    cache.set(cache.ticket(), "env", "ada", subscriber("a".repeat(40)), "1");
    cache.set(cache.ticket(), "env", "bob", subscriber("b".repeat(40)), "1");
    cache.set(cache.ticket(), "env", "ada", subscriber("a".repeat(30)), "2");
    expect(cache.get("env", "bob", "1")).toBeUndefined();
    expect(cache.get("env", "ada", "1")).toBeDefined();
    expect(cache.get("env", "ada", "2")).toBeDefined();
    // Larger than the whole cache: not kept.
    cache.set(cache.ticket(), "env", "cy", subscriber("c".repeat(101)));
    expect(cache.get("env", "cy")).toBeUndefined();
  });
});

describe("announcer and followChanges over NATS", () => {
  let server: ChildProcess | undefined;
  const connections: NatsConnection[] = [];
  afterAll(async () => {
    for (const connection of connections) await connection.close().catch(() => undefined);
    server?.kill("SIGKILL");
  });

  const freePort = () =>
    new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });

  it("drops announced copies, and keeps none while the connection is down", async () => {
    // A server of the test's own, so it can be stopped and started.
    const port = await freePort();
    const startServer = () => (server = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port)], { stdio: "ignore" }));
    startServer();
    const url = `nats://127.0.0.1:${port}`;
    const follower = await connectNats(url, "follower");
    const owner = await connectNats(url, "owner");
    connections.push(follower, owner);
    const subject = `test.changes.${randomBytes(4).toString("hex")}`;
    const cache = createFollowedCache<{ name: string }>({ name: "test", max: 100, ttlMs: 60_000 });
    await followChanges({ connected: Promise.resolve(follower) }, subject, cache, log);
    const announce = announcer(() => owner, subject);

    cache.set(cache.ticket(), "env", "ada", subscriber("Ada"));
    cache.set(cache.ticket(), "env", "bob", subscriber("Bob"));
    await announce("env", ["ada"]);
    await until(() => cache.get("env", "ada") === undefined);
    expect(cache.get("env", "bob")).toEqual(subscriber("Bob"));

    server!.kill("SIGKILL");
    await until(() => cache.get("env", "bob") === undefined);
    cache.set(cache.ticket(), "env", "bob", subscriber("Bob"));
    expect(cache.get("env", "bob")).toBeUndefined();

    startServer();
    const restartedAt = Date.now();
    await until(() => {
      cache.set(cache.ticket(), "env", "cy", subscriber("Cy"));
      return cache.get("env", "cy") !== undefined;
    }, 20_000);
    // Not at the reconnect itself: the owners get time to reconnect first.
    expect(Date.now() - restartedAt).toBeGreaterThanOrEqual(2_000);
    // Both connections are back (the owner's in its own time): announcements arrive again.
    const deadline = Date.now() + 20_000;
    while (cache.get("env", "cy") !== undefined) {
      if (Date.now() > deadline) throw new Error("the announcement never arrived");
      await announce("env", ["cy"]);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 40_000);

  it("follows several subjects: one drops the keys it names, the other the whole environment; EVERY_KEY travels", async () => {
    const url = "nats://127.0.0.1:4222";
    const follower = await connectNats(url, "follower");
    const owner = await connectNats(url, "owner");
    connections.push(follower, owner);
    const keyed = `test.changes.${randomBytes(4).toString("hex")}`;
    const embedded = `test.changes.${randomBytes(4).toString("hex")}`;
    const cache = createFollowedCache<{ name: string }>({ name: "test", max: 100, ttlMs: 60_000 });
    const following = followChanges({ connected: Promise.resolve(follower) }, [{ subject: keyed }, { subject: embedded, dropsEnvironment: true }], cache, log);
    // Connected and subscribed, but the owners get time to connect before copies are kept.
    await new Promise((resolve) => setTimeout(resolve, 500));
    cache.set(cache.ticket(), "env", "ada", subscriber("ada"), "page");
    expect(cache.get("env", "ada", "page")).toBeUndefined();
    await following;
    const keep = () => {
      for (const name of ["ada", "bob"]) cache.set(cache.ticket(), "env", name, subscriber(name), "page");
    };

    keep();
    await announcer(() => owner, keyed)("env", ["ada"]);
    await until(() => cache.get("env", "ada", "page") === undefined);
    expect(cache.get("env", "bob", "page")).toEqual(subscriber("bob"));
    await announcer(() => owner, keyed)("env", EVERY_KEY);
    await until(() => cache.get("env", "bob", "page") === undefined);

    // Too many keys for one NATS message: announced as the whole environment, not lost.
    keep();
    const tooMany = Array.from({ length: 10_000 }, (_, index) => `${index}`.padEnd(255, "x"));
    await announcer(() => owner, keyed)("env", tooMany);
    await until(() => cache.get("env", "ada", "page") === undefined && cache.get("env", "bob", "page") === undefined);

    keep();
    await announcer(() => owner, embedded)("env", ["some-workflow"]);
    await until(() => cache.get("env", "ada", "page") === undefined && cache.get("env", "bob", "page") === undefined);
  });

  it("announces too many keys in parts when every key must arrive", async () => {
    const url = "nats://127.0.0.1:4222";
    const follower = await connectNats(url, "follower");
    const owner = await connectNats(url, "owner");
    connections.push(follower, owner);
    const subject = `test.changes.${randomBytes(4).toString("hex")}`;
    const bodies: string[][] = [];
    follower.subscribe(`${subject}.env`, { callback: (_, message) => bodies.push(JSON.parse(message.string()) as string[]) });
    await follower.flush();
    const keys = Array.from({ length: 2_000 }, (_, index) => `${index}`.padEnd(100, "x"));
    await announcer(() => owner, subject, undefined, "split")("env", keys);
    await until(() => bodies.flat().length === keys.length);
    expect(bodies.length).toBeGreaterThan(1);
    expect(bodies.flat()).toEqual(keys);
    for (const body of bodies) expect(JSON.stringify(body).length).toBeLessThanOrEqual(64 * 1024);
  });
});
