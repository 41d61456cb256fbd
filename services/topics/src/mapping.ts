import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { subscribersV1 } from "@notify/proto";
import { topicsV1 } from "@notify/proto";
import type { PreferenceRow, SubscriptionRow, TopicRow } from "./store.js";

const { SubscriberSummarySchema, SubscriptionPreferenceSchema, SubscriptionSchema, TopicSchema } = topicsV1;

export function topicFromRow(row: TopicRow, subscribers: readonly string[]): topicsV1.Topic {
  return create(TopicSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    key: row.key,
    ...(row.name !== null ? { name: row.name } : {}),
    subscribers: [...subscribers],
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

export function summaryOf(subscriber: subscribersV1.Subscriber): topicsV1.SubscriberSummary {
  return create(SubscriberSummarySchema, {
    internalSubscriberId: subscriber.id,
    externalSubscriberId: subscriber.subscriberId,
    ...(subscriber.firstName !== undefined ? { firstName: subscriber.firstName } : {}),
    ...(subscriber.lastName !== undefined ? { lastName: subscriber.lastName } : {}),
    ...(subscriber.email !== undefined ? { email: subscriber.email } : {}),
    ...(subscriber.avatar !== undefined ? { avatar: subscriber.avatar } : {}),
  });
}

/** Novu's name for a subscription made from a bare subscriber id, in a context scope (sorted keys) or none. */
export const derivedIdentifier = (topicKey: string, subscriberId: string, contextKeys: readonly string[] = []) =>
  `tk_${topicKey}:si_${subscriberId}${contextKeys.length > 0 ? `:ctx_${contextKeys.join(",")}` : ""}`;

/** The subscriber id a derived identifier of the topic names; null when the identifier has not that form. */
export function subscriberOfDerived(topicKey: string, identifier: string): string | null {
  const prefix = derivedIdentifier(topicKey, "");
  return identifier.startsWith(prefix) && identifier.length > prefix.length ? identifier.slice(prefix.length) : null;
}

/**
 * The key of the topic whose derived identifier (without contexts) for this subscriber the
 * identifier is; null when it has not that form.
 */
export function topicOfDerived(subscriberId: string, identifier: string): string | null {
  // The derived form around a key no topic has, so the format stays spelled in derivedIdentifier only.
  const [prefix, suffix] = derivedIdentifier("\u0000", subscriberId).split("\u0000") as [string, string];
  const fits = identifier.startsWith(prefix) && identifier.endsWith(suffix) && identifier.length > prefix.length + suffix.length;
  return fits ? identifier.slice(prefix.length, identifier.length - suffix.length) : null;
}

export const identifierOf = (row: SubscriptionRow, topicKey: string) => row.identifier ?? derivedIdentifier(topicKey, row.external_subscriber_id);

export function preferenceFromRow(row: PreferenceRow): topicsV1.SubscriptionPreference {
  return create(SubscriptionPreferenceSchema, {
    workflowId: row.workflow_id,
    enabled: row.enabled,
    ...(row.condition !== null ? { condition: row.condition as JsonObject } : {}),
  });
}

export function subscriptionFromRow(
  row: SubscriptionRow,
  topicKey: string,
  subscriber: topicsV1.SubscriberSummary,
  preferences: readonly PreferenceRow[] = [],
): topicsV1.Subscription {
  return create(SubscriptionSchema, {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    topicId: row.topic_id,
    topicKey,
    internalSubscriberId: row.internal_subscriber_id,
    externalSubscriberId: row.external_subscriber_id,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
    subscriber,
    identifier: identifierOf(row, topicKey),
    ...(row.name !== null ? { name: row.name } : {}),
    contextKeys: row.context_keys,
    preferences: preferences.map(preferenceFromRow),
  });
}
