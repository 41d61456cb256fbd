import { CronExpressionParser } from "cron-parser";
import { isTimeZone } from "./time-zones.js";

/** Why `expression` is not a cron expression (Novu's timed delay and digest steps), or undefined when it is one. */
export function cronProblem(expression: string): string | undefined {
  try {
    CronExpressionParser.parse(expression, { strict: false });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The first occurrence of a cron expression after `after`, on the clock of `timeZone` (UTC's when
 * absent or unknown to Intl), as Novu reads a timed step's cron on the subscriber's clock;
 * undefined for an expression that is not one or never occurs.
 */
export function nextCronRun(expression: string, after: Date, timeZone?: string): Date | undefined {
  const zone = timeZone && isTimeZone(timeZone) ? timeZone : "UTC";
  try {
    return CronExpressionParser.parse(expression, { currentDate: after, tz: zone }).next().toDate();
  } catch {
    return undefined;
  }
}
