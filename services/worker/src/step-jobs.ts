import type { JsonObject } from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import type { messagesV1, triggersV1, workflowsV1 } from "@notify/proto";
import { channelName, StepType, stepChannel, timedDayNames } from "@notify/runtime";
import type { RecipientProfile } from "./compose.js";
import type { Digested } from "./digest.js";

/**
 * The jobs of steps that write no message (delay and digest steps, and steps their conditions
 * skipped), recorded as Novu's activity shows them: its job statuses and its execution detail texts.
 */

type DetailStatus = "Success" | "Pending" | "Failed";
type Detail = { detail: string; status: DetailStatus; raw?: string };
/** A RecordStepJobs group as this module builds it. */
interface StepJobGroup {
  transactionId: string;
  templateId: string;
  templateIdentifier: string;
  payload: JsonObject;
  stepId: string;
  messageTemplateId: string;
  type: string;
  status: string;
  details: Detail[];
  digest?: JsonObject;
  later?: { stepId: string; type: string; providerId?: string }[];
  providerId?: string;
  notification: messagesV1.NotificationTraits;
  recipients: { subscriberId: string; externalSubscriberId: string }[];
}

/** One subscriber's run changing the job of one step (the main step, whichever variant ran). */
export interface StepJobChange {
  job: triggersV1.TriggerJob;
  subscriber: RecipientProfile;
  step: workflowsV1.Step;
  status: "delayed" | "merged" | "completed" | "skipped" | "canceled" | "failed";
  details: Detail[];
  digest?: JsonObject;
}

/** Digest events a job shows (and its "Digest triggered events" detail lists): the first of them. */
export const MAX_JOB_DIGEST_EVENTS = 100;

const QUEUED: Detail = { detail: "Step queued", status: "Pending" };

/**
 * Novu's digest metadata of a delay or digest job (what it waits for), as Novu stores it: its
 * type as the step names it, and 'No-Key-Provided' without a digest key; none for a scheduled delay.
 */
function digestMetadataOf(step: workflowsV1.Step): JsonObject | undefined {
  const metadata = step.metadata;
  if (!metadata || metadata.type === "scheduled") return undefined;
  const type = metadata.type === "timed" || metadata.type === "backoff" ? metadata.type : "regular";
  const timed = metadata.timed;
  const days = timed ? timedDayNames(timed) : undefined;
  return {
    type,
    ...(metadata.amount !== undefined ? { amount: metadata.amount } : {}),
    ...(metadata.unit !== undefined ? { unit: metadata.unit } : {}),
    digestKey: metadata.digestKey || "No-Key-Provided",
    ...(metadata.backoff !== undefined ? { backoff: metadata.backoff } : {}),
    ...(metadata.backoffAmount !== undefined ? { backoffAmount: metadata.backoffAmount } : {}),
    ...(metadata.backoffUnit !== undefined ? { backoffUnit: metadata.backoffUnit } : {}),
    ...(metadata.updateMode !== undefined ? { updateMode: metadata.updateMode } : {}),
    ...(type === "timed"
      ? {
          timed: {
            ...(metadata.cron !== undefined ? { cronExpression: metadata.cron } : {}),
            ...(timed?.atTime !== undefined ? { atTime: timed.atTime } : {}),
            ...(days ? { weekDays: [...days.weekDays] } : {}),
            ...(days?.ordinal !== undefined ? { ordinal: days.ordinal } : {}),
            ...(days?.ordinalValue !== undefined ? { ordinalValue: days.ordinalValue } : {}),
            ...(timed && timed.monthDays.length > 0 ? { monthDays: timed.monthDays.map(Number) } : {}),
            ...(timed?.monthlyType !== undefined ? { monthlyType: timed.monthlyType } : {}),
          },
        }
      : {}),
    events: [],
  };
}

const change = (
  job: triggersV1.TriggerJob,
  subscriber: RecipientProfile,
  step: workflowsV1.Step,
  status: StepJobChange["status"],
  details: Detail[],
  digest = digestMetadataOf(step),
): StepJobChange => ({ job, subscriber, step, status, details, ...(digest ? { digest } : {}) });

/** What a delay or a digest that opens waits, as Novu says it first ("Step delayed", "Step digested"); nothing when it waits for no time. */
function waiting(detail: string, runAt: Date, now: number): Detail[] {
  const delay = runAt.getTime() - now;
  return delay > 0 ? [{ detail, status: "Pending", raw: JSON.stringify({ delay }) }] : [];
}

/** A delay step the run waits at until `runAt`. */
export const delayed = (job: triggersV1.TriggerJob, subscriber: RecipientProfile, step: workflowsV1.Step, runAt: Date, now: number) =>
  change(job, subscriber, step, "delayed", [...waiting("Step delayed", runAt, now), QUEUED]);

/** A delay step whose wait came to its end: the run goes on after it. */
export const delayFinished = (job: triggersV1.TriggerJob, subscriber: RecipientProfile, step: workflowsV1.Step) =>
  change(job, subscriber, step, "completed", [{ detail: "Delay is finished", status: "Success" }]);

/**
 * A delay or digest step whose wait cannot be computed: the run of this subscriber fails there.
 * Novu words only the delay's; a digest's follows it.
 */
export const misconfigured = (job: triggersV1.TriggerJob, subscriber: RecipientProfile, step: workflowsV1.Step, error: string) =>
  change(job, subscriber, step, "failed", [
    {
      detail: step.template?.type === StepType.DIGEST ? "Invalid digest configuration" : "Invalid delay configuration",
      status: "Failed",
      raw: JSON.stringify({ error }),
    },
  ]);

/**
 * How an event entered a digest step: it opened the digest (its run goes on when the digest
 * ends), joined one another trigger opened, or was let through at once (a backoff without a
 * recent event).
 */
export function digestEntered(
  job: triggersV1.TriggerJob,
  subscriber: RecipientProfile,
  step: workflowsV1.Step,
  outcome: "opened" | "merged" | "passed",
  runAt: Date,
  now: number,
): StepJobChange {
  if (outcome === "opened") return change(job, subscriber, step, "delayed", [...waiting("Step digested", runAt, now), QUEUED]);
  if (outcome === "merged") return change(job, subscriber, step, "merged", [{ detail: "Digest was merged with other digest", status: "Success" }, QUEUED]);
  return change(job, subscriber, step, "skipped", [{ detail: "Digest was skipped, first backoff event", status: "Success" }, QUEUED]);
}

/** A digest that ended: the run goes on with its events. */
export function digestTriggered(job: triggersV1.TriggerJob, subscriber: RecipientProfile, step: workflowsV1.Step, digested: Digested): StepJobChange {
  const events = digested.events.slice(0, MAX_JOB_DIGEST_EVENTS);
  const digest = digestMetadataOf(step);
  return change(
    job,
    subscriber,
    step,
    "completed",
    [
      { detail: "Start digesting", status: "Pending" },
      { detail: "Digest triggered events", status: "Success", raw: JSON.stringify(events) },
    ],
    { ...(digest ?? { type: "regular" }), events: [...events] },
  );
}

/** What skipped a step: its v1 filters, or a v2 step's `skip` conditions (which Novu's bridge evaluates). */
export type SkippedBy = "filters" | "skip";

/**
 * A step its conditions skipped: a delay or digest step is skipped, a channel step's sending
 * canceled, saying which conditions as Novu does.
 */
export function skippedByConditions(
  job: triggersV1.TriggerJob,
  subscriber: RecipientProfile,
  step: workflowsV1.Step,
  by: SkippedBy,
): StepJobChange | undefined {
  const type = stepJobType(step);
  if (type === undefined) return undefined;
  if (type === "delay" || type === "digest") {
    return change(job, subscriber, step, "skipped", [QUEUED, { detail: "Step was skipped based on steps conditions", status: "Success" }]);
  }
  const detail: Detail =
    by === "skip"
      ? { detail: "Bridge execution skipped", status: "Failed", raw: JSON.stringify({ skip: true }) }
      : { detail: "Step was skipped based on steps conditions", status: "Failed", raw: JSON.stringify({ filter: { passed: false } }) };
  return change(job, subscriber, step, "canceled", [QUEUED, detail]);
}

/** A channel step the subscriber's or the workflow's preferences turned off: its sending canceled, saying which. */
export const filteredByPreferences = (
  job: triggersV1.TriggerJob,
  subscriber: RecipientProfile,
  step: workflowsV1.Step,
  filter: { detail: string; raw: string },
): StepJobChange => change(job, subscriber, step, "canceled", [QUEUED, { detail: filter.detail, status: "Success", raw: filter.raw }]);

/** The job type Novu gives a step, for the steps whose jobs are recorded here. */
function stepJobType(step: workflowsV1.Step): string | undefined {
  const type = step.template?.type;
  if (type === StepType.DELAY) return "delay";
  if (type === StepType.DIGEST) return "digest";
  const channel = type === undefined ? undefined : stepChannel(type);
  return channel === undefined ? undefined : channelName(channel);
}

/** The active steps behind `step` in the workflow the run was triggered with, each with its job type. */
function laterSteps(workflow: workflowsV1.Workflow, step: workflowsV1.Step): { stepId: string; type: string }[] {
  const index = workflow.steps.findIndex((candidate) => candidate.id === step.id);
  if (index < 0) return [];
  return workflow.steps.slice(index + 1).flatMap((later) => {
    const type = later.active === false ? undefined : stepJobType(later);
    return type === undefined ? [] : [{ stepId: later.id, type }];
  });
}

/** Groups, at most, and recipients in all, of one RecordStepJobs call. */
const MAX_GROUPS = 1000;
const MAX_RECIPIENTS = 10_000;
/** About how large one call may grow, unless a group alone is larger: a digest's groups carry its events, one group per subscriber. */
const CALL_BYTES = 4 * 1024 * 1024;
/** About what a recipient adds to a call: two ids. */
const RECIPIENT_BYTES = 64;

/** What recording step jobs reads of the run beside the changes. */
export interface StepJobRecording {
  /** What a notification a change creates keeps. */
  traitsOf: (change: StepJobChange) => messagesV1.NotificationTraits;
  /** The provider a job of this channel carries: the environment's first active integration of the channel's (undefined: none). */
  providerOf: (channel: string) => Promise<string | undefined>;
}

/** The job types that carry an integration's provider, as Novu's jobs do from the trigger (in-app's is Novu's own). */
const CARRIES_PROVIDER = new Set(["email", "sms", "chat", "push"]);

/** Gives the groups' channel jobs, and the channel steps behind their delays and digests, the provider of their channel, each looked up once. */
async function stampProviders(groups: readonly StepJobGroup[], providerOf: StepJobRecording["providerOf"]): Promise<void> {
  const entries = groups.flatMap((group) => [group, ...(group.later ?? [])]).filter((entry) => CARRIES_PROVIDER.has(entry.type));
  const providers = new Map<string, Promise<string | undefined>>();
  for (const { type } of entries) if (!providers.has(type)) providers.set(type, providerOf(type));
  for (const entry of entries) {
    const providerId = await providers.get(entry.type)!;
    if (providerId !== undefined) entry.providerId = providerId;
  }
}

/**
 * Records the changes, alike ones (one step, status, details, digest and notification traits of
 * one trigger) as one group: the run pauses of a fan-out page at one delay are one group of a
 * thousand recipients.
 */
export async function recordStepJobs(
  changes: readonly StepJobChange[],
  messages: Client<typeof messagesV1.MessageService>,
  call: CallOptions,
  recording: StepJobRecording,
): Promise<void> {
  const groups = new Map<string, StepJobGroup>();
  for (const change of changes) {
    const { job, subscriber, step, status, details, digest } = change;
    const type = stepJobType(step)!;
    const notification = recording.traitsOf(change);
    const key = JSON.stringify([job.triggerId, step.id, status, details, digest, notification.topics.length > 0]);
    let group = groups.get(key);
    if (!group) {
      const workflow = job.workflow!;
      group = {
        transactionId: job.transactionId,
        templateId: workflow.id,
        templateIdentifier: workflow.identifier,
        payload: (job.event?.payload ?? {}) as JsonObject,
        stepId: step.id,
        messageTemplateId: step.template?.id ?? step.id,
        type,
        status,
        details,
        ...(digest ? { digest } : {}),
        ...(type === "delay" || type === "digest" ? { later: laterSteps(workflow, step) } : {}),
        notification,
        recipients: [],
      };
      groups.set(key, group);
    }
    group.recipients.push({ subscriberId: subscriber.id, externalSubscriberId: subscriber.subscriberId });
  }
  await stampProviders([...groups.values()], recording.providerOf);
  let batch: StepJobGroup[] = [];
  let recipients = 0;
  let bytes = 0;
  const flush = async () => {
    if (batch.length > 0) await messages.recordStepJobs({ groups: batch }, call);
    batch = [];
    recipients = 0;
    bytes = 0;
  };
  for (const group of groups.values()) {
    const shared = JSON.stringify([group.payload, group.details, group.digest]).length;
    for (let start = 0; start < group.recipients.length; start += MAX_RECIPIENTS) {
      const part = group.recipients.slice(start, start + MAX_RECIPIENTS);
      const size = shared + part.length * RECIPIENT_BYTES;
      if (batch.length === MAX_GROUPS || recipients + part.length > MAX_RECIPIENTS || (batch.length > 0 && bytes + size > CALL_BYTES)) await flush();
      batch.push({ ...group, recipients: part });
      recipients += part.length;
      bytes += size;
    }
  }
  await flush();
}
