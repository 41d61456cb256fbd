import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { valueAtPath } from "@notify/templates";
import { cronRun, durationMs, windowMs } from "./delay.js";
import { nextTimedBoundary } from "./timed.js";

/** How an event enters a digest step: the key it digests under and when a digest it opens ends. */
export interface DigestPlan {
  /**
   * The value at the step's digestKey path in the payload, JSON-encoded ('' when absent), and the
   * event's context keys after a space when it has any (no JSON text holds one outside a string):
   * events of other contexts digest apart, as their messages are shown apart.
   */
  key: string;
  runAt: Date;
  /** Backoff: digested only when an event of the key arrived at most this long before. */
  backoffMs?: number;
}

/**
 * The plan of a digest step for one event: regular (its window from now: the step's amount ×
 * unit, or the trigger's overrides.delay), backoff (the same, but only after a recent event of
 * the key) or timed (until the next boundary, on the subscriber's clock as Novu's timed digests
 * are: `timeZone`, UTC when it has none or an unknown one).
 */
export function digestPlan(
  step: workflowsV1.Step,
  payload: JsonObject,
  overrides: JsonObject,
  now = Date.now(),
  contextKeys: readonly string[] = [],
  timeZone?: string,
): DigestPlan | { error: string } {
  const metadata = step.metadata;
  const value = metadata?.digestKey ? valueAtPath(payload, metadata.digestKey) : undefined;
  const key = (value === undefined ? "" : JSON.stringify(value)) + (contextKeys.length > 0 ? ` ${contextKeys.join(",")}` : "");
  if (metadata?.type === "timed") {
    // A v2 step's cron, else a v1 step's recurrence.
    const boundary = metadata.cron !== undefined ? cronRun("Digest", metadata.cron, now, timeZone) : nextTimedBoundary(metadata, new Date(now), timeZone);
    return "error" in boundary ? boundary : { key, runAt: boundary.runAt };
  }
  const window = windowMs(metadata, overrides);
  if (window === undefined) return { error: "Digest step has no valid amount and unit" };
  if (metadata?.type !== "backoff" && metadata?.backoff !== true) return { key, runAt: new Date(now + window) };
  const backoffMs = durationMs(metadata.backoffAmount, metadata.backoffUnit);
  if (backoffMs === undefined) return { error: "Backoff digest step has no valid backoffAmount and backoffUnit" };
  return { key, runAt: new Date(now + window), backoffMs };
}

/** The events of the digest a run goes on from: their payloads in arrival order, where each came from and when, and their count. */
export interface Digested {
  events: readonly JsonObject[];
  arrivals: readonly { transactionId: string; arrivedAt?: Timestamp | undefined }[];
  totalCount: number;
}

/**
 * What the templates after a digest read of it: v1 templates `{{step.events}}` and
 * `{{step.total_count}}`; v2 templates `steps.<stepId>.events` (each event as Novu has it: `id`,
 * here its transaction id, `time` and `payload`) and `.eventCount`, of the last digest step before
 * step `from` of `steps`.
 */
export function digestVariables(digested: Digested | undefined, steps: readonly workflowsV1.Step[], from: number) {
  // Novu's runs read step.digest false when no digest ran before (or a backoff let the event through at once).
  if (!digested) return { step: { digest: false }, steps: {} };
  const step = { digest: true, events: digested.events, total_count: digested.totalCount };
  const stepId = steps.slice(0, from).findLast((candidate) => candidate.template?.type === StepType.DIGEST)?.stepId;
  const events = digested.events.map((payload, index) => {
    const arrival = digested.arrivals[index];
    return { id: arrival?.transactionId ?? "", time: arrival?.arrivedAt ? timestampDate(arrival.arrivedAt).toISOString() : "", payload };
  });
  return { step, steps: stepId ? { [stepId]: { events, eventCount: digested.totalCount } } : {} };
}
