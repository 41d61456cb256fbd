import { createHash, randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { createPool, migrate, type MigrationSet, type Pool } from "@notify/runtime";

export const ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Hash of every migration file, so a changed migration gets a fresh template. */
async function migrationsHash(sets: MigrationSet[]): Promise<string> {
  const hash = createHash("sha256");
  for (const set of sets) {
    hash.update(set.schema);
    for (const file of (await readdir(set.dir)).sort()) hash.update(file).update(await readFile(join(set.dir, file)));
  }
  return hash.digest("hex").slice(0, 16);
}

async function ensureTemplate(admin: pg.Client, adminUrl: string, sets: MigrationSet[]): Promise<string> {
  const template = `notify_tpl_${await migrationsHash(sets)}`;
  await admin.query("SELECT pg_advisory_lock(hashtext('notify.test-template'))");
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate", [template]);
    if (rowCount) return template;
    await admin.query(`DROP DATABASE IF EXISTS ${template}`);
    await admin.query(`CREATE DATABASE ${template}`);
    const pool = createPool(databaseUrl(adminUrl, template), 2);
    try {
      for (const set of sets) await migrate(pool, set);
    } finally {
      await pool.end();
    }
    await admin.query(`ALTER DATABASE ${template} WITH is_template true`);
    return template;
  } finally {
    await admin.query("SELECT pg_advisory_unlock(hashtext('notify.test-template'))");
  }
}

/**
 * A fresh database for one test file, cloned from a template that has every given schema
 * migrated (built once per set of migration files, shared by all test files).
 */
export async function createTestDatabase(sets: MigrationSet[], adminUrl: string = ADMIN_URL): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const template = await ensureTemplate(admin, adminUrl, sets);
    const name = `notify_test_${randomBytes(6).toString("hex")}`;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    return {
      url: databaseUrl(adminUrl, name),
      async drop() {
        const client = new pg.Client({ connectionString: adminUrl });
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await client.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}

export interface DatabaseFixture {
  database: TestDatabase;
  pool: Pool;
  close(): Promise<void>;
}

/** A fresh database with the given schemas migrated, and a small pool on it. */
export async function openTestDatabase(sets: MigrationSet[], poolSize = 4): Promise<DatabaseFixture> {
  const database = await createTestDatabase(sets);
  const pool = createPool(database.url, poolSize);
  return {
    database,
    pool,
    async close() {
      await pool.end();
      await database.drop();
    },
  };
}
