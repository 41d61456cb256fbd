import { Code, ConnectError } from "@connectrpc/connect";
import { fieldErrorsOf, isUnavailableError, objectId, type FieldErrors, type Logger } from "@notify/runtime";
import type { Context, Next } from "koa";
import { z } from "zod";

/** An error answered with `status` and the error body, plus any extra top-level fields. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const isCode = (error: unknown, code: Code) => error instanceof ConnectError && error.code === code;

export const validationError = (errors: FieldErrors, message = "Validation Error") => new HttpError(422, message, { errors });

/** RPC status → HTTP status. 409 is kept for "already exists": the SDK retries 409 and 5xx. */
const STATUS_BY_CODE: Record<Code, number> = {
  [Code.Canceled]: 503,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 422,
  [Code.DeadlineExceeded]: 503,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 503,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 500,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

const REASON: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
};

export function httpErrorFromRpc(error: ConnectError): HttpError {
  const status = STATUS_BY_CODE[error.code];
  if (status === 422) {
    const errors = fieldErrorsOf(error) ?? { general: { messages: [error.rawMessage], value: "No Value Recorded" } };
    return new HttpError(422, error.rawMessage, { errors });
  }
  if (status === 503) return new HttpError(503, "Service temporarily unavailable, retry later", {}, { "Retry-After": "1" });
  if (status === 500) return new HttpError(500, "internal");
  return new HttpError(status, error.rawMessage);
}

/**
 * Every error answer's body (never wrapped), as the API description documents it. Loose: some
 * errors carry more, as the SDK reads them (a 409 on a create carries the existing resource).
 */
export const errorBodySchema = z.looseObject({
  statusCode: z.int().min(400).max(599),
  timestamp: z.iso.datetime(),
  path: z.string().describe("The request's path and query"),
  message: z.string(),
  error: z.string().optional().describe("The status's reason phrase"),
  errors: z
    .record(z.string(), z.object({ messages: z.array(z.string()), value: z.unknown().optional() }))
    .optional()
    .describe("Validation failures (422): each failing field's messages and, when short, the value refused"),
  errorId: z.string().optional().describe("Unexpected failures (500): the id the failure was logged with, for support"),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** Errors are never wrapped: `{statusCode, timestamp, path, message, error?, errors?}`. */
export function errorBody(ctx: Context, status: number, message: string, extra: Record<string, unknown> = {}): ErrorBody {
  return {
    statusCode: status,
    timestamp: new Date().toISOString(),
    path: ctx.originalUrl,
    message,
    ...(REASON[status] ? { error: REASON[status] } : {}),
    ...extra,
  };
}

function classify(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error instanceof ConnectError) return httpErrorFromRpc(error);
  const raw = error as { status?: number; expose?: boolean; message?: string };
  if (isUnavailableError(error)) return new HttpError(503, "Service temporarily unavailable, retry later", {}, { "Retry-After": "1" });
  if (typeof raw.status === "number" && raw.status >= 400 && raw.status < 500 && raw.expose) {
    return new HttpError(raw.status, raw.message ?? "Bad Request");
  }
  return undefined;
}

/** Sets the error response for `error`; unknown failures are logged with an id the client is given. */
export function renderError(ctx: Context, error: unknown, log: Logger): void {
  const known = classify(error);
  if (known && known.status !== 500) {
    ctx.status = known.status;
    ctx.set(known.headers);
    ctx.body = errorBody(ctx, known.status, known.message, known.status < 500 ? known.extra : {});
    return;
  }
  const errorId = objectId();
  log.error({ err: error, errorId }, "request failed");
  ctx.status = 500;
  ctx.body = errorBody(ctx, 500, "Internal server error, contact support and provide them with the errorId", { errorId });
}

/** Outermost error boundary: every failure, and every unmatched route, becomes the error body. */
export function errorMiddleware(log: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      // An unknown path (404), or a known one without the method (405, with Allow).
      if (ctx.status >= 400 && ctx.body === undefined) {
        const status = ctx.status;
        ctx.body = errorBody(ctx, status, `Cannot ${ctx.method} ${ctx.path}`);
        ctx.status = status; // assigning a body would otherwise turn the status into 200
      }
    } catch (error) {
      renderError(ctx, error, log);
    }
  };
}
