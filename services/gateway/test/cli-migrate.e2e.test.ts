import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createTestDatabase, type TestDatabase } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../src/server.js";

const run = promisify(execFile);
const notifyCli = fileURLToPath(new URL("../../../scripts/notify.mjs", import.meta.url));
const migrateCommand = fileURLToPath(new URL("../../../packages/migrate/dist/migrate.js", import.meta.url));

let database: TestDatabase;
beforeAll(async () => {
  // No schema at all: a database as a first install finds it.
  database = await createTestDatabase([]);
});
afterAll(async () => {
  await database?.drop();
});

const env = () => ({ ...process.env, DATABASE_URL: database.url });

/** `pnpm notify migrate status` as rows of [schema, migration, state], and its last line. */
async function status(): Promise<{ rows: string[][]; summary: string }> {
  const { stdout } = await run(process.execPath, [notifyCli, "migrate", "status"], { env: env() });
  const lines = stdout.trim().split("\n");
  expect(lines[0]).toBe("SCHEMA\tMIGRATION\tSTATE");
  return { rows: lines.slice(1, -1).map((line) => line.split("\t")), summary: lines.at(-1)! };
}

describe("pnpm notify migrate status", () => {
  it("lists every schema's migrations as pending on a fresh database, then as applied once migrated", async () => {
    const gatewayFiles = (await readdir(migrations.dir)).filter((file) => file.endsWith(".sql")).sort();

    const before = await status();
    expect(before.rows.every(([, , state]) => state === "pending")).toBe(true);
    expect(before.rows.filter(([schema]) => schema === "gateway").map(([, name]) => name)).toEqual(gatewayFiles);
    const schemas = new Set(before.rows.map(([schema]) => schema));
    expect(schemas.has("worker") && schemas.size > 2).toBe(true);
    expect(before.summary).toBe(`${before.rows.length} pending: run \`pnpm migrate\``);

    // Status changes nothing: asked again, every file is still pending.
    expect((await status()).rows).toEqual(before.rows);
    await run(process.execPath, [migrateCommand], { env: env() });

    const after = await status();
    expect(after.rows.map(([schema, name]) => [schema, name])).toEqual(before.rows.map(([schema, name]) => [schema, name]));
    for (const [, , state] of after.rows) expect(state).toMatch(/^applied \d{4}-\d{2}-\d{2}T/);
    expect(after.summary).toBe("up to date");
  });

  it("explains itself with --help and refuses unknown commands", async () => {
    const { stdout } = await run(process.execPath, [notifyCli, "migrate", "status", "--help"], { env: env() });
    expect(stdout).toContain("notify migrate status");
    await expect(run(process.execPath, [notifyCli, "migrate", "rollback"], { env: env() })).rejects.toMatchObject({
      stderr: expect.stringContaining("usage:"),
    });
  });
});
