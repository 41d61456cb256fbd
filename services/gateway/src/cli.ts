#!/usr/bin/env node
import { parseArgs } from "node:util";
import { connectRedis, createPool, ensureDatabase, migrate, runMain } from "@notify/runtime";
import { addKey, cacheKeyOf, generateKey } from "./accounts.js";
import { REVOKED_CHANNEL } from "./auth.js";
import { readConfig } from "./config.js";
import { migrations } from "./server.js";
import * as store from "./store.js";

const USAGE = `usage:
  notify keys create [--environment NAME] [--organization NAME]   print a new API key
  notify keys list                                                 prefix, environment, created, last used
  notify keys revoke PREFIX                                        revoke the keys starting with PREFIX`;

runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { environment: { type: "string" }, organization: { type: "string" } },
  });
  const [group, command, argument] = positionals;
  if (group !== "keys" || !command) throw new Error(USAGE);
  const config = readConfig();
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 1);
  try {
    await migrate(pool, migrations);
    if (command === "create") {
      const key = generateKey();
      await addKey(pool, key, { environment: values.environment, organization: values.organization });
      process.stdout.write(`${key}\n`);
    } else if (command === "list") {
      const rows = await store.selectKeys(pool);
      const lines = rows.map((row) =>
        [
          row.prefix,
          `${row.organization}/${row.environment}`,
          row.created_at.toISOString(),
          row.last_used_at?.toISOString() ?? "never used",
          row.revoked_at ? `revoked ${row.revoked_at.toISOString()}` : "active",
        ].join("\t"),
      );
      process.stdout.write(`${["PREFIX\tENVIRONMENT\tCREATED\tLAST USED\tSTATE", ...lines].join("\n")}\n`);
    } else if (command === "revoke" && argument) {
      const hashes = await store.revokeKeys(pool, argument);
      if (hashes.length === 0) throw new Error(`no active key starts with ${argument}`);
      // Drop cached lookups, here and in every gateway, so the key stops working now.
      const redis = await connectRedis(config.REDIS_URL).catch(() => undefined);
      if (redis) {
        await redis.del(hashes.map(cacheKeyOf));
        for (const keyHash of hashes) await redis.publish(REVOKED_CHANNEL, keyHash);
        await redis.quit();
      }
      process.stdout.write(`revoked ${hashes.length} key(s)\n`);
    } else {
      throw new Error(USAGE);
    }
  } finally {
    await pool.end();
  }
});
