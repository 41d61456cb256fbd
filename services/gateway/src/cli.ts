#!/usr/bin/env node
import { parseArgs } from "node:util";
import { connectRedis, createPool, ensureDatabase, migrate, runMain } from "@notify/runtime";
import { addKey, DEFAULT_ENVIRONMENT, DEFAULT_ORGANIZATION, generateKey } from "./accounts.js";
import { forgetKeys } from "./auth.js";
import { readConfig, sealerOf } from "./config.js";
import { normalizeOrigin } from "./cors.js";
import { environmentRateLimits, SERVICE_LEVEL_NAMES, type EnvironmentRateLimits } from "./rate-limits.js";
import * as store from "./store.js";

const USAGE = `usage:
  notify keys create [--environment NAME] [--organization NAME] [--label TEXT]
                     [--expires-in DURATION | --expires-at ISO-8601]
                                                                   print a new API key; DURATION is a number and
                                                                   s, m, h, d or w (e.g. 90d); without, it never expires
  notify keys list [--limit N]                                     the newest N keys (100 unless given): id, prefix, label,
                                                                   environment (and its applicationIdentifier), created, expiry,
                                                                   last used, state
  notify keys revoke PREFIX|ID                                     revoke the keys starting with PREFIX, or the key with ID
  notify inbox origins [--environment NAME] [--organization NAME] ORIGIN...
                                                                   the only browser origins the environment's Inbox may be used from
  notify inbox origins [--environment NAME] [--organization NAME] --any
                                                                   any origin (the default)
  notify rate-limits set [--environment NAME] [--organization NAME] [--service-level LEVEL]
                         [--trigger N] [--configuration N] [--global N]
                                                                   the environment's API rate limits: a service level
                                                                   (${SERVICE_LEVEL_NAMES.join(", ")}) and/or
                                                                   requests per second of single categories
  notify rate-limits default [--environment NAME] [--organization NAME]
                                                                   the gateway's defaults (RATE_LIMIT_* variables)`;

/** The `rate-limits set` options as stored. */
function rateLimitsOf(values: Record<string, string | boolean | undefined>): EnvironmentRateLimits {
  const given = Object.fromEntries(
    Object.entries({ serviceLevel: values["service-level"], trigger: values.trigger, configuration: values.configuration, global: values.global })
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, name === "serviceLevel" || !/^\d+$/.test(String(value)) ? value : Number(value)]),
  );
  const parsed = environmentRateLimits.safeParse(given);
  if (!parsed.success || Object.keys(given).length === 0) throw new Error(USAGE);
  return parsed.data;
}

const LABEL_MAX_LENGTH = 100;
/** Keys `keys list` shows unless --limit says otherwise. */
const KEYS_LISTED = 100;
const DURATION_UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** The `keys create --label` option as stored: one printable line (it is shown in `keys list`'s columns). */
function labelOf(given: string | undefined): string | undefined {
  if (given === undefined) return undefined;
  const label = given.trim();
  if (label.length === 0 || label.length > LABEL_MAX_LENGTH || /\p{Cc}/u.test(label)) {
    throw new Error(`a label is 1 to ${LABEL_MAX_LENGTH} characters on one line`);
  }
  return label;
}

/** The `keys create --expires-in` / `--expires-at` options as the moment the key stops working, which must be ahead. */
function expiryOf(expiresIn: string | undefined, expiresAt: string | undefined, now: number): Date | undefined {
  if (expiresIn !== undefined && expiresAt !== undefined) throw new Error("give --expires-in or --expires-at, not both");
  let expiry: Date;
  if (expiresIn !== undefined) {
    const match = /^(\d{1,6})([smhdw])$/.exec(expiresIn);
    if (!match) throw new Error(`not a duration (a number and s, m, h, d or w, e.g. 90d): ${expiresIn}`);
    expiry = new Date(now + Number(match[1]) * DURATION_UNIT_MS[match[2]!]!);
  } else if (expiresAt !== undefined) {
    // A date and a time, so the moment does not depend on where the command runs.
    expiry = new Date(/^\d{4}-\d{2}-\d{2}T.+(Z|[+-]\d{2}:?\d{2})$/i.test(expiresAt) ? expiresAt : Number.NaN);
    if (Number.isNaN(expiry.getTime())) throw new Error(`not an ISO 8601 date and time with a zone (e.g. 2030-01-31T00:00:00Z): ${expiresAt}`);
  } else {
    return undefined;
  }
  if (expiry.getTime() <= now) throw new Error(`the expiry must be in the future: ${expiry.toISOString()}`);
  return expiry;
}

/** A key's state in `keys list`: revoked, expired or active. */
function keyStateOf(row: store.KeyListRow, now: number): string {
  if (row.revoked_at) return `revoked ${row.revoked_at.toISOString()}`;
  if (row.expires_at && row.expires_at.getTime() <= now) return "expired";
  return "active";
}

/** The `inbox origins` arguments as stored: null for --any, else the normalized origins. */
function originsOf(any: boolean | undefined, given: string[]): string[] | null {
  if (any) {
    if (given.length > 0) throw new Error(USAGE);
    return null;
  }
  if (given.length === 0) throw new Error(USAGE);
  return given.map((text) => {
    const origin = normalizeOrigin(text);
    if (!origin) throw new Error(`not an origin (scheme://host[:port]): ${text}`);
    return origin;
  });
}

runMain(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      environment: { type: "string" },
      organization: { type: "string" },
      any: { type: "boolean" },
      label: { type: "string" },
      "expires-in": { type: "string" },
      "expires-at": { type: "string" },
      "service-level": { type: "string" },
      trigger: { type: "string" },
      configuration: { type: "string" },
      global: { type: "string" },
      limit: { type: "string", default: String(KEYS_LISTED) },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    // The lines of the commands named (all of them for a bare --help), then their continuations.
    const named = positionals.join(" ");
    const entries = USAGE.split(/\n(?= {2}notify )/).slice(1);
    const chosen = entries.filter((entry) => entry.trimStart().startsWith(`notify ${named}`));
    process.stdout.write(`usage:\n${(chosen.length > 0 ? chosen : entries).join("\n")}\n`);
    return;
  }
  const [group, command, argument, ...more] = positionals;
  if ((group !== "keys" && group !== "inbox" && group !== "rate-limits") || !command) throw new Error(USAGE);
  const config = readConfig();
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 1);
  try {
    await migrate(pool, store.migrations);
    if (group === "rate-limits") {
      if ((command !== "set" && command !== "default") || argument !== undefined) throw new Error(USAGE);
      const rateLimits = command === "set" ? rateLimitsOf(values) : null;
      const organization = values.organization ?? DEFAULT_ORGANIZATION;
      const environment = values.environment ?? DEFAULT_ENVIRONMENT;
      if (!(await store.updateRateLimits(pool, organization, environment, rateLimits))) throw new Error(`no environment ${organization}/${environment}`);
      // Gateways keep an environment for a minute (environments.ts).
      process.stdout.write(
        `${organization}/${environment}: rate limits ${rateLimits ? JSON.stringify(rateLimits) : "the gateway's defaults"} (every gateway within a minute)\n`,
      );
    } else if (group === "inbox") {
      if (command !== "origins") throw new Error(USAGE);
      const origins = originsOf(values.any, argument === undefined ? [] : [argument, ...more]);
      const organization = values.organization ?? DEFAULT_ORGANIZATION;
      const environment = values.environment ?? DEFAULT_ENVIRONMENT;
      if (!(await store.updateInboxOrigins(pool, organization, environment, origins))) throw new Error(`no environment ${organization}/${environment}`);
      // Gateways keep an environment for a minute (environments.ts).
      process.stdout.write(`${organization}/${environment}: Inbox origins ${origins ? origins.join(" ") : "any"} (every gateway within a minute)\n`);
    } else if (command === "create") {
      const label = labelOf(values.label);
      const expiresAt = expiryOf(values["expires-in"], values["expires-at"], Date.now());
      if (!config.GATEWAY_ENCRYPTION_KEY) process.stderr.write("GATEWAY_ENCRYPTION_KEY is not set: the key is sealed with the public development key\n");
      const key = generateKey();
      await addKey(pool, sealerOf(config), key, { environment: values.environment, organization: values.organization, label, expiresAt });
      process.stdout.write(`${key}\n`);
    } else if (command === "list") {
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || argument !== undefined) throw new Error(USAGE);
      const rows = await store.selectKeys(pool, limit);
      const now = Date.now();
      const lines = rows.map((row) =>
        [
          row.id,
          row.prefix,
          row.label ?? "-",
          `${row.organization}/${row.environment}`,
          row.identifier,
          row.created_at.toISOString(),
          row.expires_at?.toISOString() ?? "never",
          row.last_used_at?.toISOString() ?? "never used",
          keyStateOf(row, now),
        ].join("\t"),
      );
      process.stdout.write(`${["ID\tPREFIX\tLABEL\tENVIRONMENT\tAPPLICATION IDENTIFIER\tCREATED\tEXPIRES\tLAST USED\tSTATE", ...lines].join("\n")}\n`);
      if (rows.length === limit) {
        const total = await store.countKeys(pool);
        if (total > limit) process.stderr.write(`the newest ${limit} of ${total} keys; --limit N shows more\n`);
      }
    } else if (command === "revoke" && argument) {
      const hashes = await store.revokeKeys(pool, argument);
      if (hashes.length === 0) throw new Error(`no active key starts with or has the id ${argument}`);
      // Drop cached lookups, here and in every gateway, so the key stops working now.
      const redis = await connectRedis(config.REDIS_URL).catch(() => undefined);
      if (redis) {
        await forgetKeys(redis, hashes);
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
