#!/usr/bin/env node
import { parseArgs } from "node:util";
import { connectNats, createPool, runMain, type Queryable } from "@notify/runtime";
import { readConfig } from "./config.js";
import { deadLettersReport, replayDeadLetters, type WorkerStreams } from "./dead-letters.js";
import * as store from "./store.js";

const USAGE = `usage:
  pnpm --filter @notify/worker cli unknown-sends [--limit N]
      sends whose outcome is unknown (the worker died while the provider was being called and the
      provider cannot deduplicate a second call), newest first: message id, environment, provider,
      since, attempts, error. Check each with the provider: notify never sends them again.
  pnpm --filter @notify/worker cli dead-letters [--limit N]
      jobs that failed on every allowed delivery, newest first: id, since, environment,
      deliveries, what the job asks for, the last error.
  pnpm --filter @notify/worker cli replay ID...
      puts those dead letters' jobs back on their streams (once the cause is fixed) and forgets them.
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
  const [command, ...ids] = positionals;
  const limit = Number(values.limit);
  const listing = command === "unknown-sends" || command === "dead-letters";
  if (
    !Number.isInteger(limit) ||
    limit < 1 ||
    (listing && ids.length > 0) ||
    (command === "replay" && (ids.length === 0 || !ids.every((id) => /^\d+$/.test(id))))
  ) {
    throw new Error(USAGE);
  }
  if (!listing && command !== "replay") throw new Error(USAGE);
  const config = readConfig();
  const streams: WorkerStreams = {
    jobs: { name: config.JOBS_STREAM, subjectPrefix: config.JOBS_SUBJECT_PREFIX },
    deliveries: { name: config.DELIVERIES_STREAM, subjectPrefix: config.DELIVERIES_SUBJECT_PREFIX },
  };
  const pool = createPool(config.DATABASE_URL, 1);
  try {
    if (command === "unknown-sends") process.stdout.write(await unknownSendsReport(pool, limit));
    else if (command === "dead-letters") process.stdout.write(await deadLettersReport(pool, streams, limit));
    else {
      const nats = await connectNats(config.NATS_URL, "worker-cli");
      try {
        for (const [id, replayed] of await replayDeadLetters(pool, nats, ids)) {
          process.stdout.write(`${id}\t${replayed ? "replayed" : "no such dead letter (or being replayed)"}\n`);
        }
      } finally {
        await nats.close();
      }
    }
  } finally {
    await pool.end();
  }
});
