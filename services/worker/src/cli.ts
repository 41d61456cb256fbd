#!/usr/bin/env node
import { parseArgs } from "node:util";
import { connectNats, createPool, runMain, type Queryable } from "@notify/runtime";
import { readConfig } from "./config.js";
import { deadLetterShown, deadLettersReport, replayDeadLetters, type WorkerStreams } from "./dead-letters.js";
import * as store from "./store.js";

/** Each command's help; `pnpm notify` serves them (scripts/notify.mjs), as does `pnpm --filter @notify/worker cli`. */
const HELP = {
  "dead-letters list": `notify dead-letters list [--limit N]
      jobs that failed on every allowed delivery, newest first: id, since, environment,
      deliveries, what the job asks for, the last error.`,
  "dead-letters show": `notify dead-letters show ID
      one dead letter: its job decoded (JSON), what it asks for, its last error.`,
  "dead-letters replay": `notify dead-letters replay ID...
      puts those dead letters' jobs back on their streams (once the cause is fixed) and forgets them.`,
  "dead-letters drop": `notify dead-letters drop ID...
      forgets those dead letters without running their jobs.`,
  "unknown-sends": `notify unknown-sends [--limit N]
      sends whose outcome is unknown (the worker died while the provider was being called and the
      provider cannot deduplicate a second call), newest first: message id, environment, provider,
      since, attempts, error. Check each with the provider: notify never sends them again.`,
} as const;

type Command = keyof typeof HELP;

const helpOf = (prefix: string) =>
  Object.entries(HELP)
    .filter(([command]) => command === prefix || command.startsWith(`${prefix} `) || prefix === "")
    .map(([, text]) => `  ${text}`)
    .join("\n");

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

/** The command the words name and its arguments; undefined when they name none. */
function commandOf(positionals: string[]): { command: Command; ids: string[] } | undefined {
  const [group, verb, ...rest] = positionals;
  if (group === "unknown-sends") return { command: group, ids: verb === undefined ? [] : [verb, ...rest] };
  const command = `${group} ${verb}`;
  return command in HELP ? { command: command as Command, ids: rest } : undefined;
}

runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { limit: { type: "string", default: "100" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(`usage:\n${helpOf(positionals.join(" "))}\n`);
    return;
  }
  const chosen = commandOf(positionals);
  if (!chosen) throw new Error(`usage:\n${helpOf(positionals[0] ?? "")}`);
  const { command, ids } = chosen;
  const limit = Number(values.limit);
  const listing = command === "unknown-sends" || command === "dead-letters list";
  const wellFormed = listing
    ? ids.length === 0 && Number.isInteger(limit) && limit >= 1
    : ids.length > 0 && ids.every((id) => /^\d+$/.test(id)) && (command !== "dead-letters show" || ids.length === 1);
  if (!wellFormed) throw new Error(`usage:\n${helpOf(command)}`);
  const config = readConfig();
  const streams: WorkerStreams = {
    jobs: { name: config.JOBS_STREAM, subjectPrefix: config.JOBS_SUBJECT_PREFIX },
    deliveries: { name: config.DELIVERIES_STREAM, subjectPrefix: config.DELIVERIES_SUBJECT_PREFIX },
  };
  const pool = createPool(config.DATABASE_URL, 1);
  try {
    if (command === "unknown-sends") process.stdout.write(await unknownSendsReport(pool, limit));
    else if (command === "dead-letters list") process.stdout.write(await deadLettersReport(pool, streams, limit));
    else if (command === "dead-letters show") {
      const shown = await deadLetterShown(pool, streams, ids[0]!);
      if (!shown) throw new Error(`no dead letter ${ids[0]}`);
      process.stdout.write(shown);
    } else if (command === "dead-letters drop") {
      const dropped = new Set(await store.deleteDeadLetters(pool, ids));
      for (const id of ids) process.stdout.write(`${id}\t${dropped.has(id) ? "dropped" : "no such dead letter"}\n`);
    } else {
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
