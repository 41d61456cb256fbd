import type { JsonObject } from "@bufbuild/protobuf";
import type { workflowsV1 } from "@notify/proto";
import { valueAtPath, type Render } from "@notify/templates";
import { durationMs } from "./delay.js";

/** What a run reaching a throttle step is counted against. */
export interface ThrottlePlan {
  key: string;
  /** When a window this run opens ends. */
  windowEnds: Date;
  threshold: number;
}

/** A payload path as the controls may name it: `payload.x` or `x`. */
const payloadPath = (path: string) => path.replace(/^payload\./, "");

/** The value a throttle key gives this run: a template's rendering, or the payload's value at the path; "" for none. */
function keyValue(throttleKey: string | undefined, payload: JsonObject, render: Render): string {
  if (!throttleKey) return "";
  // Novu's dashboard writes the key as a template ({{payload.userId}}); a path names the value itself.
  if (throttleKey.includes("{{")) return render(throttleKey);
  const value = valueAtPath(payload, payloadPath(throttleKey));
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** When a dynamic window ends: the date the payload holds at the path, or now plus the {amount, unit} it holds. */
function dynamicEnd(path: string | undefined, payload: JsonObject, now: number): Date | { error: string } | undefined {
  const value = path ? valueAtPath(payload, payloadPath(path)) : undefined;
  if (typeof value === "string" || typeof value === "number") {
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) return undefined;
    return at.getTime() > now ? at : { error: "Throttle window date is in the past" };
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const { amount, unit } = value as Record<string, unknown>;
    const duration = durationMs(typeof amount === "number" ? amount : undefined, typeof unit === "string" ? unit : undefined);
    return duration === undefined ? undefined : new Date(now + duration);
  }
  return undefined;
}

/**
 * What a throttle step counts a subscriber's run against, as Novu's throttle does: one window per
 * `scope` (the workflow, its step and the subscriber) and the throttle key's value, letting
 * `threshold` runs through (1 unless set). A fixed window lasts amount × unit; a dynamic one ends
 * when the payload at `dynamicKey` says. Undefined when the step names no window: Novu then lets
 * every run through. An error for a dynamic window that already ended: the run fails at the step.
 */
export function throttlePlan(
  step: workflowsV1.Step,
  scope: string,
  payload: JsonObject,
  render: Render,
  now: number,
): ThrottlePlan | { error: string } | undefined {
  const metadata = step.metadata;
  let windowEnds: Date | { error: string } | undefined;
  if (metadata?.type === "dynamic") windowEnds = dynamicEnd(metadata.dynamicKey, payload, now);
  else {
    const duration = durationMs(metadata?.amount, metadata?.unit);
    windowEnds = duration === undefined ? undefined : new Date(now + duration);
  }
  if (windowEnds === undefined || "error" in windowEnds) return windowEnds;
  const value = keyValue(metadata?.throttleKey, payload, render);
  return { key: value ? `${scope}:${value}` : scope, windowEnds, threshold: Math.max(1, metadata?.threshold ?? 1) };
}
