import type { MessageInitShape } from "@bufbuild/protobuf";
import { commonV1, type subscribersV1 } from "@notify/proto";
import { z } from "zod";
import { jsonObject, keyString, outboundUrl, queryBool, queryInt } from "../validation.js";
import { freeFormResponse, iso, isoDateResponse, isoOrNull } from "./common.js";

type FieldsInit = MessageInitShape<typeof subscribersV1.SubscriberFieldsSchema>;

const nullableText = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .nullable()
    .optional();

export const profileShape = {
  firstName: nullableText("firstName"),
  lastName: nullableText("lastName"),
  email: nullableText("email"),
  phone: nullableText("phone"),
  avatar: nullableText("avatar"),
  locale: nullableText("locale"),
  timezone: nullableText("timezone"),
  data: jsonObject.nullable().optional(),
};

export const subscriberIdParam = z.object({ subscriberId: keyString("subscriberId") });

/** POST /v1/subscribers, POST /v2/subscribers; unknown fields are ignored. */
export const createSubscriberBody = z.object({
  subscriberId: z
    .string({ error: "subscriberId must be a string" })
    .trim()
    .min(1, "subscriberId should not be empty")
    .max(255, "subscriberId must be shorter than or equal to 255 characters"),
  ...profileShape,
});

export const updateSubscriberBody = z.object(profileShape);

/** Novu's cap on POST /v1/subscribers/bulk. */
const MAX_BULK_SUBSCRIBERS = 500;

/** POST /v1/subscribers/bulk: every entry is checked before any is written. */
export const bulkSubscribersBody = z.object({
  subscribers: z
    .array(createSubscriberBody, { error: "subscribers must be an array" })
    .min(1, "subscribers must contain at least 1 elements")
    .max(MAX_BULK_SUBSCRIBERS, `subscribers must contain no more than ${MAX_BULK_SUBSCRIBERS} elements`),
});

/** The bulk create's answer (BulkCreateSubscriberResponseDto): which were created and which updated. */
const subscriberIdResponse = z.object({ subscriberId: z.string() });
export const bulkCreatedResponse = z.object({
  created: z.array(subscriberIdResponse),
  updated: z.array(subscriberIdResponse),
  failed: z.array(z.object({ subscriberId: z.string(), message: z.string() })),
});

export function bulkCreatedToJson(requested: readonly { subscriberId: string }[], createdIds: readonly string[]) {
  const created = new Set(createdIds);
  const unique = [...new Set(requested.map((entry) => entry.subscriberId))];
  return {
    created: unique.filter((id) => created.has(id)).map((subscriberId) => ({ subscriberId })),
    updated: unique.filter((id) => !created.has(id)).map((subscriberId) => ({ subscriberId })),
    failed: [],
  };
}

/** PATCH /v1/subscribers/{subscriberId}/online-status: `isOnline` (@novu/api), or `online` as @novu/node sends it. */
export const onlineStatusBody = z
  .object({
    isOnline: z.boolean({ error: "isOnline must be a boolean value" }).optional(),
    online: z.boolean({ error: "online must be a boolean value" }).optional(),
  })
  .transform((body, context) => {
    const isOnline = body.isOnline ?? body.online;
    if (isOnline === undefined) {
      context.addIssue({ code: "custom", path: ["isOnline"], message: "isOnline must be a boolean value" });
      return z.NEVER;
    }
    return { isOnline };
  });

export type Profile = z.infer<typeof updateSubscriberBody>;
const PROFILE_KEYS = Object.keys(profileShape) as (keyof Profile)[];

/** The fields to set: given, non-null values. */
export function fieldsOf(profile: Profile): FieldsInit {
  const fields: Record<string, unknown> = {};
  for (const key of PROFILE_KEYS) {
    const value = profile[key];
    if (value !== undefined && value !== null) fields[key] = value;
  }
  return fields as FieldsInit;
}

/** v1 semantics (Novu): a null leaves the field as it is, except `email`, which null clears. */
export const v1Cleared = (profile: Profile) => ({ names: profile.email === null ? ["email"] : [] });

/** v2 PATCH semantics: null clears the field. */
export const v2Cleared = (profile: Profile) => ({ names: PROFILE_KEYS.filter((key) => profile[key] === null) });

export const listSubscribersQuery = z.object({
  page: queryInt(0, 0, 1_000_000),
  limit: queryInt(10, 1, 100),
});

export const searchSubscribersQuery = z.object({
  limit: queryInt(10, 1, 100),
  after: z.string().optional(),
  before: z.string().optional(),
  orderDirection: z.enum(["ASC", "DESC"]).default("DESC"),
  // Ids grow with creation, so _id and createdAt name one order.
  orderBy: z.enum(["_id", "createdAt", "updatedAt"], { error: "orderBy must be one of _id, createdAt, updatedAt" }).default("_id"),
  includeCursor: queryBool.default(false),
  email: z.string().optional(),
  phone: z.string().optional(),
  subscriberId: z.string().optional(),
  name: z.string().optional(),
});

export function searchRequestOf(query: z.infer<typeof searchSubscribersQuery>) {
  return {
    limit: query.limit,
    direction: query.orderDirection === "ASC" ? commonV1.SortDirection.ASC : commonV1.SortDirection.DESC,
    byUpdatedAt: query.orderBy === "updatedAt",
    includeCursor: query.includeCursor,
    ...(query.after ? { after: query.after } : {}),
    ...(query.before ? { before: query.before } : {}),
    ...(query.email ? { email: query.email } : {}),
    ...(query.phone ? { phone: query.phone } : {}),
    ...(query.subscriberId ? { subscriberId: query.subscriberId } : {}),
    ...(query.name ? { name: query.name } : {}),
  };
}

export function channelToJson(channel: subscribersV1.ChannelSettings) {
  const { credentials } = channel;
  return {
    providerId: channel.providerId,
    ...(channel.integrationIdentifier !== undefined ? { integrationIdentifier: channel.integrationIdentifier } : {}),
    _integrationId: channel.integrationId,
    credentials: {
      ...(credentials?.webhookUrl !== undefined ? { webhookUrl: credentials.webhookUrl } : {}),
      ...(credentials?.channel !== undefined ? { channel: credentials.channel } : {}),
      deviceTokens: credentials?.deviceTokens ?? [],
      ...(credentials?.alertUid !== undefined ? { alertUid: credentials.alertUid } : {}),
      ...(credentials?.title !== undefined ? { title: credentials.title } : {}),
      ...(credentials?.imageUrl !== undefined ? { imageUrl: credentials.imageUrl } : {}),
      ...(credentials?.state !== undefined ? { state: credentials.state } : {}),
      ...(credentials?.externalUrl !== undefined ? { externalUrl: credentials.externalUrl } : {}),
    },
  };
}

const channelSettingsResponse = z
  .object({
    providerId: z.string(),
    integrationIdentifier: z.string().optional(),
    _integrationId: z.string(),
    credentials: z.object({
      webhookUrl: z.string().optional(),
      channel: z.string().optional(),
      deviceTokens: z.array(z.string()),
      alertUid: z.string().optional(),
      title: z.string().optional(),
      imageUrl: z.string().optional(),
      state: z.string().optional(),
      externalUrl: z.string().optional(),
    }),
  })
  .meta({ id: "ChannelSettings" });

const unsetText = z.string().nullable();

/** What subscriberToJson answers. */
export const subscriberResponse = z
  .object({
    _id: z.string(),
    subscriberId: z.string(),
    firstName: unsetText,
    lastName: unsetText,
    email: unsetText,
    phone: unsetText,
    avatar: unsetText,
    locale: unsetText,
    timezone: unsetText,
    data: freeFormResponse.nullable(),
    channels: z.array(channelSettingsResponse),
    topics: z.array(z.string()),
    isOnline: z.boolean().nullable(),
    lastOnlineAt: isoDateResponse.nullable(),
    _organizationId: z.string(),
    _environmentId: z.string(),
    deleted: z.boolean(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
    __v: z.int(),
  })
  .meta({ id: "Subscriber" });

/** The public Subscriber: every field of the spec's table, null where unset. */
export function subscriberToJson(subscriber: subscribersV1.Subscriber) {
  return {
    _id: subscriber.id,
    subscriberId: subscriber.subscriberId,
    firstName: subscriber.firstName ?? null,
    lastName: subscriber.lastName ?? null,
    email: subscriber.email ?? null,
    phone: subscriber.phone ?? null,
    avatar: subscriber.avatar ?? null,
    locale: subscriber.locale ?? null,
    timezone: subscriber.timezone ?? null,
    data: subscriber.data ?? null,
    channels: subscriber.channels.map(channelToJson),
    topics: subscriber.topics,
    isOnline: subscriber.isOnline ?? null,
    lastOnlineAt: isoOrNull(subscriber.lastOnlineAt),
    _organizationId: subscriber.organizationId,
    _environmentId: subscriber.environmentId,
    deleted: subscriber.deleted,
    createdAt: iso(subscriber.createdAt),
    updatedAt: iso(subscriber.updatedAt),
    __v: subscriber.version,
  };
}

export const deletedResult = { acknowledged: true, status: "deleted" } as const;
export const deletedResponse = z.object({ acknowledged: z.literal(true), status: z.literal("deleted") });

const credentialText = (name: string) => z.string({ error: `${name} must be a string` }).optional();

/** PATCH and PUT /v1/subscribers/{subscriberId}/credentials; the provider list and value limits are the service's rules. */
export const credentialsBody = z.object({
  providerId: z.string({ error: "providerId must be a valid provider ID" }),
  integrationIdentifier: credentialText("integrationIdentifier"),
  credentials: z.object(
    {
      webhookUrl: outboundUrl("webhookUrl").optional(),
      channel: credentialText("channel"),
      deviceTokens: z.array(z.string({ error: "each value in deviceTokens must be a string" }), { error: "deviceTokens must be an array" }).optional(),
      alertUid: credentialText("alertUid"),
      title: credentialText("title"),
      imageUrl: credentialText("imageUrl"),
      state: credentialText("state"),
      externalUrl: credentialText("externalUrl"),
    },
    { error: "credentials must be an object" },
  ),
});

export const credentialsProviderParams = z.object({ subscriberId: keyString("subscriberId"), providerId: keyString("providerId") });

type CredentialsBody = z.infer<typeof credentialsBody>;

/** One channel's credentials as the service takes them; given tokens, even none, travel as a list (none clears). */
export function channelWriteOf(body: CredentialsBody) {
  const { deviceTokens, ...texts } = body.credentials;
  const given = Object.fromEntries(Object.entries(texts).filter(([, value]) => value !== undefined));
  return {
    providerId: body.providerId,
    ...(body.integrationIdentifier !== undefined ? { integrationIdentifier: body.integrationIdentifier } : {}),
    credentials: { ...given, ...(deviceTokens !== undefined ? { deviceTokens: { tokens: deviceTokens } } : {}) },
  };
}

/** The service request of a credentials write. */
export const credentialsRequestOf = (subscriberId: string, body: CredentialsBody, replaceDeviceTokens: boolean) => ({
  subscriberId,
  ...channelWriteOf(body),
  replaceDeviceTokens,
});

export const MAX_CREATE_CHANNELS = 100;

/**
 * POST /v1/subscribers and PUT /v1/subscribers/{id}: the profile and `channels`, each shaped as a
 * credentials write (applied with the same rules, in append mode). v2 has no channels, as in Novu.
 */
const v1Channels = {
  channels: z
    .array(credentialsBody, { error: "channels must be an array" })
    .max(MAX_CREATE_CHANNELS, `channels must contain no more than ${MAX_CREATE_CHANNELS} elements`)
    .optional(),
};
export const createSubscriberV1Body = createSubscriberBody.extend(v1Channels);
export const updateSubscriberV1Body = updateSubscriberBody.extend(v1Channels);

/** A v1 create's or update's profile and channels as the subscribers service takes them. */
export function v1WriteOf(body: z.infer<typeof updateSubscriberV1Body>) {
  const { channels, ...profile } = body;
  return { fields: fieldsOf(profile), cleared: v1Cleared(profile), channels: (channels ?? []).map(channelWriteOf) };
}

/** PUT /v1/subscribers/:subscriberId: an empty email clears it, as Novu's update reads "" as null. */
export const v1UpdateOf = (body: z.infer<typeof updateSubscriberV1Body>) => v1WriteOf(body.email === "" ? { ...body, email: null } : body);
