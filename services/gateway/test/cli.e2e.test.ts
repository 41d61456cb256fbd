import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createPool } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBootstrapKey } from "../src/accounts.js";
import { readConfig } from "../src/config.js";
import { sealerOf } from "../src/config.js";
import { environmentIdentifier } from "./inbox-helpers.js";
import { GATEWAY_ENCRYPTION_KEY, startStack, type Stack } from "./stack.js";

const run = promisify(execFile);
const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function notify(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [cli, ...args], { env: { ...process.env, DATABASE_URL: stack.database.url } });
  return stdout;
}

describe("pnpm notify keys", () => {
  it("creates a Production key that cannot read Development's subscribers, lists keys without secrets, revokes", async () => {
    await stack.request("POST", "/v1/subscribers", { subscriberId: "dev-only" });
    const key = (await notify("keys", "create", "--environment", "Production")).trim();
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    const asProduction = { authorization: `ApiKey ${key}` };

    expect((await stack.request("GET", "/v1/subscribers/dev-only", undefined, asProduction)).status).toBe(404);
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "prod-only" }, asProduction)).status).toBe(201);
    expect((await stack.request("GET", "/v1/subscribers/prod-only")).status).toBe(404);

    const listing = await notify("keys", "list");
    expect(listing).toContain(key.slice(0, 8));
    expect(listing).toContain("Default/Production");
    expect(listing).toContain(await environmentIdentifier(stack, key));
    expect(listing).not.toContain(key);
    expect(listing).not.toContain(stack.key);

    expect(await notify("keys", "revoke", key.slice(0, 8))).toContain("revoked 1 key");
    const revoked = await stack.request("GET", "/v1/subscribers/prod-only", undefined, asProduction);
    expect(revoked.status).toBe(401);
    expect(await notify("keys", "list")).toMatch(/revoked/);
  });

  it("keeps a revoked bootstrap key refused when a gateway starts with it again", async () => {
    const key = (await notify("keys", "create")).trim();
    const asKey = { authorization: `ApiKey ${key}` };
    expect((await stack.request("GET", "/v1/subscribers", undefined, asKey)).status).toBe(200);
    expect(await notify("keys", "revoke", key.slice(0, 8))).toContain("revoked 1 key");
    const pool = createPool(stack.database.url, 1);
    try {
      // What a gateway does at start with BOOTSTRAP_API_KEY set to that key.
      expect(await ensureBootstrapKey(pool, sealerOf(readConfig({ GATEWAY_ENCRYPTION_KEY })), key)).toEqual({ kind: "revoked" });
    } finally {
      await pool.end();
    }
    expect((await stack.request("GET", "/v1/subscribers", undefined, asKey)).status).toBe(401);
  });

  // Its CLI runs (each a process that loads the runtime) and the wait for a key to expire take
  // close to the default timeout on a busy machine.
  it("labels keys, lists their expiry, refuses an expired key with 401 while a live key works, revokes by id", async () => {
    const live = (await notify("keys", "create", "--label", "billing backend", "--expires-at", "2999-01-01T00:00:00Z")).trim();
    const shortLived = (await notify("keys", "create", "--label", "short lived", "--expires-in", "2s")).trim();
    const expiresBy = Date.now() + 2_000;
    const asLive = { authorization: `ApiKey ${live}` };
    const asShortLived = { authorization: `ApiKey ${shortLived}` };
    // Used once before it expires, so the caches hold it when it does.
    expect((await stack.request("GET", "/v1/subscribers", undefined, asShortLived)).status).toBe(200);

    const row = (prefix: string, listing: string) =>
      listing
        .split("\n")
        .find((line) => line.split("\t")[1] === prefix)
        ?.split("\t");
    const listing = await notify("keys", "list");
    expect(listing.split("\n")[0]).toBe("ID\tPREFIX\tLABEL\tENVIRONMENT\tAPPLICATION IDENTIFIER\tCREATED\tEXPIRES\tLAST USED\tSTATE");
    expect(row(live.slice(0, 8), listing)).toEqual(expect.arrayContaining(["billing backend", "2999-01-01T00:00:00.000Z", "active"]));
    const shortLivedRow = row(shortLived.slice(0, 8), listing)!;
    expect(shortLivedRow[2]).toBe("short lived");
    expect(Math.abs(Date.parse(shortLivedRow[6]!) - expiresBy)).toBeLessThan(1_500);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresBy + 500 - Date.now())));
    const expired = await stack.request("GET", "/v1/subscribers", undefined, asShortLived);
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ message: "API Key not found" });
    expect((await stack.request("GET", "/v1/subscribers", undefined, asLive)).status).toBe(200);
    expect(row(shortLived.slice(0, 8), await notify("keys", "list"))?.[8]).toBe("expired");

    const liveId = row(live.slice(0, 8), listing)![0]!;
    expect(liveId).toMatch(/^[0-9a-f]{24}$/);
    expect(await notify("keys", "revoke", liveId)).toContain("revoked 1 key");
    expect((await stack.request("GET", "/v1/subscribers", undefined, asLive)).status).toBe(401);
    expect(row(live.slice(0, 8), await notify("keys", "list"))?.[8]).toMatch(/^revoked /);
    await expect(notify("keys", "revoke", liveId)).rejects.toMatchObject({ stderr: expect.stringContaining("no active key") });
  }, 90_000);

  it("lists the newest keys first, as many as --limit says, and says how many it left out", async () => {
    const labels = ["oldest of three", "middle of three", "newest of three"];
    for (const label of labels) await notify("keys", "create", "--label", label);
    const { stdout, stderr } = await run(process.execPath, [cli, "keys", "list", "--limit", "2"], {
      env: { ...process.env, DATABASE_URL: stack.database.url },
    });
    const [header, ...rows] = stdout.trim().split("\n");
    expect(header).toMatch(/^ID\tPREFIX\tLABEL/);
    expect(rows.map((row) => row.split("\t")[2])).toEqual(["newest of three", "middle of three"]);
    expect(stderr).toMatch(/^the newest 2 of \d+ keys; --limit N shows more$/m);
    for (const limit of ["0", "two", "1.5"]) {
      await expect(notify("keys", "list", "--limit", limit)).rejects.toMatchObject({ stderr: expect.stringContaining("usage:") });
    }
  });

  it("refuses a bad label or expiry and creates no key", async () => {
    const count = async () => (await notify("keys", "list")).trim().split("\n").length;
    const before = await count();
    for (const args of [
      ["--expires-in", "soon"],
      ["--expires-at", "2020-01-01T00:00:00Z"],
      ["--expires-at", "2999-01-01"],
      ["--expires-in", "1d", "--expires-at", "2999-01-01T00:00:00Z"],
      ["--label", ""],
      ["--label", "two\nlines"],
    ]) {
      await expect(notify("keys", "create", ...args)).rejects.toMatchObject({ code: 1 });
    }
    expect(await count()).toBe(before);
  });

  it("explains every keys command with --help", async () => {
    expect(await notify("keys", "create", "--help")).toContain("--expires-in DURATION");
    expect(await notify("keys", "list", "--help")).toContain("label");
    expect(await notify("keys", "revoke", "--help")).toContain("PREFIX|ID");
  });

  it("sets and clears the origins of an environment's Inbox", async () => {
    expect(await notify("inbox", "origins", "--environment", "Development", "https://App.example.com/", "http://localhost:5173")).toContain(
      "Default/Development: Inbox origins https://app.example.com http://localhost:5173",
    );
    const pool = createPool(stack.database.url, 1);
    const origins = async () =>
      (await pool.query<{ inbox_origins: string[] | null }>("SELECT inbox_origins FROM gateway.environments WHERE name = 'Development'")).rows[0]
        ?.inbox_origins;
    expect(await origins()).toEqual(["https://app.example.com", "http://localhost:5173"]);
    expect(await notify("inbox", "origins", "--any")).toContain("Inbox origins any");
    expect(await origins()).toBeNull();
    await expect(notify("inbox", "origins", "not-an-origin")).rejects.toMatchObject({ stderr: expect.stringContaining("not an origin") });
    await expect(notify("inbox", "origins", "--environment", "Nowhere", "--any")).rejects.toMatchObject({ stderr: expect.stringContaining("no environment") });
    await pool.end();
  });

  it("sets an environment's rate limits and puts it back on the defaults", async () => {
    const pool = createPool(stack.database.url, 1);
    const rateLimits = async () =>
      (await pool.query<{ rate_limits: unknown }>("SELECT rate_limits FROM gateway.environments WHERE name = 'Development'")).rows[0]?.rate_limits;
    expect(await notify("rate-limits", "set", "--service-level", "free", "--trigger", "100")).toContain(
      'Default/Development: rate limits {"serviceLevel":"free","trigger":100}',
    );
    expect(await rateLimits()).toEqual({ serviceLevel: "free", trigger: 100 });
    await expect(notify("rate-limits", "set", "--trigger", "many")).rejects.toMatchObject({ stderr: expect.stringContaining("usage:") });
    await expect(notify("rate-limits", "set", "--service-level", "platinum")).rejects.toMatchObject({ stderr: expect.stringContaining("usage:") });
    await expect(notify("rate-limits", "set")).rejects.toMatchObject({ stderr: expect.stringContaining("usage:") });
    expect(await notify("rate-limits", "default")).toContain("the gateway's defaults");
    expect(await rateLimits()).toBeNull();
    await pool.end();
  });

  it("rejects unknown commands with the usage text", async () => {
    await expect(notify("keys", "explode")).rejects.toMatchObject({ stderr: expect.stringContaining("usage:") });
  });
});
