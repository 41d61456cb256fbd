import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import type { Logger } from "./log.js";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything a store function can run a statement on: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query">;

/** `text` matched literally inside a LIKE/ILIKE pattern (its %, _ and \ escaped). */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (match) => `\\${match}`);

/**
 * A text[] parameter as the array literal pg would send, built without pg's two regular
 * expressions per element: ids travel to unnest() by the thousand.
 */
export function textArray(values: readonly string[]): string {
  const quoted = values.map((value) => (value.includes("\\") || value.includes('"') ? value.replace(/[\\"]/g, "\\$&") : value));
  return quoted.length === 0 ? "{}" : `{"${quoted.join('","')}"}`;
}

/** Postgres' unique_violation: a concurrent or earlier write holds the key. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "23505";
}

/** Postgres' foreign_key_violation: a row still refers to the one a write removes (or names one that is gone). */
export function isForeignKeyViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "23503";
}

/**
 * Text Postgres cannot hold: a NUL character (\u0000) in a text parameter (22021) or in a JSON
 * string bound for jsonb (22P05). A client's input carries one, or a provider's answer.
 */
export function isUnstorableText(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "22021" || code === "22P05";
}

/** Whether `text` holds a NUL character, which no Postgres text can: an id holding one names nothing. */
export const holdsNul = (text: string) => text.includes("\u0000");

/**
 * Text from outside as Postgres can hold it: its NUL characters replaced. One refused value fails
 * the whole statement, with every row of its batch.
 */
export const storableText = (text: string) => text.replaceAll("\u0000", "\uFFFD");

/** Postgres' deadlock_detected: the statement was rolled back so that another could go on. */
function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "40P01";
}

/**
 * Runs `work` again when Postgres ended a deadlock by failing it, at most `attempts` times in all:
 * for work that two callers may do in different lock orders, and that changed nothing when it
 * failed (one statement, or a transaction rolled back).
 */
export async function retryOnDeadlock<T>(attempts: number, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (!isDeadlock(error) || attempt >= attempts) throw error;
    }
  }
}

// int8 (counts) as numbers: every count we return is far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createPool(url: string, max = 10, options?: string): Pool {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000, options });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * A pool for named statements whose best plan does not depend on their values, such as batched
 * reads (and writes) driven by unnest() of array parameters: each is planned once per connection. Postgres
 * re-plans a prepared statement on every call while its generic plan looks costlier than a
 * custom one, and a generic plan over unnest() of a parameter always does (it assumes 100
 * elements where a custom plan sees the real few), so planning stayed half of a feed read's
 * database time. The setting holds for every statement on these connections, unnamed ones too:
 * a statement whose plan should follow its values belongs on the ordinary pool.
 */
export const createPreparedReadPool = (url: string, max = 4): Pool => createPool(url, max, "-c plan_cache_mode=force_generic_plan");

export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await inTransaction(client, () => work(client));
  } finally {
    client.release();
  }
}

/** Runs `work` in a transaction on `client`: committed when it resolves, rolled back when it throws. */
async function inTransaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query("BEGIN");
  try {
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** Creates the database named in `url` when it does not exist (first local start). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        if (error.code !== "42P04") throw error; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}

export interface MigrationSet {
  /** The Postgres schema the service owns; its migration history lives there too. */
  schema: string;
  /** Folder of `NNN_what.sql` files, applied in order, each once. */
  dir: string;
}

/**
 * First line of a migration that runs outside a transaction: CREATE INDEX CONCURRENTLY builds an
 * index while writes go on, and Postgres refuses it inside a transaction block.
 */
const NO_TRANSACTION = /^--\s*notify:no-transaction\s*$/;

/**
 * A no-transaction migration's statements, sent one per query (Postgres runs a query of several
 * statements as one implicit transaction). Each statement ends with ";" at the end of a line. If
 * such a migration stops half-way, it runs again from its first statement at the next start, so
 * each statement must be safe to repeat (DROP INDEX CONCURRENTLY IF EXISTS before the CREATE: a
 * failed concurrent build leaves an invalid index behind).
 */
function statementsOf(sql: string): string[] {
  return sql
    .split(/;[ \t]*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement.split("\n").some((line) => line.trim() !== "" && !line.trim().startsWith("--")));
}

const LOCK_POLL_MS = 200;

/**
 * Waits for the schema's migration lock by polling, never inside a blocked statement: a replica
 * blocked in pg_advisory_lock holds a snapshot, which a concurrent index build in the replica
 * holding the lock waits for, and Postgres ends that deadlock by failing the waiting replica.
 */
async function lockMigrations(client: PoolClient, lock: string): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS locked", [lock]);
    if (rows[0]!.locked) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

function applyInTransaction(client: PoolClient, schema: string, file: string, sql: string): Promise<void> {
  return inTransaction(client, async () => {
    await client.query(`SET LOCAL search_path TO ${schema}`);
    await client.query(sql);
    await client.query(`INSERT INTO ${schema}.schema_migrations (name) VALUES ($1)`, [file]);
  });
}

/** On a failure `migrate` drops the connection, and the search_path set here with it. */
async function applyWithoutTransaction(client: PoolClient, schema: string, file: string, sql: string): Promise<void> {
  await client.query(`SET search_path TO ${schema}`);
  for (const statement of statementsOf(sql)) await client.query(statement);
  await client.query(`INSERT INTO ${schema}.schema_migrations (name) VALUES ($1)`, [file]);
  await client.query("RESET search_path");
}

/** The schema's migration files, in the order they apply. */
async function migrationFilesOf(set: MigrationSet): Promise<string[]> {
  return (await readdir(set.dir)).filter((file) => /^\d{3}_.+\.sql$/.test(file)).sort();
}

export interface MigrationStatus {
  /** The migrations recorded as applied, in order (those of a newer release included). */
  applied: { name: string; appliedAt: Date }[];
  /** The files `migrate` would apply next, in order. */
  pending: string[];
}

/** What `migrate` has applied of one schema and what it would apply, changing nothing (a fresh database has all pending). */
export async function migrationStatus(db: Queryable, set: MigrationSet): Promise<MigrationStatus> {
  const files = await migrationFilesOf(set);
  const history = `${pg.escapeIdentifier(set.schema)}.schema_migrations`;
  const { rows: found } = await db.query<{ exists: boolean }>("SELECT to_regclass($1) IS NOT NULL AS exists", [history]);
  if (!found[0]!.exists) return { applied: [], pending: files };
  const { rows } = await db.query<{ name: string; applied_at: Date }>(`SELECT name, applied_at FROM ${history} ORDER BY name`);
  const applied = new Set(rows.map((row) => row.name));
  return { applied: rows.map((row) => ({ name: row.name, appliedAt: row.applied_at })), pending: files.filter((file) => !applied.has(file)) };
}

/**
 * Applies the pending migrations of one schema under an advisory lock, so replicas starting
 * together apply each file exactly once. Forward-only: applied files are never re-run. Each file
 * runs in a transaction of its own unless it starts with `-- notify:no-transaction`.
 */
export async function migrate(pool: Pool, set: MigrationSet, log?: Logger): Promise<string[]> {
  const files = await migrationFilesOf(set);
  const schema = pg.escapeIdentifier(set.schema);
  const lock = `notify.migrate.${set.schema}`;
  const client = await pool.connect();
  let failed = false;
  try {
    await lockMigrations(client, lock);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${schema}.schema_migrations`);
    const applied = new Set(rows.map((row) => row.name));
    const pending = files.filter((file) => !applied.has(file));
    for (const file of pending) {
      const sql = await readFile(join(set.dir, file), "utf8");
      const apply = NO_TRANSACTION.test(sql.split("\n", 1)[0]!) ? applyWithoutTransaction : applyInTransaction;
      try {
        await apply(client, schema, file, sql);
      } catch (error) {
        throw new Error(`migration ${set.schema}/${file} failed: ${(error as Error).message}`, { cause: error });
      }
      log?.info({ schema: set.schema, migration: file }, "migration applied");
    }
    return pending;
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [lock]).catch(() => undefined);
    // A connection a migration failed on (perhaps half-way, outside a transaction) is not reused.
    client.release(failed);
  }
}
