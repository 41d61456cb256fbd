import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createPool, migrate, type MigrationSet, type Pool } from "../src/index.js";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const pools: Pool[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

function newPool(): Pool {
  const pool = createPool(url, 1);
  pools.push(pool);
  return pool;
}

/** A schema of the test's own and a folder holding `files` as its migrations. */
async function migrationSet(files: Record<string, string>): Promise<MigrationSet & { write(name: string, sql: string): Promise<void> }> {
  const schema = `migrate_test_${randomBytes(4).toString("hex")}`;
  const dir = await mkdtemp(join(tmpdir(), "notify-migrations-"));
  const write = (name: string, sql: string) => writeFile(join(dir, name), sql);
  for (const [name, sql] of Object.entries(files)) await write(name, sql);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  cleanups.push(() => newPool().query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  return { schema, dir, write };
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
});

const applied = async (pool: Pool, schema: string) =>
  (await pool.query<{ name: string }>(`SELECT name FROM ${schema}.schema_migrations ORDER BY name`)).rows.map((row) => row.name);

const indexState = async (pool: Pool, schema: string, name: string) =>
  (
    await pool.query<{ valid: boolean }>(
      "SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2",
      [schema, name],
    )
  ).rows[0];

describe("migrate", () => {
  it("applies pending files in order, each once", async () => {
    const set = await migrationSet({
      "002_fill.sql": "INSERT INTO items (n) VALUES (1), (2);",
      "001_items.sql": "CREATE TABLE items (n int);",
    });
    const pool = newPool();
    expect(await migrate(pool, set)).toEqual(["001_items.sql", "002_fill.sql"]);
    expect(await migrate(pool, set)).toEqual([]);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${set.schema}.items`)).rows[0].n).toBe(2);
  });

  it("rolls a failing file back whole and does not record it", async () => {
    const set = await migrationSet({
      "001_items.sql": "CREATE TABLE items (n int);",
      "002_broken.sql": "CREATE TABLE other (n int);\nSELECT 1 / 0;",
    });
    const pool = newPool();
    await expect(migrate(pool, set)).rejects.toThrow(/002_broken\.sql failed: division by zero/);
    expect(await applied(pool, set.schema)).toEqual(["001_items.sql"]);
    expect((await pool.query("SELECT to_regclass($1) AS t", [`${set.schema}.other`])).rows[0].t).toBeNull();
  });

  it("runs a no-transaction file statement by statement, so an index can be built concurrently", async () => {
    const set = await migrationSet({
      "001_items.sql": "CREATE TABLE items (n int);\nINSERT INTO items SELECT generate_series(1, 1000);",
      "002_index.sql": [
        "-- notify:no-transaction",
        "-- A comment; with a semicolon inside a line.",
        "DROP INDEX CONCURRENTLY IF EXISTS items_n_idx;",
        "CREATE INDEX CONCURRENTLY items_n_idx",
        "  ON items (n);",
        "",
      ].join("\n"),
    });
    const pool = newPool();
    expect(await migrate(pool, set)).toEqual(["001_items.sql", "002_index.sql"]);
    expect(await indexState(pool, set.schema, "items_n_idx")).toEqual({ valid: true });
    // The pool's one connection ran the migration: its search_path is back to the default.
    expect((await pool.query("SHOW search_path")).rows[0].search_path).toBe('"$user", public');
  });

  it("runs a no-transaction file stopped half-way again from its start", async () => {
    const set = await migrationSet({
      "001_items.sql": "CREATE TABLE items (n int);",
      "002_index.sql": "-- notify:no-transaction\nCREATE INDEX CONCURRENTLY items_n_idx ON items (n);\nSELECT 1 / 0;\n",
    });
    const pool = newPool();
    await expect(migrate(pool, set)).rejects.toThrow(/002_index\.sql failed/);
    expect(await applied(pool, set.schema)).toEqual(["001_items.sql"]);
    await set.write(
      "002_index.sql",
      "-- notify:no-transaction\nDROP INDEX CONCURRENTLY IF EXISTS items_n_idx;\nCREATE INDEX CONCURRENTLY items_n_idx ON items (n);\n",
    );
    expect(await migrate(pool, set)).toEqual(["002_index.sql"]);
    expect(await indexState(pool, set.schema, "items_n_idx")).toEqual({ valid: true });
  });

  it("lets replicas starting together build an index concurrently once, without a deadlock", async () => {
    // The first replica holds the lock for half a second before its index build, so the second
    // is waiting for the lock all through the build: a waiting statement would hold a snapshot
    // the build waits for, and Postgres would end that deadlock by failing the second replica.
    const set = await migrationSet({
      "001_items.sql": "CREATE TABLE items (n int);\nSELECT pg_sleep(0.5);",
      "002_index.sql": "-- notify:no-transaction\nCREATE INDEX CONCURRENTLY items_n_idx ON items (n);\n",
    });
    const first = migrate(newPool(), set);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = migrate(newPool(), set);
    const results = await Promise.all([first, second]);
    expect(results).toEqual([["001_items.sql", "002_index.sql"], []]);
    expect(await indexState(newPool(), set.schema, "items_n_idx")).toEqual({ valid: true });
  });
});
