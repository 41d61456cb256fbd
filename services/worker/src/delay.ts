import type { JsonObject } from "@bufbuild/protobuf";
import type { workflowsV1 } from "@notify/proto";
import { nextCronRun } from "@notify/runtime";
import { objectAt, scheduledDate } from "@notify/templates";

const UNIT_MS: Record<string, number> = {
  seconds: 1_000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 7 * 86_400_000,
  // Novu counts a month as 30 days.
  months: 30 * 86_400_000,
};

/** amount × unit in milliseconds (the units of delay and digest steps); undefined when either is invalid. */
export function durationMs(amount: number | undefined, unit: string | undefined): number | undefined {
  const unitMs = unit !== undefined && Object.hasOwn(UNIT_MS, unit) ? UNIT_MS[unit] : undefined;
  return amount === undefined || amount < 0 || !Number.isFinite(amount) || unitMs === undefined ? undefined : amount * unitMs;
}

export type DelayOutcome = { runAt: Date } | { error: string };

/**
 * When the steps after a delay step run: its window from now (windowMs); for a scheduled delay, the
 * date at `delayPath` in the payload, which must be in the future; for a timed one, its cron's next
 * occurrence on the subscriber's clock.
 */
export function delayUntil(step: workflowsV1.Step, payload: JsonObject, overrides: JsonObject, now = Date.now(), timeZone?: string): DelayOutcome {
  const metadata = step.metadata;
  if (metadata?.type === "timed") return cronRun("Delay", metadata.cron, now, timeZone);
  if (metadata?.type === "scheduled") {
    const at = scheduledDate(payload, metadata.delayPath);
    if (!at) return { error: `Delay date at path ${metadata.delayPath ?? ""} is missing or not a date` };
    if (at.getTime() <= now) return { error: "Delay date at path must be a future date" };
    return { runAt: at };
  }
  const duration = windowMs(metadata, overrides);
  if (duration === undefined) return { error: "Delay step has no valid amount and unit" };
  return { runAt: new Date(now + duration) };
}

/**
 * How long a delay or a regular digest step waits: the trigger's `overrides.delay` {amount, unit}
 * when both are valid, as Novu takes it, else the step's own amount × unit.
 */
export function windowMs(metadata: workflowsV1.StepMetadata | undefined, overrides: JsonObject): number | undefined {
  const given = objectAt(overrides, "delay");
  const overridden = typeof given["amount"] === "number" && typeof given["unit"] === "string" ? durationMs(given["amount"], given["unit"]) : undefined;
  return overridden ?? durationMs(metadata?.amount, metadata?.unit);
}

/** When a timed step's wait ends: its cron's next occurrence after now, on the subscriber's clock. */
export function cronRun(kind: "Delay" | "Digest", cron: string | undefined, now: number, timeZone: string | undefined): DelayOutcome {
  const runAt = cron === undefined ? undefined : nextCronRun(cron, new Date(now), timeZone);
  return runAt ? { runAt } : { error: `${kind} step has no cron expression that occurs: ${cron ?? ""}` };
}
