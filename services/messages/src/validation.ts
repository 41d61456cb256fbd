import {
  channelName,
  CHANNELS,
  holdsNul,
  invalidArgument,
  invalidField,
  isObjectId,
  Severity,
  severityName,
  type FieldErrors,
  boundBatch,
} from "@notify/runtime";
import { create } from "@bufbuild/protobuf";
import { messagesV1 } from "@notify/proto";
import { STATUS_NAMES } from "./mapping.js";
import { STEP_JOB_STATUSES, type StepJobStatus } from "./store.js";

/** Messages per CreateMessages call: thousands in one statement, never an unbounded list. */
export const MAX_CREATE_BATCH = 10_000;
/** Ids an Inbox bulk change names, as Novu's Inbox bounds them. */
export const MAX_MARKED_IDS = 100;
/**
 * Ids a v1 mark-as names: the Notification Center marks every unseen message it has fetched at
 * once, page after page of them, and Novu bounds none.
 */
export const MAX_V1_MARKED_IDS = 1_000;
/** Step job groups per RecordStepJobs call, and their recipients in all (a fan-out page's). */
export const MAX_STEP_JOB_GROUPS = 1_000;
export const MAX_STEP_JOB_RECIPIENTS = 10_000;
/** Execution details one change adds to a job. */
export const MAX_STEP_JOB_DETAILS = 10;
/** Steps behind a delay or digest a job keeps: a workflow's steps are bounded well below this. */
export const MAX_LATER_STEPS = 100;
export const MAX_FEED_IDENTIFIERS = 30;
export const MAX_TAGS = 100;

const BLOCK_TYPES = new Set(["button", "text"]);
const TEXT_ALIGNS = new Set(["center", "left", "right"]);
const BUTTON_TYPES = new Set(["primary", "secondary"]);
const ACTION_STATUSES = new Set(["pending", "done"]);

type Fail = (field: string, text: string, value?: string | number) => void;

function checkRecipient(subscriberId: string, externalSubscriberId: string, fail: Fail): void {
  if (!isObjectId(subscriberId)) fail("subscriberId", "subscriberId must be an internal subscriber id", subscriberId);
  if (externalSubscriberId.length === 0 || externalSubscriberId.length > 255) {
    fail("externalSubscriberId", "externalSubscriberId must be between 1 and 255 characters", externalSubscriberId);
  }
}

/** The rules for every field of a new message but its recipient. */
function checkMessageFields(message: messagesV1.NewMessage, fail: Fail): void {
  for (const field of ["transactionId", "templateId", "messageTemplateId", "stepId"] as const) {
    if (message[field].length === 0 || message[field].length > 255) fail(field, `${field} must be between 1 and 255 characters`, message[field]);
  }
  if (!channelName(message.channel)) fail("channel", `channel must be one of ${CHANNELS.join(", ")}`, message.channel);
  if (message.status !== messagesV1.MessageStatus.UNSPECIFIED && !(message.status in STATUS_NAMES)) {
    fail("status", "status must be one of sent, error, warning", message.status);
  }
  if (message.content.case === "blocks") {
    message.content.value.blocks.forEach((block, blockIndex) => {
      if (!BLOCK_TYPES.has(block.type)) fail(`content[${blockIndex}].type`, "type must be button or text", block.type);
      if (block.textAlign !== undefined && !TEXT_ALIGNS.has(block.textAlign)) {
        fail(`content[${blockIndex}].styles.textAlign`, "textAlign must be center, left or right", block.textAlign);
      }
    });
  }
  const cta = message.cta;
  if (cta?.type !== undefined && cta.type !== "redirect") fail("cta.type", "cta.type must be redirect", cta.type);
  const action = cta?.action;
  if (action?.status !== undefined && !ACTION_STATUSES.has(action.status)) fail("cta.action.status", "status must be pending or done", action.status);
  action?.buttons.forEach((button, buttonIndex) => {
    if (!BUTTON_TYPES.has(button.type)) fail(`cta.action.buttons[${buttonIndex}].type`, "type must be primary or secondary", button.type);
  });
  if (action?.result?.type !== undefined && !BUTTON_TYPES.has(action.result.type)) {
    fail("cta.action.result.type", "type must be primary or secondary", action.result.type);
  }
  if (message.severity !== Severity.UNSPECIFIED && !severityName(message.severity)) {
    fail("severity", "severity must be one of high, medium, low, none", message.severity);
  }
  if (message.tags.length > MAX_TAGS) fail("tags", `at most ${MAX_TAGS} tags`, message.tags.length);
  const badTag = message.tags.find((tag) => tag.length === 0 || tag.length > 255 || holdsNul(tag));
  if (badTag !== undefined) fail("tags", "tags are 1 to 255 characters without NUL", badTag);
  // jsonb, which holds the data, holds no NUL character.
  if (message.data && JSON.stringify(message.data).includes("\\u0000")) fail("data", "data must not contain a NUL character (\\u0000)");
}

const STEP_JOB_TYPES = new Set(["delay", "digest", ...CHANNELS]);
const DETAIL_STATUSES = new Set(["Success", "Failed", "Pending", "Queued"]);
const isStepJobStatus = (status: string): status is StepJobStatus => (STEP_JOB_STATUSES as readonly string[]).includes(status);

/**
 * Value rules for a RecordStepJobs call, every failure at once as one INVALID_ARGUMENT; answers
 * each group's status.
 */
export function checkStepJobGroups(request: messagesV1.RecordStepJobsRequest): StepJobStatus[] {
  boundBatch("groups", request.groups.length, MAX_STEP_JOB_GROUPS);
  boundBatch(
    "recipients",
    request.groups.reduce((sum, group) => sum + group.recipients.length, 0),
    MAX_STEP_JOB_RECIPIENTS,
  );
  const errors: FieldErrors = {};
  const statuses = request.groups.map((group, index) => {
    const fail: Fail = (field, text, value) => {
      const entry = (errors[`groups[${index}].${field}`] ??= value === undefined ? { messages: [] } : { messages: [], value });
      entry.messages.push(text);
    };
    for (const field of ["transactionId", "templateId", "messageTemplateId", "stepId"] as const) {
      if (group[field].length === 0 || group[field].length > 255) fail(field, `${field} must be between 1 and 255 characters`, group[field]);
    }
    if (!STEP_JOB_TYPES.has(group.type)) fail("type", `type must be one of ${[...STEP_JOB_TYPES].join(", ")}`, group.type);
    if (group.details.length > MAX_STEP_JOB_DETAILS) fail("details", `at most ${MAX_STEP_JOB_DETAILS} details`, group.details.length);
    group.details.forEach((detail, detailIndex) => {
      if (detail.detail.length === 0 || detail.detail.length > 255 || holdsNul(detail.detail)) {
        fail(`details[${detailIndex}].detail`, "detail must be between 1 and 255 characters without NUL");
      }
      if (!DETAIL_STATUSES.has(detail.status))
        fail(`details[${detailIndex}].status`, `status must be one of ${[...DETAIL_STATUSES].join(", ")}`, detail.status);
      if (detail.raw !== undefined && holdsNul(detail.raw)) fail(`details[${detailIndex}].raw`, "raw must not contain a NUL character");
    });
    // jsonb holds no NUL character.
    if (group.digest && JSON.stringify(group.digest).includes("\\u0000")) fail("digest", "digest must not contain a NUL character (\\u0000)");
    if (group.later.length > MAX_LATER_STEPS) fail("later", `at most ${MAX_LATER_STEPS} steps`, group.later.length);
    group.later.forEach((step, stepIndex) => {
      if (step.stepId.length === 0 || step.stepId.length > 255 || holdsNul(step.stepId)) {
        fail(`later[${stepIndex}].stepId`, "stepId must be between 1 and 255 characters without NUL");
      }
      if (!STEP_JOB_TYPES.has(step.type)) fail(`later[${stepIndex}].type`, `type must be one of ${[...STEP_JOB_TYPES].join(", ")}`, step.type);
    });
    group.recipients.forEach((recipient, recipientIndex) => {
      checkRecipient(recipient.subscriberId, recipient.externalSubscriberId, (field, text, value) =>
        fail(`recipients[${recipientIndex}].${field}`, text, value),
      );
    });
    if (isStepJobStatus(group.status)) return group.status;
    fail("status", `status must be one of ${STEP_JOB_STATUSES.join(", ")}`, group.status);
    return "failed";
  });
  if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
  return statuses;
}

/**
 * Value rules for a CreateMessages call, every failure at once as one INVALID_ARGUMENT; answers
 * its messages as groups (each message of `messages` a group of one).
 */
export function checkNewMessages(request: messagesV1.CreateMessagesRequest): messagesV1.MessageGroup[] {
  const count = request.messages.length + request.groups.reduce((sum, group) => sum + group.recipients.length, 0);
  boundBatch("messages", count, MAX_CREATE_BATCH);
  const errors: FieldErrors = {};
  const failAt =
    (prefix: string): Fail =>
    (field, text, value) => {
      const entry = (errors[`${prefix}.${field}`] ??= value === undefined ? { messages: [] } : { messages: [], value });
      entry.messages.push(text);
    };
  request.messages.forEach((message, index) => {
    checkMessageFields(message, failAt(`messages[${index}]`));
    checkRecipient(message.subscriberId, message.externalSubscriberId, failAt(`messages[${index}]`));
  });
  request.groups.forEach((group, index) => {
    if (!group.message) failAt(`groups[${index}]`)("message", "message is required");
    else checkMessageFields(group.message, failAt(`groups[${index}].message`));
    group.recipients.forEach((recipient, recipientIndex) => {
      checkRecipient(recipient.subscriberId, recipient.externalSubscriberId, failAt(`groups[${index}].recipients[${recipientIndex}]`));
    });
  });
  if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
  return [
    ...request.messages.map((message) =>
      create(messagesV1.MessageGroupSchema, {
        message,
        recipients: [{ subscriberId: message.subscriberId, externalSubscriberId: message.externalSubscriberId }],
      }),
    ),
    ...request.groups.filter((group) => group.recipients.length > 0),
  ];
}

/** The ids of a v1 mark-as. */
export function checkMessageIds(ids: readonly string[]): void {
  if (ids.length === 0 || ids.length > MAX_V1_MARKED_IDS) {
    throw invalidField("messageId", `messageId must name between 1 and ${MAX_V1_MARKED_IDS} messages`, ids.length);
  }
  const malformed = ids.find((id) => !isObjectId(id));
  if (malformed !== undefined) throw invalidField("messageId", "each messageId must be a message id (24 hex characters)", malformed);
}

export function checkFeedIdentifiers(identifiers: readonly string[]): void {
  if (identifiers.length > MAX_FEED_IDENTIFIERS) {
    throw invalidField("feedIdentifier", `at most ${MAX_FEED_IDENTIFIERS} feed identifiers`, identifiers.length);
  }
  // Refused per request: in the batch's one statement it would fail every other feed read.
  const unstorable = identifiers.find(holdsNul);
  if (unstorable !== undefined) throw invalidField("feedIdentifier", "must not contain a NUL character (\\u0000)", unstorable);
}

/** An integer query bound, as one field error when outside [min, max]. */
export function checkRange(field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw invalidField(field, `${field} must be between ${min} and ${max}`, value);
}
