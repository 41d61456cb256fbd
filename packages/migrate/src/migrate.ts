#!/usr/bin/env node
import { migrations as gateway } from "@notify/gateway";
import { migrations as integrations } from "@notify/integrations";
import { migrations as messages } from "@notify/messages";
import { createLogger, createPool, ensureDatabase, migrate, runMain, type MigrationSet } from "@notify/runtime";
import { migrations as subscribers } from "@notify/subscribers";
import { migrations as topics } from "@notify/topics";
import { migrations as triggers } from "@notify/triggers";
import { migrations as worker } from "@notify/worker";
import { readConfig } from "./config.js";

/** Every process's schema, in the order `pnpm start` starts them (none reads another's tables). */
const SCHEMAS: readonly MigrationSet[] = [gateway, subscribers, integrations, topics, messages, triggers, worker];

/**
 * Creates the database if missing and applies every schema's pending migrations (each under its
 * advisory lock, so a process starting meanwhile waits rather than racing). Safe to run again:
 * applied migrations are skipped.
 */
runMain(async () => {
  const config = readConfig();
  const log = createLogger("migrate", config.LOG_LEVEL);
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 1);
  try {
    for (const schema of SCHEMAS) {
      const applied = await migrate(pool, schema, log);
      log.info({ schema: schema.schema, applied }, applied.length > 0 ? "migrated" : "up to date");
    }
  } finally {
    await pool.end();
  }
});
