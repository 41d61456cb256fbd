import { pino, type Logger } from "pino";
import { currentRequestId, currentTraceId } from "./tracing.js";

export type { Logger };

/** Paths that may hold secrets; pino replaces them wherever a log call passes such an object. */
const REDACTED = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "apiKey",
  "*.apiKey",
  "credentials",
  "*.credentials",
  "secretKey",
  "*.secretKey",
  "password",
  "*.password",
  "token",
  "*.token",
];

export function createLogger(name: string, level: string): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED, censor: "[redacted]" },
    // Every line says which request caused it (and which trace, with tracing on), in whichever
    // process the request's work runs.
    mixin: () => {
      const requestId = currentRequestId();
      if (!requestId) return {};
      const traceId = currentTraceId();
      return traceId ? { requestId, traceId } : { requestId };
    },
  });
}
