import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { announcer, connectNats, createFollowedCache, createLogger, followChanges, type NatsConnection } from "../src/index.js";
import { until } from "./until.js";

const log = createLogger("test", "silent");
const subscriber = (name: string) => ({ name });

describe("createFollowedCache", () => {
  const live = () => {
    const cache = createFollowedCache<{ name: string }>({ max: 100, ttlMs: 60_000 });
    cache.setLive(true);
    return cache;
  };

  it("keeps nothing until it is live, and forgets everything when it stops being live", () => {
    const cache = createFollowedCache<{ name: string }>({ max: 100, ttlMs: 60_000 });
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
    const cache = createFollowedCache<{ name: string }>({ max: 2, ttlMs: 60_000 });
    cache.setLive(true);
    const before = cache.ticket();
    cache.forget("env", ["ada"]);
    cache.forget("env", ["bob", "cy"]); // evicts the memory of ada's change
    cache.set(before, "env", "ada", subscriber("old Ada"));
    expect(cache.get("env", "ada")).toBeUndefined();
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
    const cache = createFollowedCache<{ name: string }>({ max: 100, ttlMs: 60_000 });
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
    await until(() => {
      cache.set(cache.ticket(), "env", "cy", subscriber("Cy"));
      return cache.get("env", "cy") !== undefined;
    }, 20_000);
    // Both connections are back (the owner's in its own time): announcements arrive again.
    const deadline = Date.now() + 20_000;
    while (cache.get("env", "cy") !== undefined) {
      if (Date.now() > deadline) throw new Error("the announcement never arrived");
      await announce("env", ["cy"]);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 40_000);
});
