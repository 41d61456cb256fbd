import getRawBody from "raw-body";
import { holdsNul } from "@notify/runtime";
import type { Context } from "koa";
import { HttpError, validationError } from "./errors.js";
import { fieldPath } from "./validation.js";

export const KIB = 1024;
export const MIB = 1024 * KIB;

const EMPTY = Buffer.alloc(0);

/**
 * The deepest a body's arrays and objects may nest. Far deeper values overflow the stack of every
 * recursive walk (serializing an error that echoes one, measuring a payload); a free-form field
 * (`payload`, `data`) travels as a protobuf Struct, two messages per level, and protobuf decoding
 * refuses a hundred nested messages, so one nested a few dozen levels already fails downstream.
 */
export const MAX_BODY_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** Whether valid JSON text nests arrays and objects deeper than `max`, read without recursion. */
export function nestedDeeperThan(raw: Buffer, max: number): boolean {
  // Each level takes an opening character: a shorter text cannot be deeper.
  if (raw.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < raw.length; index++) {
    const byte = raw[index];
    if (inString) {
      if (byte === BACKSLASH) index++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** How JSON writes a NUL character: it cannot hold one raw, so a body without this has none. */
const NUL_ESCAPE = Buffer.from("\\u0000");

/** The path of the first key or string in `value` that holds a NUL character, if any. */
function nulPath(value: unknown, path: PropertyKey[]): PropertyKey[] | undefined {
  if (typeof value === "string") return holdsNul(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = nulPath(item, [...path, index]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const found = holdsNul(key) ? [...path, key] : nulPath(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * 422 naming the first key or string of `value` that holds a NUL character. Postgres cannot store
 * one, and in a batched read (an unseen count, a feed page) the statement error it causes would
 * fail every other caller of the batch.
 */
export function refuseNul(value: unknown): void {
  const nul = nulPath(value, []);
  if (nul) throw validationError({ [fieldPath(nul)]: { messages: ["must not contain a NUL character (\\u0000)"] } });
}

/** A body's bytes as they arrived; over `limit` bytes → 413, shorter than declared → 400. */
export async function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3): most GETs.
  if (ctx.req.headers["content-length"] === undefined && ctx.req.headers["transfer-encoding"] === undefined) return EMPTY;
  const declared = Number(ctx.get("content-length") || 0);
  if (declared > limit) throw new HttpError(413, "Request body too large");
  const length = ctx.get("content-length");
  try {
    return await getRawBody(ctx.req, length ? { limit, length } : { limit });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === "entity.too.large") throw new HttpError(413, "Request body too large");
    if (type === "request.size.invalid") throw new HttpError(400, "Request body does not match its Content-Length");
    throw new HttpError(400, "Request body could not be read");
  }
}

/**
 * Reads and parses a JSON body whatever its declared type (curl's default form type included);
 * over `limit` bytes → 413, malformed or nested deeper than MAX_BODY_DEPTH → 400, a NUL character
 * anywhere → 422, empty → undefined.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<{ value: unknown; raw: Buffer }> {
  const raw = await readRawBody(ctx, limit);
  if (raw.length === 0) return { value: undefined, raw };
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new HttpError(400, "Request body is not valid JSON");
  }
  // JSON.parse itself does not recurse, so the depth is checked on text known to be valid.
  if (nestedDeeperThan(raw, MAX_BODY_DEPTH)) throw new HttpError(400, `Request body is nested too deeply: at most ${MAX_BODY_DEPTH} levels`);
  // Postgres cannot store a NUL character in text or jsonb. Refused here, it cannot reach a
  // trigger's job and fail there on every delivery, after the trigger was accepted.
  if (raw.includes(NUL_ESCAPE)) refuseNul(value);
  return { value, raw };
}
