#!/usr/bin/env node
import { parseArgs } from "node:util";
import { migrations as gateway } from "@notify/gateway";
import { migrations as integrations } from "@notify/integrations";
import { migrations as messages } from "@notify/messages";
import { createLogger, createPool, ensureDatabase, migrate, migrationStatus, runMain, type MigrationSet, type Pool } from "@notify/runtime";
import { migrations as subscribers } from "@notify/subscribers";
import { migrations as topics } from "@notify/topics";
import { migrations as triggers } from "@notify/triggers";
import { migrations as worker } from "@notify/worker";
import { type MigrateConfig, readConfig } from "./config.js";

/** Every process's schema, in the order `pnpm start` starts them (none reads another's tables). */
const SCHEMAS: readonly MigrationSet[] = [gateway, subscribers, integrations, topics, messages, triggers, worker];

const USAGE = `usage:
  notify migrate                                                   apply every schema's pending migrations
  notify migrate status                                            every schema's migrations, applied (and when) or pending`;

/**
 * Creates the database if missing and applies every schema's pending migrations (each under its
 * advisory lock, so a process starting meanwhile waits rather than racing). Safe to run again:
 * applied migrations are skipped.
 */
async function migrateAll(config: MigrateConfig, pool: Pool): Promise<void> {
  const log = createLogger("migrate", config.LOG_LEVEL);
  for (const schema of SCHEMAS) {
    const applied = await migrate(pool, schema, log);
    log.info({ schema: schema.schema, applied }, applied.length > 0 ? "migrated" : "up to date");
  }
}

/** Prints one line per migration of every schema: applied and when, or pending. Changes nothing. */
async function printStatus(pool: Pool): Promise<void> {
  const lines = ["SCHEMA\tMIGRATION\tSTATE"];
  let pending = 0;
  for (const schema of SCHEMAS) {
    const status = await migrationStatus(pool, schema);
    for (const migration of status.applied) lines.push(`${schema.schema}\t${migration.name}\tapplied ${migration.appliedAt.toISOString()}`);
    for (const name of status.pending) lines.push(`${schema.schema}\t${name}\tpending`);
    pending += status.pending.length;
  }
  lines.push(pending > 0 ? `${pending} pending: run \`pnpm migrate\`` : "up to date");
  process.stdout.write(`${lines.join("\n")}\n`);
}

runMain(async () => {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { help: { type: "boolean", short: "h" } } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [command, ...more] = positionals;
  if ((command !== undefined && command !== "status") || more.length > 0) throw new Error(USAGE);
  const config = readConfig();
  // Status changes nothing, so it creates no database either.
  if (command !== "status") await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 1);
  try {
    await (command === "status" ? printStatus(pool) : migrateAll(config, pool));
  } finally {
    await pool.end();
  }
});
