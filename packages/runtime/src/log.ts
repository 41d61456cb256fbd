import { pino, type Logger } from "pino";

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
  });
}
