import { messagesV1, type subscribersV1, type workflowsV1 } from "@notify/proto";
import { Channel, CHANNEL_NAMES, channelName, channelNamed, CHANNELS, type ChannelName } from "@notify/runtime";
import { z } from "zod";
import { contextKeys } from "./context-inputs.js";
import { MAX_BODY_DEPTH, nestedDeeperThan } from "../body.js";
import { queryBool, queryInt } from "../validation.js";
import { freeFormResponse, iso, isoDateResponse, linkOf, offsetPageResponse } from "./common.js";
import { subscriberResponse, subscriberToJson } from "./subscribers.js";
import { freeForm } from "./triggers.js";
import { workflowResponse, workflowToJson } from "./workflows.js";

const { InboxActionType, InboxChange, MarkAs, MessageStatus } = messagesV1;

const STATUS_NAMES = new Map<messagesV1.MessageStatus, string>([
  [MessageStatus.SENT, "sent"],
  [MessageStatus.ERROR, "error"],
  [MessageStatus.WARNING, "warning"],
]);

const MARKS = {
  read: MarkAs.READ,
  seen: MarkAs.SEEN,
  unread: MarkAs.UNREAD,
  unseen: MarkAs.UNSEEN,
} as const;

const channel = z.enum(CHANNELS, { error: `channel must be one of ${CHANNELS.join(", ")}` });
const markAs = z
  .enum(Object.keys(MARKS) as [keyof typeof MARKS], { error: "markAs must be one of read, seen, unread, unseen" })
  .transform((name) => MARKS[name]);

/** A string (comma-separated list) or an array of strings → the non-empty items. */
export const stringList = (name: string) =>
  z
    .union([z.string(), z.array(z.string())], { error: `${name} must be a string or an array of strings` })
    .transform((value) => (typeof value === "string" ? value.split(",") : value).map((item) => item.trim()).filter((item) => item.length > 0));

/** The API lists' `contextKeys` filter (a repeated or comma-separated query value). */
export const contextKeyList = stringList("contextKeys").pipe(contextKeys);

/** The query of the API's calls on one notification: in which contexts to find it (none named: any). */
export const contextKeysQuery = z.object({ contextKeys: contextKeyList.optional() });

export const channelNameOf = (channel: Channel) => channelName(channel) ?? CHANNEL_NAMES[Channel.IN_APP];

export const channelOf = (name: ChannelName | undefined): Channel => (name ? channelNamed(name)! : Channel.UNSPECIFIED);

export const markAsBody = z.object({ messageId: stringList("messageId"), markAs });

/**
 * POST /v1/subscribers/{subscriberId}/messages/markAs (deprecated; @novu/node's markMessageAs,
 * markMessageSeen and markMessageRead): `mark` names the flags to set or clear.
 */
export const legacyMarkAsBody = z.object({
  messageId: stringList("messageId"),
  mark: z
    .object({ seen: z.boolean({ error: "mark.seen must be a boolean" }).optional(), read: z.boolean({ error: "mark.read must be a boolean" }).optional() })
    .refine((mark) => mark.seen !== undefined || mark.read !== undefined, "mark must set seen or read"),
});

/** The marks a legacy `mark` stands for, seen first: a read also sees, so `read` has the last word. */
export function marksOf(mark: z.infer<typeof legacyMarkAsBody>["mark"]): messagesV1.MarkAs[] {
  const marks: messagesV1.MarkAs[] = [];
  if (mark.seen !== undefined) marks.push(mark.seen ? MarkAs.SEEN : MarkAs.UNSEEN);
  if (mark.read !== undefined) marks.push(mark.read ? MarkAs.READ : MarkAs.UNREAD);
  return marks;
}

/** POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type} */
export const messageActionParams = z.object({
  subscriberId: z.string().min(1),
  messageId: z.string().min(1),
  type: z
    .enum(["primary", "secondary"], { error: "type must be primary or secondary" })
    .transform((type) => (type === "primary" ? InboxActionType.PRIMARY : InboxActionType.SECONDARY)),
});

export const messageActionBody = z.object({
  status: z
    .enum(["pending", "done"], { error: "status must be pending or done" })
    .transform((status) => (status === "done" ? InboxChange.COMPLETE : InboxChange.REVERT)),
  payload: freeForm.optional(),
});

export const markAllBody = z.object({ markAs, feedIdentifier: stringList("feedIdentifier").optional() });

export const unseenQuery = z.object({ seen: queryBool.default(false), limit: queryInt(100, 1, 1000) });

/** Longer filters are refused unread: a feed filter names a few payload values. */
const MAX_PAYLOAD_FILTER_CHARS = 4096;

/** The feed's `payload` filter: a JSON object, base64-encoded (as @novu/node sends it). */
const payloadFilter = z
  .string()
  .max(MAX_PAYLOAD_FILTER_CHARS, `payload must be at most ${MAX_PAYLOAD_FILTER_CHARS} characters`)
  .transform((encoded, context) => {
    const text = Buffer.from(encoded, "base64");
    try {
      const value = JSON.parse(text.toString("utf8")) as unknown;
      if (!nestedDeeperThan(text, MAX_BODY_DEPTH)) return value;
      context.addIssue({ code: "custom", message: `payload must be nested at most ${MAX_BODY_DEPTH} levels deep` });
    } catch {
      context.addIssue({ code: "custom", message: "payload must be a base64-encoded JSON object" });
    }
    return z.NEVER;
  })
  .pipe(freeForm);

export const feedQuery = z.object({
  page: queryInt(0, 0, 100_000),
  limit: queryInt(10, 1, 100),
  feedIdentifier: stringList("feedIdentifier").optional(),
  read: queryBool.optional(),
  seen: queryBool.optional(),
  payload: payloadFilter.optional(),
});

export const listMessagesQuery = z.object({
  page: queryInt(0, 0, 100_000),
  limit: queryInt(10, 1, 1000),
  channel: channel.optional(),
  subscriberId: z.string().min(1).optional(),
  transactionId: stringList("transactionId").optional(),
  contextKeys: contextKeyList.optional(),
});

export const messageIdParam = z.object({ messageId: z.string().min(1) });
export const transactionIdParam = z.object({ transactionId: z.string().min(1) });
export const deleteTransactionQuery = z.object({ channel: channel.optional() });

/** Sets `key` when `value` is present: the public Message leaves absent optional fields out. */
function put(json: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) json[key] = value;
}

function ctaToJson(cta: messagesV1.MessageCta | undefined) {
  const json: Record<string, unknown> = {};
  put(json, "type", cta?.type);
  json.data = linkOf(cta) ?? {};
  const action = cta?.action;
  if (action) {
    const actionJson: Record<string, unknown> = {};
    put(actionJson, "status", action.status);
    actionJson.buttons = action.buttons.map((button) => {
      const buttonJson: Record<string, unknown> = { type: button.type, content: button.content };
      put(buttonJson, "resultContent", button.resultContent);
      put(buttonJson, "url", button.url);
      put(buttonJson, "target", button.target);
      return buttonJson;
    });
    if (action.result) {
      const result: Record<string, unknown> = {};
      put(result, "payload", action.result.payload);
      put(result, "type", action.result.type);
      actionJson.result = result;
    }
    json.action = actionJson;
  }
  return json;
}

function contentToJson(content: messagesV1.Message["content"]) {
  if (content.case === "text") return content.value;
  if (content.case === "blocks") {
    return content.value.blocks.map((block) => ({
      type: block.type,
      content: block.content,
      ...(block.url !== undefined ? { url: block.url } : {}),
      ...(block.textAlign !== undefined ? { styles: { textAlign: block.textAlign } } : {}),
    }));
  }
  return null;
}

/**
 * The public Message's fields up to its payload and overrides, in the spec's key order (the stored
 * message entity's names, which the Inbox's live events carry too). Built by assignment: an
 * object spread per optional field made it markedly slower.
 */
export function messageFieldsToJson(message: messagesV1.Message): Record<string, unknown> {
  const json: Record<string, unknown> = {
    _id: message.id,
    _templateId: message.templateId,
    _environmentId: message.environmentId,
    _messageTemplateId: message.messageTemplateId,
    _organizationId: message.organizationId,
    _notificationId: message.notificationId,
    _subscriberId: message.subscriberId,
  };
  put(json, "_jobId", message.jobId);
  put(json, "templateIdentifier", message.templateIdentifier);
  json.createdAt = iso(message.createdAt);
  json.updatedAt = iso(message.updatedAt);
  json.deliveredAt = message.deliveredAt.map((date) => iso(date));
  put(json, "lastSeenDate", message.lastSeenDate && iso(message.lastSeenDate));
  put(json, "lastReadDate", message.lastReadDate && iso(message.lastReadDate));
  json.content = contentToJson(message.content);
  json.transactionId = message.transactionId;
  put(json, "subject", message.subject);
  json.channel = channelNameOf(message.channel);
  json.read = message.read;
  json.seen = message.seen;
  // The Inbox's state, as Novu's messages carry it.
  json.archived = message.archived;
  put(json, "archivedAt", message.archivedAt && iso(message.archivedAt));
  put(json, "snoozedUntil", message.snoozedUntil && iso(message.snoozedUntil));
  put(json, "email", message.email);
  put(json, "phone", message.phone);
  put(json, "directWebhookUrl", message.directWebhookUrl);
  put(json, "providerId", message.providerId);
  if (message.deviceTokens.length > 0) json.deviceTokens = message.deviceTokens;
  put(json, "title", message.title);
  json.cta = ctaToJson(message.cta);
  put(json, "avatar", message.avatar);
  if (message.actor) json.actor = { type: message.actor.type, data: message.actor.data ?? null };
  json._feedId = message.feedId ?? null;
  json.status = STATUS_NAMES.get(message.status) ?? "sent";
  put(json, "errorId", message.errorId);
  put(json, "errorText", message.errorText);
  if (message.tags.length > 0) json.tags = message.tags;
  put(json, "data", message.data);
  if (message.contextKeys.length > 0) json.contextKeys = message.contextKeys;
  return json;
}

/**
 * The JSON text of a page of messages: every field of the spec's table that a message has, in its
 * key order, then the message's subscriber and its workflow as `template` (the full workflow: the
 * spec's and the SDK's required fields, also in the feed, where Novu embeds only `{_id, tags}`:
 * one shape of Message everywhere). Payload and overrides are spliced in as the JSON text Postgres
 * answered (parsing and re-serializing a payload was most of a feed item's cost), and each
 * workflow as its text made once per page (stringifying it for every item was a large share of
 * the gateway's CPU for a feed page).
 */
function messagesText(
  messages: readonly messagesV1.Message[],
  workflows: readonly workflowsV1.Workflow[],
  subscriberTextOf: (message: messagesV1.Message) => string | undefined,
  templateOf: TemplateOf = workflowToJson,
): string {
  const templates = new Map(workflows.map((workflow) => [workflow.id, JSON.stringify(templateOf(workflow))]));
  const items = messages.map((message) => {
    const text = JSON.stringify(messageFieldsToJson(message));
    let members = "";
    if (message.payloadJson !== undefined) members += `,"payload":${message.payloadJson}`;
    if (message.overridesJson !== undefined) members += `,"overrides":${message.overridesJson}`;
    const subscriber = subscriberTextOf(message);
    if (subscriber !== undefined) members += `,"subscriber":${subscriber}`;
    // A deleted workflow is simply absent.
    const template = templates.get(message.templateId);
    if (template !== undefined) members += `,"template":${template}`;
    // An item is a non-empty object: its "}" ends the text.
    return `${text.slice(0, -1)}${members}}`;
  });
  return `[${items.join(",")}]`;
}

/** mark-as: the messages as they are now, without subscriber or workflow. */
export function markedMessagesText(reply: messagesV1.MarkMessagesResponse) {
  return messagesText(reply.messages, [], () => undefined);
}

/** A v1 message action's reply: the message as it is now, without subscriber or workflow. */
export function actedMessageText(message: messagesV1.Message) {
  return messagesText([message], [], () => undefined).slice(1, -1);
}

/** GET /v1/messages: each message with its subscriber and workflow, from the one lookup of each the service made for the page. */
export function listedMessagesText(reply: messagesV1.ListMessagesResponse) {
  const subscribers = new Map(reply.subscribers.map((subscriber) => [subscriber.id, JSON.stringify(subscriberToJson(subscriber))]));
  return messagesText(reply.messages, reply.workflows, (message) => subscribers.get(message.subscriberId));
}

/** The feed's subscriber summary, as Novu's feed items carry it. */
function feedSubscriberToJson(subscriber: subscribersV1.Subscriber) {
  const json: Record<string, unknown> = { _id: subscriber.id, subscriberId: subscriber.subscriberId };
  put(json, "firstName", subscriber.firstName);
  put(json, "lastName", subscriber.lastName);
  put(json, "avatar", subscriber.avatar);
  return json;
}

export function feedText(reply: messagesV1.GetFeedResponse, templateOf?: TemplateOf) {
  const subscriber = reply.subscriber && JSON.stringify(feedSubscriberToJson(reply.subscriber));
  return messagesText(reply.messages, reply.workflows, () => subscriber, templateOf);
}

/** What a message shows of its workflow as its `template`. */
type TemplateOf = (workflow: workflowsV1.Workflow) => object;

/** What a subscriber's browser is shown of a message's workflow, as Novu's Notification Center feed: its id and tags, none of its steps. */
export const templateSummary: TemplateOf = (workflow) => ({ _id: workflow.id, tags: workflow.tags });

// Shapes of the replies above, for the API description.

const emailBlockResponse = z.object({
  type: z.string(),
  content: z.string(),
  url: z.string().optional(),
  styles: z.object({ textAlign: z.string() }).optional(),
});

const messageCtaResponse = z.object({
  type: z.string().optional(),
  data: z.object({ url: z.string().optional(), target: z.string().optional() }),
  action: z
    .object({
      status: z.string().optional(),
      buttons: z.array(
        z.object({ type: z.string(), content: z.string(), resultContent: z.string().optional(), url: z.string().optional(), target: z.string().optional() }),
      ),
      result: z.object({ payload: freeFormResponse.optional(), type: z.string().optional() }).optional(),
    })
    .optional(),
});

const feedSubscriberResponse = z.object({
  _id: z.string(),
  subscriberId: z.string(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  avatar: z.string().optional(),
});

/** What messagesText answers for each message (mark-as, an action, the message list and the feed). */
export const messageResponse = z
  .object({
    _id: z.string(),
    _templateId: z.string(),
    _environmentId: z.string(),
    _messageTemplateId: z.string(),
    _organizationId: z.string(),
    _notificationId: z.string(),
    _subscriberId: z.string(),
    _jobId: z.string().optional(),
    templateIdentifier: z.string().optional(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
    deliveredAt: z.array(isoDateResponse),
    lastSeenDate: isoDateResponse.optional(),
    lastReadDate: isoDateResponse.optional(),
    content: z.union([z.string(), z.array(emailBlockResponse)]).nullable(),
    transactionId: z.string(),
    subject: z.string().optional(),
    channel: z.enum(CHANNELS),
    read: z.boolean(),
    seen: z.boolean(),
    archived: z.boolean(),
    archivedAt: isoDateResponse.optional(),
    snoozedUntil: isoDateResponse.optional(),
    email: z.string().optional(),
    phone: z.string().optional(),
    directWebhookUrl: z.string().optional(),
    providerId: z.string().optional(),
    deviceTokens: z.array(z.string()).optional(),
    title: z.string().optional(),
    cta: messageCtaResponse,
    avatar: z.string().optional(),
    /** A v1 in-app step's actor (the Notification Center's avatar). */
    actor: z.object({ type: z.enum(["user", "system_icon", "system_custom"]), data: z.string().nullable() }).optional(),
    _feedId: z.string().nullable(),
    status: z.enum([...STATUS_NAMES.values()] as [string, ...string[]]),
    errorId: z.string().optional(),
    errorText: z.string().optional(),
    tags: z.array(z.string()).optional(),
    data: freeFormResponse.optional(),
    /** The trigger's context keys ("type:id", sorted), when it named contexts. */
    contextKeys: z.array(z.string()).optional(),
    payload: freeFormResponse.optional(),
    overrides: freeFormResponse.optional(),
    /** The whole subscriber in the message list, its summary in the feed. */
    subscriber: z.union([subscriberResponse, feedSubscriberResponse]).optional(),
    template: workflowResponse.optional(),
  })
  .meta({ id: "Message" });

export const messagesResponse = z.array(messageResponse);
export const messagePageResponse = offsetPageResponse(messageResponse);
