#!/usr/bin/env node
import { parseArgs } from "node:util";
import { createPool, runMain, type Queryable } from "@notify/runtime";
import { readConfig } from "./config.js";
import * as store from "./store.js";

const USAGE = `usage:
  pnpm --filter @notify/worker cli unknown-sends [--limit N]
      sends whose outcome is unknown (the worker died while the provider was being called and the
      provider cannot deduplicate a second call), newest first: message id, environment, provider,
      since, attempts, error. Check each with the provider: notify never sends them again.
  pnpm --filter @notify/worker cli --help`;

/** The listing an operator reads: one tab-separated line per send, under a header. */
async function unknownSendsReport(db: Queryable, limit: number): Promise<string> {
  const rows = await store.selectUnknownSends(db, limit);
  const lines = rows.map((row) =>
    [
      row.message_id,
      row.environment_id,
      row.provider_id,
      row.updated_at.toISOString(),
      String(row.attempts),
      `${row.error_id ?? ""}: ${row.error_text ?? ""}`,
    ].join("\t"),
  );
  return `${["MESSAGE\tENVIRONMENT\tPROVIDER\tSINCE\tATTEMPTS\tERROR", ...lines].join("\n")}\n`;
}

runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { limit: { type: "string", default: "100" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const limit = Number(values.limit);
  if (positionals.length !== 1 || positionals[0] !== "unknown-sends" || !Number.isInteger(limit) || limit < 1) throw new Error(USAGE);
  const config = readConfig();
  const pool = createPool(config.DATABASE_URL, 1);
  try {
    process.stdout.write(await unknownSendsReport(pool, limit));
  } finally {
    await pool.end();
  }
});
