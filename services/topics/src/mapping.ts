import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { subscribersV1 } from "@notify/proto";
import { topicsV1 } from "@notify/proto";
import type { SubscriptionRow, TopicRow } from "./store.js";

const { SubscriberSummarySchema, SubscriptionSchema, TopicSchema } = topicsV1;

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

/** Novu's name for a subscription made from a bare subscriber id. */
export const derivedIdentifier = (topicKey: string, subscriberId: string) => `tk_${topicKey}:si_${subscriberId}`;

/** The subscriber id a derived identifier of the topic names; null when the identifier has not that form. */
export function subscriberOfDerived(topicKey: string, identifier: string): string | null {
  const prefix = derivedIdentifier(topicKey, "");
  return identifier.startsWith(prefix) && identifier.length > prefix.length ? identifier.slice(prefix.length) : null;
}

export const identifierOf = (row: SubscriptionRow, topicKey: string) => row.identifier ?? derivedIdentifier(topicKey, row.external_subscriber_id);

export function subscriptionFromRow(row: SubscriptionRow, topicKey: string, subscriber: topicsV1.SubscriberSummary): topicsV1.Subscription {
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
  });
}
