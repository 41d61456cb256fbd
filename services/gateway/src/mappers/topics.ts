import { commonV1, topicsV1 } from "@notify/proto";
import { z } from "zod";
import { keyString, queryBool, queryInt } from "../validation.js";
import { cursorPageResponse, iso, isoDateResponse } from "./common.js";

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

/** POST and DELETE /v2/topics/{topicKey}/subscriptions */
/**
 * POST/DELETE /v2/topics/{topicKey}/subscriptions: `subscriptions` (@novu/api 3.x) or the deprecated
 * `subscriberIds` (1.x). Only plain subscriber ids: notify keeps one subscription per subscriber and
 * topic, so it has no named subscriptions ({identifier, subscriberId}) to create or delete.
 */
export const subscriptionsBody = z
  .object({
    subscriberIds: idList("subscriberIds", 1, 100).optional(),
    subscriptions: idList("subscriptions", 1, 100).optional(),
  })
  .refine((body) => (body.subscriberIds === undefined) !== (body.subscriptions === undefined), {
    message: "exactly one of subscriptions and subscriberIds must be given",
  })
  .transform((body) => ({ subscriberIds: body.subscriptions ?? body.subscriberIds ?? [] }));

export const listSubscriptionsQuery = z.object({
  limit: queryInt(10, 1, 100),
  after: z.string().optional(),
  before: z.string().optional(),
  orderDirection: z.enum(["ASC", "DESC"], { error: "orderDirection must be ASC or DESC" }).default("DESC"),
  orderBy: z.string().optional(),
  includeCursor: z.string().optional(),
  subscriberId: z.string().optional(),
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

/** GET /v2/subscribers/{subscriberId}/subscriptions: the same paging, over one subscriber's topics. */
export const subscriberSubscriptionsQuery = listSubscriptionsQuery.omit({ subscriberId: true });

/** A subscription page's size, order and cursor. */
function subscriptionPagingOf(query: z.infer<typeof subscriberSubscriptionsQuery>) {
  return {
    limit: query.limit,
    direction: query.orderDirection === "ASC" ? commonV1.SortDirection.ASC : commonV1.SortDirection.DESC,
    ...(query.after ? { after: query.after } : {}),
    ...(query.before ? { before: query.before } : {}),
  };
}

export function listSubscriptionsRequestOf(topicKey: string, query: z.infer<typeof listSubscriptionsQuery>) {
  return { topicKey, ...subscriptionPagingOf(query), ...(query.subscriberId ? { subscriberId: query.subscriberId } : {}) };
}

export const subscriberSubscriptionsRequestOf = (subscriberId: string, query: z.infer<typeof subscriberSubscriptionsQuery>) => ({
  subscriberId,
  ...subscriptionPagingOf(query),
});

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

/**
 * A subscription's identifier, as Novu names a subscription made from a bare subscriber id. Notify
 * keeps one subscription per topic and subscriber, so the identifier is derived, never stored.
 */
export const subscriptionIdentifier = (topicKey: string, subscriberId: string) => `tk_${topicKey}:si_${subscriberId}`;

/** GET /v2/topics/{topicKey}/subscriptions/{identifier}: the subscriber an identifier names, if any. */
export const subscriptionIdentifierParams = z.object({ topicKey: keyString("topicKey"), identifier: keyString("identifier") });

export function subscriberOfIdentifier(topicKey: string, identifier: string): string | undefined {
  const prefix = subscriptionIdentifier(topicKey, "");
  return identifier.startsWith(prefix) && identifier.length > prefix.length ? identifier.slice(prefix.length) : undefined;
}

/** One subscription as GET /v2/topics/{topicKey}/subscriptions/{identifier} answers it (SubscriptionDetailsResponseDto). */
export const subscriptionDetailsToJson = (subscription: topicsV1.Subscription) => ({
  id: subscription.id,
  identifier: subscriptionIdentifier(subscription.topicKey, subscription.externalSubscriberId),
});

/** A v2 subscription as the create and delete replies list it (SubscriptionDto). */
export function subscriptionToJson(subscription: topicsV1.Subscription, topic: topicsV1.Topic) {
  return {
    _id: subscription.id,
    identifier: subscriptionIdentifier(topic.key, subscription.externalSubscriberId),
    topic: { _id: topic.id, key: topic.key, ...nameOf(topic) },
    subscriber: subscriberToJson(subscription),
    createdAt: iso(subscription.createdAt),
    updatedAt: iso(subscription.updatedAt),
  };
}

/** A v2 subscription as the list reply shows it (TopicSubscriptionResponseDto). */
export function listedSubscriptionToJson(subscription: topicsV1.Subscription, topic: topicsV1.Topic) {
  return {
    _id: subscription.id,
    identifier: subscriptionIdentifier(topic.key, subscription.externalSubscriberId),
    createdAt: iso(subscription.createdAt),
    topic: topicResponseToJson(topic),
    subscriber: subscriberToJson(subscription),
  };
}

/** `{data, meta, errors?}` of the v2 subscription writes; `errors` lists the ids that failed and why. */
export function subscriptionsResult(
  topic: topicsV1.Topic,
  subscriptions: topicsV1.Subscription[],
  requested: number,
  errors: { subscriberId: string; code: string; message: string }[],
) {
  return {
    data: subscriptions.map((subscription) => subscriptionToJson(subscription, topic)),
    meta: { totalCount: requested, successful: subscriptions.length, failed: errors.length },
    ...(errors.length > 0 ? { errors } : {}),
  };
}

export const subscriberNotFound = (subscriberId: string) => ({
  subscriberId,
  code: "SUBSCRIBER_NOT_FOUND",
  message: `Subscriber with ID '${subscriberId}' could not be found.`,
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

export const subscriptionDetailsResponse = z.object({ id: z.string(), identifier: z.string() });

const subscriptionSubscriberResponse = z.object({
  _id: z.string(),
  subscriberId: z.string(),
  avatar: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  email: z.string().nullable(),
});

const subscriptionResponse = z.object({
  _id: z.string(),
  identifier: z.string(),
  topic: z.object({ _id: z.string(), key: z.string(), name: z.string().optional() }),
  subscriber: subscriptionSubscriberResponse,
  createdAt: isoDateResponse,
  updatedAt: isoDateResponse,
});

/** What listedSubscriptionToJson answers. */
const listedSubscriptionResponse = z
  .object({ _id: z.string(), identifier: z.string(), createdAt: isoDateResponse, topic: topicResponse, subscriber: subscriptionSubscriberResponse })
  .meta({ id: "ListedSubscription" });

export const listedSubscriptionPageResponse = cursorPageResponse(listedSubscriptionResponse);

/** What subscriptionsResult answers. */
export const subscriptionsResultResponse = z.object({
  data: z.array(subscriptionResponse),
  meta: z.object({ totalCount: z.int(), successful: z.int(), failed: z.int() }),
  errors: z.array(z.object({ subscriberId: z.string(), code: z.string(), message: z.string() })).optional(),
});
