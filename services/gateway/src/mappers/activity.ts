import { createHash } from "node:crypto";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { messagesV1, type subscribersV1, type workflowsV1 } from "@notify/proto";
import { Channel, channelNamed, CHANNELS, type ChannelName, isChannelName, SEVERITIES, Severity, severityName, severityNamed } from "@notify/runtime";
import { z } from "zod";
import { HttpError } from "../errors.js";
import { keyString, queryInt } from "../validation.js";
import { freeFormResponse, iso, isoDateResponse } from "./common.js";
import { executionDetailResponse, executionDetailToJson, STEP_JOB_TYPES } from "./execution-details.js";
import { channelNameOf, contextKeyList, stringList } from "./messages.js";
import { workflowResponse, workflowToJson } from "./workflows.js";

/** Values each list filter takes, as the messages service checks them. */
const MAX_FILTER_VALUES = 100;

const boundedList = (name: string) =>
  stringList(name).pipe(z.array(z.string()).max(MAX_FILTER_VALUES, `${name} must contain no more than ${MAX_FILTER_VALUES} elements`));

const channelList = stringList("channels").pipe(
  z.array(z.enum(CHANNELS, { error: `each value in channels must be one of ${CHANNELS.join(", ")}` })).max(CHANNELS.length),
);

const severityList = stringList("severity").pipe(
  z.array(z.enum(SEVERITIES, { error: `each value in severity must be one of ${SEVERITIES.join(", ")}` })).transform((names) => [...new Set(names)]),
);

export const listNotificationsQuery = z.object({
  page: queryInt(0, 0, 100_000),
  // Novu's bound on an activity page.
  limit: queryInt(10, 1, 50),
  channels: channelList.optional(),
  templates: boundedList("templates").optional(),
  emails: boundedList("emails").optional(),
  subscriberIds: boundedList("subscriberIds").optional(),
  search: keyString("search").optional(),
  transactionId: keyString("transactionId").optional(),
  contextKeys: contextKeyList.optional(),
  severity: severityList.optional(),
  topicKey: keyString("topicKey").optional(),
  after: z.string().optional(),
  before: z.string().optional(),
});

/** A date bound of the activity feed, or Novu's 400 for one that is not a date. */
function feedBound(text: string | undefined, name: "after" | "before"): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) {
    throw new HttpError(400, `Invalid date format for parameter '${name}': ${text}. Please provide a valid ISO 8601 date string.`);
  }
  return date;
}

export function listNotificationsRequestOf(query: z.output<typeof listNotificationsQuery>) {
  const after = feedBound(query.after, "after");
  const before = feedBound(query.before, "before");
  if (after && before && after > before) throw new HttpError(400, "Invalid date range: start date (after) must be earlier than end date (before)");
  return {
    ...(after ? { createdAfter: timestampFromDate(after) } : {}),
    ...(before ? { createdBefore: timestampFromDate(before) } : {}),
    page: query.page,
    limit: query.limit,
    channels: (query.channels ?? []).map((name: ChannelName) => channelNamed(name)!),
    templateIds: query.templates ?? [],
    emails: query.emails ?? [],
    subscriberIds: query.subscriberIds ?? [],
    ...(query.search !== undefined ? { search: query.search } : {}),
    ...(query.transactionId !== undefined ? { transactionId: query.transactionId } : {}),
    contextKeys: query.contextKeys ?? [],
    severities: (query.severity ?? []).map((name) => severityNamed(name)),
    ...(query.topicKey !== undefined ? { topicKey: query.topicKey } : {}),
  };
}

export const activityIdParam = z.object({
  notificationId: z.string().regex(/^[0-9a-f]{24}$/, "notificationId must be a notification id (24 hex characters)"),
});

export const graphStatsQuery = z.object({ days: queryInt(32, 1, 366) });

/**
 * The provider a job shows when its message went through no integration: the SDK requires one of
 * its known ids, and these are the reference service's own providers of each channel.
 */
const NO_INTEGRATION_PROVIDER: Record<ChannelName, string> = {
  in_app: "novu",
  email: "novu-email",
  sms: "novu-sms",
  chat: "chat-webhook",
  push: "push-webhook",
};

const parsed = (json: string | undefined): Record<string, unknown> | undefined => (json === undefined ? undefined : JSON.parse(json));

/** Novu's job statuses the activity shows: of messages' jobs (failed, pending, completed) and of step jobs. */
const JOB_STATUSES = ["failed", "pending", "completed", "delayed", "merged", "skipped", "canceled"] as const;
type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Novu's job status of a step's messages: "pending" while an email, SMS, chat or push message is
 * not delivered yet (nor settled without a send, as a missing address is); then "failed" when
 * every send failed, as Novu's step fails only when no channel or device got it.
 */
function jobStatusOf(messages: readonly messagesV1.Message[]): JobStatus {
  const awaitsSend = (message: messagesV1.Message) =>
    message.channel !== Channel.IN_APP && message.status === messagesV1.MessageStatus.SENT && message.deliveredAt.length === 0;
  if (messages.some(awaitsSend)) return "pending";
  return messages.every((message) => message.status === messagesV1.MessageStatus.ERROR) ? "failed" : "completed";
}

/** The notification's messages by step, in order: Novu runs a step as one job, whatever channels or devices it reached. */
function stepsOf(messages: readonly messagesV1.Message[]): messagesV1.Message[][] {
  const steps = new Map<string, messagesV1.Message[]>();
  for (const message of messages) {
    const key = message.stepId || message.id;
    const step = steps.get(key);
    if (step) step.push(message);
    else steps.set(key, [message]);
  }
  return [...steps.values()];
}

const isStepJobType = (type: string): type is (typeof STEP_JOB_TYPES)[number] => (STEP_JOB_TYPES as readonly string[]).includes(type);

/** A page's workflows as the activity shows them: the template and each step, by id, with its place among the steps. */
function workflowViews(workflows: readonly workflowsV1.Workflow[]) {
  return new Map(
    workflows.map((workflow) => {
      const json = workflowToJson(workflow);
      const steps = new Map<string, Record<string, unknown>>();
      const places = new Map<string, number>();
      // Novu's notification channels: its active steps' types, delay and digest among them.
      const types = new Set<string>();
      /** The active steps in order (a job each in Novu's chain), by their place among all steps. */
      const chain: { id: string; type: (typeof STEP_JOB_TYPES)[number]; place: number }[] = [];
      json.steps.forEach((step, place) => {
        const type = (step["template"] as { type?: string } | undefined)?.type;
        if (step["active"] !== false && type !== undefined && isStepJobType(type)) {
          types.add(type);
          chain.push({ id: String(step["_id"]), type, place });
        }
        steps.set(String(step["_id"]), step);
        places.set(String(step["_id"]), place);
        for (const variant of (step["variants"] as Record<string, unknown>[] | undefined) ?? []) {
          steps.set(String(variant["_id"]), variant);
          places.set(String(variant["_id"]), place);
        }
      });
      return [workflow.id, { template: { _id: json._id, name: json.name, triggers: json.triggers }, steps, places, chain, channels: [...types] }];
    }),
  );
}

type WorkflowView = ReturnType<typeof workflowViews> extends Map<string, infer V> ? V : never;

/** A job's step as the activity shows it, from the workflow as it is now. */
function stepToJson(stepId: string, templateId: string, workflow: WorkflowView | undefined) {
  const step = workflow?.steps.get(stepId);
  return {
    _id: stepId,
    active: step?.["active"] ?? true,
    filters: step?.["filters"] ?? [],
    _templateId: templateId,
    ...(step?.["name"] !== undefined ? { name: step["name"] } : {}),
    ...(step?.["_parentId"] !== undefined ? { _parentId: step["_parentId"] } : {}),
  };
}

/** One step's messages as Novu's activity job (the first message's), with the attempts at sending them. */
function jobToJson(messages: readonly messagesV1.Message[], details: readonly messagesV1.ExecutionDetail[], workflow: WorkflowView | undefined) {
  const message = messages[0]!;
  const ids = new Set(messages.map((one) => one.id));
  const channel = channelNameOf(message.channel);
  const overrides = parsed(message.overridesJson);
  const payload = parsed(message.payloadJson);
  return {
    _id: message.id,
    type: channel,
    executionDetails: details.filter((detail) => ids.has(detail.messageId)).map(executionDetailToJson),
    step: stepToJson(message.stepId, message.messageTemplateId, workflow),
    ...(overrides ? { overrides } : {}),
    ...(payload ? { payload } : {}),
    providerId: message.providerId ?? NO_INTEGRATION_PROVIDER[channel],
    status: jobStatusOf(messages),
    updatedAt: iso(message.updatedAt),
  };
}

/**
 * The provider a job that sent nothing shows: of a channel's, the one it carries from the trigger
 * (the environment's first active integration of the channel's, when it had one), else Novu's
 * own of the channel; of a delay's or a digest's, Novu's own.
 */
function providerOfStepJob(type: string, carried: string | undefined): string {
  return isChannelName(type) ? (carried ?? NO_INTEGRATION_PROVIDER[type]) : "novu";
}

/**
 * The job of a step that wrote no message: a delay, a digest, or a step its conditions skipped.
 * Novu gives a delay's or a digest's job no provider, which the SDK cannot read (it requires one
 * of its known ids): those name Novu's own.
 */
function stepJobToJson(
  job: messagesV1.StepJob,
  notification: messagesV1.Notification,
  payload: Record<string, unknown> | undefined,
  workflow: WorkflowView | undefined,
) {
  const digest = parsed(job.digestJson);
  return {
    _id: job.id,
    // The store admits no other type.
    type: job.type as (typeof STEP_JOB_TYPES)[number],
    ...(digest ? { digest } : {}),
    executionDetails: notification.executionDetails.filter((detail) => detail.jobId === job.id && detail.stepDetail).map(executionDetailToJson),
    step: stepToJson(job.stepId, job.messageTemplateId, workflow),
    ...(payload ? { payload } : {}),
    providerId: providerOfStepJob(job.type, job.providerId),
    status: job.status as JobStatus,
    updatedAt: iso(job.updatedAt),
  };
}

/**
 * What the steps behind a delay or digest show while the run has not reached them: Novu makes
 * every step's job at the trigger, pending, merges a merged digest's later jobs with it, and
 * cancels them with a canceled trigger. notify writes a step's job when the run reaches it, so
 * these are read from the job they wait behind.
 */
const WAITING_BEHIND: Partial<Record<JobStatus, JobStatus>> = { delayed: "pending", merged: "merged", canceled: "canceled" };

/** The id of a step's job not written yet: the same at every read, and a valid object id. */
const unwrittenJobId = (notificationId: string, stepId: string) => createHash("md5").update(`${notificationId}/${stepId}`).digest("hex").slice(0, 24);

/**
 * The jobs of the active steps behind the last delay or digest the run waits at, was merged at or
 * was canceled at, for the steps that have no job yet: those of the workflow the run was
 * triggered with, which the job keeps (a job recorded before it kept them: the workflow's now).
 */
function unwrittenJobsOf(
  notification: messagesV1.Notification,
  payload: Record<string, unknown> | undefined,
  workflow: WorkflowView | undefined,
  written: { places: ReadonlySet<number>; stepIds: ReadonlySet<string> },
) {
  let holding: { job: messagesV1.StepJob; place: number; status: JobStatus } | undefined;
  for (const job of notification.stepJobs) {
    const status = WAITING_BEHIND[job.status as JobStatus];
    const place = workflow?.places.get(job.stepId);
    if ((job.type === "delay" || job.type === "digest") && status && place !== undefined && (!holding || place > holding.place))
      holding = { job, place, status };
  }
  if (!holding || !workflow) return [];
  const { job, place, status } = holding;
  // A job recorded before it kept its later steps has none, nor their providers.
  const later: { id: string; type: (typeof STEP_JOB_TYPES)[number]; providerId?: string | undefined }[] =
    job.later.length > 0
      ? job.later.map((step) => ({ id: step.stepId, type: step.type as (typeof STEP_JOB_TYPES)[number], providerId: step.providerId }))
      : workflow.chain.filter((step) => step.place > place);
  const unwritten = later.filter((step) => {
    const now = workflow.places.get(step.id);
    return !written.stepIds.has(step.id) && (now === undefined || !written.places.has(now));
  });
  return unwritten.map((step, index) => ({
    // Right behind the job they wait for, in the order the run has them.
    place: place + (index + 1) / (unwritten.length + 1),
    at: job.createdAt,
    json: {
      _id: unwrittenJobId(notification.id, step.id),
      type: step.type,
      executionDetails: [],
      step: stepToJson(step.id, step.id, workflow),
      ...(payload ? { payload } : {}),
      providerId: providerOfStepJob(step.type, step.providerId),
      status,
      updatedAt: iso(job.updatedAt),
    },
  }));
}

/**
 * The notification's jobs in the order of its workflow's steps (Novu's job chain), those of steps
 * the workflow no longer has last; as they were made where the order says nothing.
 */
function jobsOf(notification: messagesV1.Notification, payload: Record<string, unknown> | undefined, workflow: WorkflowView | undefined) {
  const place = (stepId: string) => workflow?.places.get(stepId) ?? Number.MAX_SAFE_INTEGER;
  const jobs = [
    ...stepsOf(notification.messages).map((messages) => ({
      place: place(messages[0]!.stepId),
      at: messages[0]!.createdAt,
      json: jobToJson(messages, notification.executionDetails, workflow),
    })),
    ...notification.stepJobs.map((job) => ({
      place: place(job.stepId),
      at: job.createdAt,
      json: stepJobToJson(job, notification, payload, workflow),
    })),
  ];
  const written = {
    places: new Set(jobs.map((job) => job.place)),
    stepIds: new Set([...notification.messages.map((message) => message.stepId), ...notification.stepJobs.map((job) => job.stepId)]),
  };
  jobs.push(...unwrittenJobsOf(notification, payload, workflow, written));
  const time = (at: Timestamp | undefined) => (at ? timestampDate(at).getTime() : 0);
  return jobs.sort((a, b) => a.place - b.place || time(a.at) - time(b.at)).map((job) => job.json);
}

function activitySubscriberToJson(subscriber: subscribersV1.Subscriber) {
  return {
    _id: subscriber.id,
    subscriberId: subscriber.subscriberId,
    ...(subscriber.firstName !== undefined ? { firstName: subscriber.firstName } : {}),
    ...(subscriber.lastName !== undefined ? { lastName: subscriber.lastName } : {}),
    ...(subscriber.email !== undefined ? { email: subscriber.email } : {}),
    ...(subscriber.phone !== undefined ? { phone: subscriber.phone } : {}),
  };
}

/** A notification as Novu's ActivityNotificationResponseDto: its subscriber, its workflow and its jobs. */
function notificationToJson(notification: messagesV1.Notification, subscriber: subscribersV1.Subscriber | undefined, workflow: WorkflowView | undefined) {
  const created = iso(notification.createdAt);
  const payload = parsed(notification.payloadJson);
  // Every message of a notification carries its trigger's context keys.
  const contextKeys = notification.messages[0]?.contextKeys ?? [];
  const jobs = jobsOf(notification, payload, workflow);
  return {
    _id: notification.id,
    _environmentId: notification.environmentId,
    _organizationId: notification.organizationId,
    _subscriberId: notification.subscriberId,
    transactionId: notification.transactionId,
    _templateId: notification.templateId,
    createdAt: created,
    updatedAt: created,
    // Without its workflow (deleted since), the types of the jobs it has.
    channels: workflow?.channels ?? [...new Set(jobs.map((job) => job.type))],
    ...(subscriber ? { subscriber: activitySubscriberToJson(subscriber) } : {}),
    ...(workflow ? { template: workflow.template } : {}),
    jobs,
    ...(payload ? { payload } : {}),
    ...(contextKeys.length > 0 ? { contextKeys } : {}),
    ...traitsToJson(notification.traits),
  };
}

/** What the notification keeps of its trigger and workflow, as Novu's answers it. */
function traitsToJson(traits: messagesV1.NotificationTraits | undefined) {
  return {
    severity: severityName(traits?.severity ?? Severity.NONE) ?? "none",
    critical: traits?.critical ?? false,
    tags: traits?.tags ?? [],
    topics: (traits?.topics ?? []).map((topic) => ({ _topicId: topic.topicId, topicKey: topic.topicKey })),
  };
}

/** A page of the activity feed as Novu's ActivitiesResponseDto (no total: the reference service counts none). */
export function activityPageToJson(reply: messagesV1.ListNotificationsResponse, query: z.output<typeof listNotificationsQuery>) {
  const subscribers = new Map(reply.subscribers.map((subscriber) => [subscriber.id, subscriber]));
  const workflows = workflowViews(reply.workflows);
  return {
    hasMore: reply.hasMore,
    data: reply.notifications.map((notification) =>
      notificationToJson(notification, subscribers.get(notification.subscriberId), workflows.get(notification.templateId)),
    ),
    pageSize: query.limit,
    page: query.page,
  };
}

export function activityToJson(reply: messagesV1.GetNotificationResponse) {
  const workflows = workflowViews(reply.workflow ? [reply.workflow] : []);
  const notification = reply.notification!;
  return notificationToJson(notification, reply.subscriber, workflows.get(notification.templateId));
}

export function graphStatsToJson(reply: messagesV1.GetActivityGraphResponse) {
  return reply.days.map((day) => ({ _id: day.date, count: day.count, templates: day.templateIds, channels: day.channels.map(channelNameOf) }));
}

export const activityStatsToJson = (reply: messagesV1.GetNotificationStatsResponse) => ({ weeklySent: reply.weekly, monthlySent: reply.monthly });

// Shapes of the replies above, for the API description.

const jobResponse = z.object({
  _id: z.string(),
  type: z.enum(STEP_JOB_TYPES),
  digest: freeFormResponse.optional().describe("What a delay or digest job waits for (type, amount, unit, digestKey, ...) and a digest's events"),
  executionDetails: z.array(executionDetailResponse),
  step: z.looseObject({ _id: z.string(), active: z.unknown(), filters: z.unknown(), _templateId: z.string() }),
  overrides: freeFormResponse.optional(),
  payload: freeFormResponse.optional(),
  providerId: z.string().describe("The integration's provider; Novu's own (novu) for a delay's or a digest's job"),
  status: z.enum(JOB_STATUSES),
  updatedAt: isoDateResponse,
});

/** What notificationToJson answers. */
export const activityResponse = z
  .object({
    _id: z.string(),
    _environmentId: z.string(),
    _organizationId: z.string(),
    _subscriberId: z.string(),
    transactionId: z.string(),
    _templateId: z.string(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
    channels: z.array(z.enum(STEP_JOB_TYPES)),
    subscriber: z
      .object({
        _id: z.string(),
        subscriberId: z.string(),
        firstName: z.string().optional(),
        lastName: z.string().optional(),
        email: z.string().optional(),
        phone: z.string().optional(),
      })
      .optional(),
    template: workflowResponse.pick({ _id: true, name: true, triggers: true }).optional(),
    jobs: z.array(jobResponse),
    payload: freeFormResponse.optional(),
    /** The trigger's context keys ("type:id", sorted), when it named contexts. */
    contextKeys: z.array(z.string()).optional(),
    severity: z.enum(SEVERITIES),
    critical: z.boolean(),
    tags: z.array(z.string()),
    /** The topics the trigger named, when the subscriber was reached through them. */
    topics: z.array(z.object({ _topicId: z.string(), topicKey: z.string() })),
  })
  .meta({ id: "ActivityNotification" });

export const activityPageResponse = z.object({ hasMore: z.boolean(), data: z.array(activityResponse), pageSize: z.int(), page: z.int() });

export const graphStatsResponse = z.array(z.object({ _id: z.string(), count: z.int(), templates: z.array(z.string()), channels: z.array(z.enum(CHANNELS)) }));

export const activityStatsResponse = z.object({ weeklySent: z.int(), monthlySent: z.int() });
