import getRawBody from "raw-body";
import type { Context } from "koa";
import { HttpError } from "./errors.js";

export const KIB = 1024;
export const MIB = 1024 * KIB;

const EMPTY = Buffer.alloc(0);

/**
 * Reads and parses a JSON body whatever its declared type (curl's default form type included);
 * over `limit` bytes → 413, malformed → 400, empty → undefined.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<{ value: unknown; raw: Buffer }> {
  // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3): most GETs.
  if (ctx.req.headers["content-length"] === undefined && ctx.req.headers["transfer-encoding"] === undefined) return { value: undefined, raw: EMPTY };
  const declared = Number(ctx.get("content-length") || 0);
  if (declared > limit) throw new HttpError(413, "Request body too large");
  const length = ctx.get("content-length");
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, length ? { limit, length } : { limit });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === "entity.too.large") throw new HttpError(413, "Request body too large");
    if (type === "request.size.invalid") throw new HttpError(400, "Request body does not match its Content-Length");
    throw new HttpError(400, "Request body could not be read");
  }
  if (raw.length === 0) return { value: undefined, raw };
  try {
    return { value: JSON.parse(raw.toString("utf8")) as unknown, raw };
  } catch {
    throw new HttpError(400, "Request body is not valid JSON");
  }
}
