import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { messagesV1, type subscribersV1, type workflowsV1 } from "@notify/proto";
import { isObjectId, SEVERITIES, severityName, severityNamed, type SeverityName } from "@notify/runtime";
import { z } from "zod";
import { contextKeys } from "./context-inputs.js";
import { MAX_BODY_DEPTH, nestedDeeperThan } from "../body.js";
import { HttpError } from "../errors.js";
import { queryBool, queryInt } from "../validation.js";
import { freeFormResponse, isoDateResponse, isoOrNull, linkOf } from "./common.js";

const { InboxActionType, InboxChange, InboxBulkChange } = messagesV1;

// The Inbox's notifications (/v1/inbox/notifications, @novu/js's protocol): its filters as the
// client encodes them, and the InboxNotification it reads.

const severityText = z.enum(SEVERITIES, { error: `severity must be one of ${SEVERITIES.join(", ")}` });
/** One severity or several. */
const severities = z.union([severityText.transform((name) => [name]), z.array(severityText).max(SEVERITIES.length)]);

const tag = z.string({ error: "tags must be strings" }).min(1, "tags must not be empty").max(255, "tags must be at most 255 characters");
const orGroup = z.object({ or: z.array(tag).min(1).max(30) }).transform((group) => group.or);
/**
 * Tags as the client sends them in bodies and count filters: a list (any of them), {or: [...]},
 * or {and: [{or: [...]}, ...]}; answered as OR-groups that must all match.
 */
const tagsFilter = z.union(
  [
    z
      .array(tag)
      .max(30)
      .transform((tags) => (tags.length > 0 ? [tags] : [])),
    orGroup.transform((group) => [group]),
    z.object({ and: z.array(orGroup).max(30) }).transform((groups) => groups.and),
  ],
  { error: "tags must be a list of strings, {or: [...]} or {and: [{or: [...]}]}" },
);

const dataObject = z.record(z.string(), z.unknown(), { error: "data must be a JSON object" });
/**
 * A JSON text a query carries (or a body, as a string), held to a body's depth: nested deeper,
 * it could not travel on to the messages service, and would fail the calls batched with it.
 * Undefined, with the issue added, when it is not JSON or nests too deeply.
 */
function parsedJsonText(text: string, context: z.RefinementCtx, notJson: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    context.addIssue({ code: "custom", message: notJson });
    return undefined;
  }
  if (!nestedDeeperThan(Buffer.from(text), MAX_BODY_DEPTH)) return parsed;
  context.addIssue({ code: "custom", message: `nests more than ${MAX_BODY_DEPTH} levels deep` });
  return undefined;
}

/** `data` as a JSON text of an object (what list queries and bulk bodies carry), or the object itself. */
const dataText = z.union([
  dataObject,
  z.string().transform((text, context): Record<string, unknown> => {
    const notObject = "data must be a JSON object";
    const parsed = parsedJsonText(text, context, notObject);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    if (parsed !== undefined) context.addIssue({ code: "custom", message: notObject });
    return z.NEVER;
  }),
]);

const epochMs = z.coerce.number({ error: "must be a time in milliseconds" }).int("must be an integer").min(0).max(8.64e15);

/** The body-less state routes, `PATCH /v1/inbox/notifications/:id/<name>`. */
export const INBOX_STATE_ROUTES = [
  ["read", InboxChange.READ],
  ["unread", InboxChange.UNREAD],
  ["archive", InboxChange.ARCHIVE],
  ["unarchive", InboxChange.UNARCHIVE],
  ["unsnooze", InboxChange.UNSNOOZE],
] as const;

/** The action routes, `PATCH /v1/inbox/notifications/:id/<name>` with `{actionType}`. */
export const INBOX_ACTION_ROUTES = [
  ["complete", InboxChange.COMPLETE],
  ["revert", InboxChange.REVERT],
] as const;

/** The bulk routes, `POST /v1/inbox/notifications/<name>`. */
export const INBOX_BULK_ROUTES = [
  ["seen", InboxBulkChange.SEEN],
  ["read", InboxBulkChange.READ],
  ["archive", InboxBulkChange.ARCHIVE],
  ["read-archive", InboxBulkChange.ARCHIVE_READ],
  ["delete", InboxBulkChange.DELETE],
] as const;

/**
 * Novu's count route and session stop counting here (its socket's events count on to 100, with
 * `hasMore`): its Inbox badge, which shows "99+" from 100, never shows it for these counts.
 */
export const INBOX_COUNT_CAP = 99;

export const actionBody = z.object({
  actionType: z
    .enum(["primary", "secondary"], { error: "actionType must be primary or secondary" })
    .transform((type) => (type === "primary" ? InboxActionType.PRIMARY : InboxActionType.SECONDARY)),
});

export const notificationIdParam = z.object({
  id: z.string().refine(isObjectId, "id must be a notification id (24 hex characters)"),
});

/** /v2/subscribers/{subscriberId}/notifications/{notificationId}…, the API's way to the same notifications. */
export const subscriberNotificationParams = z.object({
  subscriberId: z.string().min(1),
  notificationId: z.string().refine(isObjectId, "notificationId must be a notification id (24 hex characters)"),
});

/** …/{notificationId}/actions/{actionType}/complete and /revert. */
export const subscriberNotificationActionParams = subscriberNotificationParams.extend(actionBody.shape);

/** A parsed filter: the RPC's InboxFilter, and what Novu echoes back as `filter`. */
interface ParsedFilter {
  tags?: string[][] | undefined;
  read?: boolean | undefined;
  seen?: boolean | undefined;
  archived?: boolean | undefined;
  snoozed?: boolean | undefined;
  severity?: SeverityName[] | undefined;
  data?: Record<string, unknown> | undefined;
  createdGte?: number | undefined;
  createdLte?: number | undefined;
}

type InboxFilterInit = MessageInitShape<typeof messagesV1.InboxFilterSchema>;

/** Novu refuses to list or count unread archived notifications (archiving reads them). */
export function refuseUnreadArchived(filter: ParsedFilter): void {
  if (filter.read === false && filter.archived === true) throw new HttpError(400, "Filtering for unread and archived notifications is not supported.");
}

export function inboxFilterOf(filter: ParsedFilter): InboxFilterInit {
  return {
    tags: (filter.tags ?? []).map((anyOf) => ({ anyOf })),
    ...(filter.read !== undefined ? { read: filter.read } : {}),
    ...(filter.seen !== undefined ? { seen: filter.seen } : {}),
    ...(filter.archived !== undefined ? { archived: filter.archived } : {}),
    ...(filter.snoozed !== undefined ? { snoozed: filter.snoozed } : {}),
    severities: (filter.severity ?? []).map((name: SeverityName) => severityNamed(name)),
    ...(filter.data ? { data: filter.data as JsonObject } : {}),
    ...(filter.createdGte !== undefined ? { createdGte: timestampFromDate(new Date(filter.createdGte)) } : {}),
    ...(filter.createdLte !== undefined ? { createdLte: timestampFromDate(new Date(filter.createdLte)) } : {}),
  };
}

const filterFields = {
  read: z.boolean().optional(),
  seen: z.boolean().optional(),
  archived: z.boolean().optional(),
  snoozed: z.boolean().optional(),
  tags: tagsFilter.optional(),
  severity: severities.optional(),
  data: dataText.optional(),
  createdGte: epochMs.optional(),
  createdLte: epochMs.optional(),
};

/** One of the count route's filters: its parsed form, and the filter exactly as sent (echoed back). */
const countFilter = z.record(z.string(), z.unknown(), { error: "each filter must be an object" }).transform((raw, context) => {
  const parsed = z.object(filterFields).safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) context.addIssue({ code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  }
  return { raw, parsed: parsed.data };
});

/** Novu's count route answers at most this many filters at once. */
const MAX_COUNT_FILTERS = 30;

export const countQuery = z.object({
  filters: z
    .string({ error: "filters must be a JSON array of filters" })
    .transform((text, context) => {
      const parsed = parsedJsonText(text, context, "filters must be a JSON array of filters");
      return parsed === undefined ? z.NEVER : parsed;
    })
    .pipe(z.array(countFilter, { error: "filters must be a JSON array of filters" }).min(1).max(MAX_COUNT_FILTERS)),
});

/** A query value as a list: a repeated key is an array already, a key sent once is not. */
const listOf = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * The list query's tags: `tags[]=a&tags[]=b` (any of them, joined under `tags` by listsJoined) or
 * `tags[0][]=a&tags[1][]=b` (a group each, keys of their own), as OR-groups.
 */
function queryTags(query: Record<string, unknown>): unknown {
  const groups: unknown[][] = [];
  const plain = listOf(query["tags"]);
  if (plain.length > 0) groups.push(plain);
  for (const [key, value] of Object.entries(query)) {
    const index = /^tags\[(\d{1,2})\]\[\]$/.exec(key)?.[1];
    if (index !== undefined) groups[Number(index) + (plain.length > 0 ? 1 : 0)] = listOf(value);
  }
  return groups.filter((group) => group !== undefined);
}

export const listQuery = z.preprocess(
  (input) => {
    const query = (input ?? {}) as Record<string, unknown>;
    const severity = listOf(query["severity"]);
    const keys = listOf(query["contextKeys"]);
    return {
      ...query,
      tags: queryTags(query),
      severity: severity.length > 0 ? severity : undefined,
      contextKeys: keys.length > 0 ? keys : undefined,
    };
  },
  z.object({
    limit: queryInt(10, 1, 100),
    offset: queryInt(0, 0, 100_000),
    after: z.string().refine(isObjectId, "after must be a notification id (24 hex characters)").optional(),
    read: queryBool.optional(),
    seen: queryBool.optional(),
    archived: queryBool.optional(),
    snoozed: queryBool.optional(),
    tags: z.array(z.array(tag).min(1).max(30)).max(30),
    severity: z.array(severityText).max(SEVERITIES.length).optional(),
    data: dataText.optional(),
    createdGte: epochMs.optional(),
    createdLte: epochMs.optional(),
    // The API's lists only: an Inbox session's contexts are its token's.
    contextKeys: contextKeys.optional(),
  }),
);

/** The filter a list answers with: what it applied, as Novu echoes it. */
export function listFilterToJson(query: z.output<typeof listQuery>) {
  const json: Record<string, unknown> = {};
  if (query.tags.length > 0) json.tags = query.tags.length === 1 ? query.tags[0] : { and: query.tags.map((or) => ({ or })) };
  for (const key of ["read", "archived", "snoozed", "seen", "data", "severity", "createdGte", "createdLte"] as const) {
    if (query[key] !== undefined) json[key] = query[key];
  }
  return json;
}

/** The bulk routes' body: the notifications named, or those of the tags and data (a JSON text). */
export const bulkBody = z.object({
  notificationIds: z.array(z.string().refine(isObjectId, "each notification id must be 24 hex characters")).max(100).optional(),
  tags: tagsFilter.optional(),
  data: dataText.optional(),
  // The API's bulk changes only: an Inbox session's contexts are its token's.
  contextKeys: contextKeys.optional(),
});

/** The shortest snooze Novu's request validation lets through. */
const MIN_SNOOZE_MS = 60_000;

export const snoozeBody = z.object({
  snoozeUntil: z.iso
    .datetime({ offset: true, error: "snoozeUntil must be an ISO 8601 date" })
    .refine((text) => new Date(text).getTime() - Date.now() >= MIN_SNOOZE_MS, `Snooze time must be at least ${MIN_SNOOZE_MS / 1000} seconds in the future`)
    .transform((text) => timestampFromDate(new Date(text))),
});

/**
 * `snoozeUntil` within the bound the Inbox session announced (maxSnoozeDurationHours); beyond it,
 * the 402 Novu answers a snooze longer than its plan allows.
 */
export function checkSnoozeBound(snoozeUntil: Timestamp, maxHours: number): Timestamp {
  if (timestampDate(snoozeUntil).getTime() - Date.now() > maxHours * 3_600_000) {
    throw new HttpError(402, "Snooze Duration Limit Exceeded", {
      reason: `A notification can be snoozed for at most ${maxHours} hours in this environment.`,
    });
  }
  return snoozeUntil;
}

/** Sets `key` when `value` is present: the client tells absent fields apart. */
function put(json: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) json[key] = value;
}

/** The notification's recipient, as `to`. */
function recipientToJson(subscriber: subscribersV1.Subscriber) {
  const json: Record<string, unknown> = { id: subscriber.id, subscriberId: subscriber.subscriberId };
  put(json, "firstName", subscriber.firstName);
  put(json, "lastName", subscriber.lastName);
  put(json, "avatar", subscriber.avatar);
  put(json, "locale", subscriber.locale);
  put(json, "data", subscriber.data);
  put(json, "timezone", subscriber.timezone);
  put(json, "email", subscriber.email);
  put(json, "phone", subscriber.phone);
  return json;
}

/** A workflow as a notification names it. */
export function workflowSummaryToJson(workflow: workflowsV1.Workflow) {
  return {
    id: workflow.id,
    identifier: workflow.identifier,
    name: workflow.name,
    critical: workflow.critical,
    tags: workflow.tags,
    severity: severityName(workflow.severity) ?? "none",
  };
}

function actionToJson(message: messagesV1.Message, type: "primary" | "secondary") {
  const action = message.cta?.action;
  const button = action?.buttons.find((candidate) => candidate.type === type);
  if (!button) return undefined;
  const json: Record<string, unknown> = { label: button.content, isCompleted: action?.status === "done" && action.result?.type === type };
  put(json, "redirect", linkOf(button));
  return json;
}

/** One in-app message as the Inbox client's InboxNotification. */
export function inboxNotificationToJson(
  message: messagesV1.Message,
  subscriber: subscribersV1.Subscriber | undefined,
  workflow: workflowsV1.Workflow | undefined,
  now = Date.now(),
) {
  const snoozedUntil = message.snoozedUntil && timestampDate(message.snoozedUntil);
  const isSnoozed = snoozedUntil !== undefined && snoozedUntil.getTime() > now;
  const json: Record<string, unknown> = { id: message.id, transactionId: message.transactionId };
  put(json, "subject", message.subject);
  json.body = message.content.case === "text" ? message.content.value : "";
  if (subscriber) json.to = recipientToJson(subscriber);
  json.isRead = message.read;
  json.isSeen = message.seen;
  json.isArchived = message.archived;
  json.isSnoozed = isSnoozed;
  if (isSnoozed) json.snoozedUntil = snoozedUntil.toISOString();
  if (message.deliveredAt.length > 0) json.deliveredAt = message.deliveredAt.map((date) => timestampDate(date).toISOString());
  json.createdAt = isoOrNull(message.createdAt);
  json.readAt = isoOrNull(message.lastReadDate);
  json.firstSeenAt = isoOrNull(message.firstSeenDate);
  json.archivedAt = isoOrNull(message.archivedAt);
  put(json, "avatar", message.avatar);
  put(json, "primaryAction", actionToJson(message, "primary"));
  put(json, "secondaryAction", actionToJson(message, "secondary"));
  json.channelType = "in_app";
  json.tags = message.tags;
  put(json, "redirect", linkOf(message.cta));
  put(json, "data", message.data);
  if (workflow) json.workflow = workflowSummaryToJson(workflow);
  json.severity = severityName(message.severity) ?? "none";
  return json;
}

/** A page of the list: `{data, hasMore, filter}`, not wrapped again. */
export function inboxPageToJson(reply: messagesV1.ListInboxMessagesResponse, filter: Record<string, unknown>) {
  const workflows = new Map(reply.workflows.map((workflow) => [workflow.id, workflow]));
  const now = Date.now();
  return {
    data: reply.messages.map((message) => inboxNotificationToJson(message, reply.subscriber, workflows.get(message.templateId), now)),
    hasMore: reply.hasMore,
    filter,
  };
}

/** One notification as a state route answers it. */
export const updatedNotificationToJson = (reply: messagesV1.UpdateInboxMessageResponse) =>
  inboxNotificationToJson(reply.message!, reply.subscriber, reply.workflow);

// Shapes of the replies above, for the API description.

const redirectResponse = z.object({ url: z.string(), target: z.string().optional() });
const actionResponse = z.object({ label: z.string(), isCompleted: z.boolean(), redirect: redirectResponse.optional() });

/** What inboxNotificationToJson answers. */
export const inboxNotificationResponse = z
  .object({
    id: z.string(),
    transactionId: z.string(),
    subject: z.string().optional(),
    body: z.string(),
    to: z
      .object({
        id: z.string(),
        subscriberId: z.string(),
        firstName: z.string().optional(),
        lastName: z.string().optional(),
        avatar: z.string().optional(),
        locale: z.string().optional(),
        data: freeFormResponse.optional(),
        timezone: z.string().optional(),
        email: z.string().optional(),
        phone: z.string().optional(),
      })
      .optional(),
    isRead: z.boolean(),
    isSeen: z.boolean(),
    isArchived: z.boolean(),
    isSnoozed: z.boolean(),
    snoozedUntil: isoDateResponse.optional(),
    deliveredAt: z.array(isoDateResponse).optional(),
    createdAt: isoDateResponse.nullable(),
    readAt: isoDateResponse.nullable(),
    firstSeenAt: isoDateResponse.nullable(),
    archivedAt: isoDateResponse.nullable(),
    avatar: z.string().optional(),
    primaryAction: actionResponse.optional(),
    secondaryAction: actionResponse.optional(),
    channelType: z.literal("in_app"),
    tags: z.array(z.string()),
    redirect: redirectResponse.optional(),
    data: freeFormResponse.optional(),
    workflow: z
      .object({ id: z.string(), identifier: z.string(), name: z.string(), critical: z.boolean(), tags: z.array(z.string()), severity: z.enum(SEVERITIES) })
      .optional(),
    severity: z.enum(SEVERITIES),
  })
  .meta({ id: "InboxNotification" });

/** What inboxPageToJson answers: `filter` echoes the filters applied. */
export const inboxPageResponse = z.object({ data: z.array(inboxNotificationResponse), hasMore: z.boolean(), filter: freeFormResponse });

/** What a count answers: each filter as sent, with its count (at most INBOX_COUNT_CAP). */
export const inboxCountResponse = z.object({ data: z.array(z.object({ count: z.int().min(0).max(INBOX_COUNT_CAP), filter: freeFormResponse })) });
