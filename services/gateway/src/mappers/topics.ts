import { commonV1, topicsV1, type workflowsV1 } from "@notify/proto";
import { z } from "zod";
import { keyString, queryBool, queryInt } from "../validation.js";
import { cursorPageResponse, iso, isoDateResponse } from "./common.js";
import { contextBody } from "./context-inputs.js";
import { contextKeyList } from "./messages.js";
import { subscriptionPreferenceResponse, subscriptionPreferencesBody, subscriptionPreferencesToJson } from "./subscription-preferences.js";

const idList = (name: string, min: number, max: number) =>
  z
    .array(keyString(name), { error: `${name} must be an array` })
    .min(min, `${name} must contain at least ${min} elements`)
    .max(max, `${name} must contain no more than ${max} elements`);

export const topicKeyParam = z.object({ topicKey: keyString("topicKey") });

export const topicSubscriberParams = z.object({ topicKey: keyString("topicKey"), externalSubscriberId: keyString("externalSubscriberId") });

/** POST /v1/topics */
export const createTopicBody = z.object({ key: keyString("key"), name: keyString("name") });

/** PATCH /v1/topics/{topicKey}, PATCH /v2/topics/{topicKey} */
export const renameTopicBody = z.object({ name: keyString("name") });

export const listTopicsQuery = z.object({
  page: queryInt(0, 0, 1_000_000),
  pageSize: queryInt(10, 1, 100),
  key: z.string().optional(),
  name: z.string().optional(),
});

/** POST /v1/topics/{topicKey}/subscribers and …/subscribers/removal */
export const topicSubscribersBody = z.object({ subscribers: idList("subscribers", 0, 1000) });

export const upsertTopicQuery = z.object({ failIfExists: queryBool.default(false) });

/** POST /v2/topics */
export const upsertTopicBody = z.object({ key: keyString("key"), name: keyString("name").optional() });

const namedSubscription = z.object({ identifier: keyString("identifier"), subscriberId: keyString("subscriberId"), name: keyString("name").optional() });
const subscriptionEntries = <T extends z.ZodType>(entry: T) =>
  z
    .array(z.union([keyString("subscriptions"), entry], { error: "each of subscriptions must be a subscriber id or a subscription object" }), {
      error: "subscriptions must be an array",
    })
    .min(1, "subscriptions must contain at least 1 elements")
    .max(100, "subscriptions must contain no more than 100 elements");
const exactlyOneList = { message: "exactly one of subscriptions and subscriberIds must be given" };

/**
 * POST /v2/topics/{topicKey}/subscriptions: `subscriptions` (@novu/api 3.x: subscriber ids or
 * named subscriptions `{identifier, subscriberId, name?}`) or the deprecated `subscriberIds` (1.x);
 * `name` names the topic, made or existing (as @novu/api 3.x documents it); `context` scopes the
 * subscriptions, and `preferences` are given to those made.
 */
export const createSubscriptionsBody = z
  .object({
    subscriberIds: idList("subscriberIds", 1, 100).optional(),
    subscriptions: subscriptionEntries(namedSubscription).optional(),
    name: keyString("name").optional(),
    context: contextBody.optional(),
    preferences: subscriptionPreferencesBody.optional(),
  })
  .refine((body) => (body.subscriberIds === undefined) !== (body.subscriptions === undefined), exactlyOneList)
  .transform((body) => {
    const entries = body.subscriptions ?? body.subscriberIds ?? [];
    return {
      subscriberIds: entries.filter((entry) => typeof entry === "string"),
      named: entries.filter((entry) => typeof entry !== "string"),
      name: body.name,
      context: body.context,
      preferences: body.preferences,
      requested: entries.length,
    };
  });

/** The AddSubscribers request of a create body. */
export const addSubscribersRequestOf = (topicKey: string, body: z.output<typeof createSubscriptionsBody>) => ({
  topicKey,
  subscriberIds: body.subscriberIds,
  named: body.named.map(({ identifier, subscriberId, name }) => ({ identifier, subscriberId, ...(name !== undefined ? { name } : {}) })),
  ...(body.name !== undefined ? { topicNaming: { case: "topicName" as const, value: body.name } } : {}),
});

const subscriptionReference = z
  .object({ identifier: keyString("identifier").optional(), subscriberId: keyString("subscriberId").optional() })
  .refine((entry) => entry.identifier !== undefined || entry.subscriberId !== undefined, { message: "a subscription needs an identifier or a subscriberId" });

/**
 * DELETE /v2/topics/{topicKey}/subscriptions: subscriber ids, or subscriptions named by identifier
 * (or by subscriberId; an identifier wins when both are given), or the deprecated `subscriberIds`.
 */
export const deleteSubscriptionsBody = z
  .object({
    subscriberIds: idList("subscriberIds", 1, 100).optional(),
    subscriptions: subscriptionEntries(subscriptionReference).optional(),
  })
  .refine((body) => (body.subscriberIds === undefined) !== (body.subscriptions === undefined), exactlyOneList)
  .transform((body) => {
    const entries = body.subscriptions ?? body.subscriberIds ?? [];
    const subscriberIds: string[] = [];
    const identifiers: string[] = [];
    for (const entry of entries) {
      if (typeof entry === "string") subscriberIds.push(entry);
      else if (entry.identifier !== undefined) identifiers.push(entry.identifier);
      else if (entry.subscriberId !== undefined) subscriberIds.push(entry.subscriberId);
    }
    return { subscriberIds, identifiers, requested: entries.length };
  });

/** PATCH /v2/topics/{topicKey}/subscriptions/{identifier}: preferences, when given, replace the subscription's. */
export const updateSubscriptionBody = z.object({ name: keyString("name").optional(), preferences: subscriptionPreferencesBody.optional() });

export const listSubscriptionsQuery = z.object({
  limit: queryInt(10, 1, 100),
  after: z.string().optional(),
  before: z.string().optional(),
  orderDirection: z.enum(["ASC", "DESC"], { error: "orderDirection must be ASC or DESC" }).default("DESC"),
  orderBy: z.string().optional(),
  includeCursor: queryBool.default(false),
  subscriberId: z.string().optional(),
  /** Only subscriptions scoped exactly to these contexts; every scope when absent. */
  contextKeys: contextKeyList.optional(),
});

const TOPIC_ORDERS = {
  _id: topicsV1.TopicOrder.UNSPECIFIED,
  createdAt: topicsV1.TopicOrder.CREATED_AT,
  updatedAt: topicsV1.TopicOrder.UPDATED_AT,
  key: topicsV1.TopicOrder.KEY,
} as const;

/** GET /v2/topics (SDK topics.list): cursor paging, at most 100 a page, key and name substrings. */
export const searchTopicsQuery = z.object({
  limit: queryInt(10, 1, 100),
  after: z.string().max(255).optional(),
  before: z.string().max(255).optional(),
  orderDirection: z.enum(["ASC", "DESC"], { error: "orderDirection must be ASC or DESC" }).default("DESC"),
  orderBy: z.enum(Object.keys(TOPIC_ORDERS) as [keyof typeof TOPIC_ORDERS], { error: "orderBy must be one of _id, createdAt, updatedAt, key" }).default("_id"),
  includeCursor: queryBool.default(false),
  key: z.string().max(255).optional(),
  name: z.string().max(255).optional(),
});

export function searchTopicsRequestOf(query: z.infer<typeof searchTopicsQuery>) {
  return {
    limit: query.limit,
    direction: query.orderDirection === "ASC" ? commonV1.SortDirection.ASC : commonV1.SortDirection.DESC,
    orderBy: TOPIC_ORDERS[query.orderBy],
    includeCursor: query.includeCursor,
    ...(query.after ? { after: query.after } : {}),
    ...(query.before ? { before: query.before } : {}),
    ...(query.key ? { key: query.key } : {}),
    ...(query.name ? { name: query.name } : {}),
  };
}

/** GET /v2/subscribers/{subscriberId}/subscriptions: the same paging and contexts over one subscriber's topics, or one topic's (`key`). */
export const subscriberSubscriptionsQuery = listSubscriptionsQuery.omit({ subscriberId: true }).extend({ key: z.string().max(255).optional() });

/** A subscription page's size, order, cursor and contexts (every scope unless contextKeys names one). */
function subscriptionPagingOf(query: z.infer<typeof subscriberSubscriptionsQuery>) {
  return {
    limit: query.limit,
    direction: query.orderDirection === "ASC" ? commonV1.SortDirection.ASC : commonV1.SortDirection.DESC,
    includeCursor: query.includeCursor,
    ...(query.after ? { after: query.after } : {}),
    ...(query.before ? { before: query.before } : {}),
    ...(query.contextKeys ? { contextKeys: query.contextKeys } : { anyContext: true }),
  };
}

export function listSubscriptionsRequestOf(topicKey: string, query: z.infer<typeof listSubscriptionsQuery>) {
  return {
    topicKey,
    ...subscriptionPagingOf(query),
    ...(query.subscriberId ? { subscriberId: query.subscriberId } : {}),
  };
}

export const subscriberSubscriptionsRequestOf = (subscriberId: string, query: z.infer<typeof subscriberSubscriptionsQuery>) => ({
  subscriberId,
  ...subscriptionPagingOf(query),
  // An empty key names no topic, as Novu reads it.
  ...(query.key ? { topicKey: query.key } : {}),
});

/** Workflows by id, for the preferences a reply shows. */
type Workflows = ReadonlyMap<string, workflowsV1.Workflow>;
const NO_WORKFLOWS: Workflows = new Map();

/** A subscriber's subscriptions, each with its topic (ListTopicSubscriptionsResponseDto's items). */
export function subscriberSubscriptionsToJson(reply: topicsV1.ListSubscriberSubscriptionsResponse) {
  const topics = new Map(reply.topics.map((topic) => [topic.id, topic]));
  return reply.subscriptions.flatMap((subscription) => {
    const topic = topics.get(subscription.topicId);
    return topic ? [listedSubscriptionToJson(subscription, topic)] : [];
  });
}

const nameOf = (topic: topicsV1.Topic) => (topic.name !== undefined ? { name: topic.name } : {});

/** The v1 topic (Novu's TopicDto): with the external ids of its first members. */
export function topicToJson(topic: topicsV1.Topic) {
  return {
    _id: topic.id,
    _organizationId: topic.organizationId,
    _environmentId: topic.environmentId,
    key: topic.key,
    ...nameOf(topic),
    subscribers: topic.subscribers,
    createdAt: iso(topic.createdAt),
    updatedAt: iso(topic.updatedAt),
  };
}

/** The v2 topic (TopicResponseDto). */
export function topicResponseToJson(topic: topicsV1.Topic) {
  return { _id: topic.id, key: topic.key, ...nameOf(topic), createdAt: iso(topic.createdAt), updatedAt: iso(topic.updatedAt) };
}

/** Spec 9: the topic subscription record, these six fields only. */
export function topicSubscriberToJson(subscription: topicsV1.Subscription) {
  return {
    _organizationId: subscription.organizationId,
    _environmentId: subscription.environmentId,
    _subscriberId: subscription.internalSubscriberId,
    _topicId: subscription.topicId,
    topicKey: subscription.topicKey,
    externalSubscriberId: subscription.externalSubscriberId,
  };
}

function subscriberToJson(subscription: topicsV1.Subscription) {
  const subscriber = subscription.subscriber;
  return {
    _id: subscription.internalSubscriberId,
    subscriberId: subscription.externalSubscriberId,
    avatar: subscriber?.avatar ?? null,
    firstName: subscriber?.firstName ?? null,
    lastName: subscriber?.lastName ?? null,
    email: subscriber?.email ?? null,
  };
}

/** GET and PATCH /v2/topics/{topicKey}/subscriptions/{identifier} */
export const subscriptionIdentifierParams = z.object({ topicKey: keyString("topicKey"), identifier: keyString("identifier") });

const subscriptionNameOf = (subscription: topicsV1.Subscription) => (subscription.name !== undefined ? { name: subscription.name } : {});

/** What a subscription holds beyond its identity: its preferences (absent when none) and its context keys. */
const scopeAndPreferencesOf = (subscription: topicsV1.Subscription, workflows: Workflows) => ({
  ...subscriptionPreferencesToJson(subscription, workflows),
  contextKeys: subscription.contextKeys,
});

/**
 * One subscription as GET /v2/topics/{topicKey}/subscriptions/{identifier} and the Inbox answer it
 * (SubscriptionDetailsResponseDto).
 */
export const subscriptionDetailsToJson = (subscription: topicsV1.Subscription, workflows: Workflows) => ({
  id: subscription.id,
  identifier: subscription.identifier,
  ...subscriptionNameOf(subscription),
  ...scopeAndPreferencesOf(subscription, workflows),
});

/** A v2 subscription as the create, update and delete replies show it (SubscriptionDto, SubscriptionResponseDto). */
export function subscriptionToJson(subscription: topicsV1.Subscription, topic: topicsV1.Topic, workflows: Workflows = NO_WORKFLOWS) {
  return {
    _id: subscription.id,
    identifier: subscription.identifier,
    ...subscriptionNameOf(subscription),
    topic: { _id: topic.id, key: topic.key, ...nameOf(topic) },
    subscriber: subscriberToJson(subscription),
    ...scopeAndPreferencesOf(subscription, workflows),
    createdAt: iso(subscription.createdAt),
    updatedAt: iso(subscription.updatedAt),
  };
}

/** A v2 subscription as the list reply shows it (TopicSubscriptionResponseDto). */
export function listedSubscriptionToJson(subscription: topicsV1.Subscription, topic: topicsV1.Topic, workflows: Workflows = NO_WORKFLOWS) {
  return {
    _id: subscription.id,
    identifier: subscription.identifier,
    createdAt: iso(subscription.createdAt),
    topic: topicResponseToJson(topic),
    subscriber: subscriberToJson(subscription),
    ...scopeAndPreferencesOf(subscription, workflows),
  };
}

/** `{data, meta, errors?}` of the v2 subscription writes; `errors` lists the ids that failed and why. */
export function subscriptionsResult(
  topic: topicsV1.Topic,
  subscriptions: topicsV1.Subscription[],
  requested: number,
  errors: { subscriberId: string; code: string; message: string }[],
  workflows: Workflows = NO_WORKFLOWS,
) {
  return {
    data: subscriptions.map((subscription) => subscriptionToJson(subscription, topic, workflows)),
    meta: { totalCount: requested, successful: subscriptions.length, failed: errors.length },
    ...(errors.length > 0 ? { errors } : {}),
  };
}

export const subscriberNotFound = (subscriberId: string) => ({
  subscriberId,
  code: "SUBSCRIBER_NOT_FOUND",
  message: `Subscriber with ID '${subscriberId}' could not be found.`,
});

export const subscriptionConflict = (conflict: topicsV1.SubscriptionConflict) => ({
  subscriberId: conflict.subscriberId,
  code: "SUBSCRIPTION_CONFLICT",
  message: conflict.message,
});

export const identifierNotFound = (identifier: string) => ({
  subscriberId: identifier,
  code: "SUBSCRIPTION_NOT_FOUND",
  message: `Subscription with identifier '${identifier}' not found.`,
});

export const subscriptionNotFound = (subscriberId: string) => ({
  subscriberId,
  code: "SUBSCRIPTION_NOT_FOUND",
  message: `Subscription for subscriber '${subscriberId}' not found.`,
});

// Shapes of the replies above, for the API description.

/** What topicToJson answers (v1). */
export const topicV1Response = z
  .object({
    _id: z.string(),
    _organizationId: z.string(),
    _environmentId: z.string(),
    key: z.string(),
    name: z.string().optional(),
    subscribers: z.array(z.string()),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "TopicV1" });

/** What topicResponseToJson answers (v2). */
export const topicResponse = z
  .object({ _id: z.string(), key: z.string(), name: z.string().optional(), createdAt: isoDateResponse, updatedAt: isoDateResponse })
  .meta({ id: "Topic" });

/** What topicSubscriberToJson answers: spec 9's record. */
export const topicSubscriberResponse = z
  .object({
    _organizationId: z.string(),
    _environmentId: z.string(),
    _subscriberId: z.string(),
    _topicId: z.string(),
    topicKey: z.string(),
    externalSubscriberId: z.string(),
  })
  .meta({ id: "TopicSubscription" });

const scopeAndPreferencesResponse = { preferences: z.array(subscriptionPreferenceResponse).optional(), contextKeys: z.array(z.string()) };

export const subscriptionDetailsResponse = z.object({ id: z.string(), identifier: z.string(), name: z.string().optional(), ...scopeAndPreferencesResponse });

const subscriptionSubscriberResponse = z.object({
  _id: z.string(),
  subscriberId: z.string(),
  avatar: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  email: z.string().nullable(),
});

/** What subscriptionToJson answers. */
export const subscriptionResponse = z.object({
  _id: z.string(),
  identifier: z.string(),
  name: z.string().optional(),
  topic: z.object({ _id: z.string(), key: z.string(), name: z.string().optional() }),
  subscriber: subscriptionSubscriberResponse,
  ...scopeAndPreferencesResponse,
  createdAt: isoDateResponse,
  updatedAt: isoDateResponse,
});

/** What listedSubscriptionToJson answers. */
const listedSubscriptionResponse = z
  .object({
    _id: z.string(),
    identifier: z.string(),
    createdAt: isoDateResponse,
    topic: topicResponse,
    subscriber: subscriptionSubscriberResponse,
    ...scopeAndPreferencesResponse,
  })
  .meta({ id: "ListedSubscription" });

export const listedSubscriptionPageResponse = cursorPageResponse(listedSubscriptionResponse);

/** What subscriptionsResult answers. */
export const subscriptionsResultResponse = z.object({
  data: z.array(subscriptionResponse),
  meta: z.object({ totalCount: z.int(), successful: z.int(), failed: z.int() }),
  errors: z.array(z.object({ subscriberId: z.string(), code: z.string(), message: z.string() })).optional(),
});
