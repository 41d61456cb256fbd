import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createPool } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBootstrapKey } from "../src/accounts.js";
import { readConfig } from "../src/config.js";
import { sealerOf } from "../src/server.js";
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
