import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { subscribersV1 } from "@notify/proto";
import type { ProfileColumns, RecipientRow, StoredChannel, SubscriberRow } from "./store.js";

const { SubscriberSchema, RecipientSchema, ChannelSettingsSchema, ScheduleSchema } = subscribersV1;

function channelFromStored(channel: StoredChannel): subscribersV1.ChannelSettings {
  return create(ChannelSettingsSchema, {
    providerId: channel.providerId,
    integrationId: channel.integrationId,
    ...(channel.integrationIdentifier !== undefined ? { integrationIdentifier: channel.integrationIdentifier } : {}),
    credentials: channel.credentials,
  });
}

/** A stored schedule (its proto JSON) as the proto message. */
export const scheduleFromStored = (stored: unknown) => fromJson(ScheduleSchema, stored as JsonValue, { ignoreUnknownFields: true });

/** A schedule as the schedule column holds it: its proto JSON, every field written out. */
export const scheduleToStored = (schedule: subscribersV1.Schedule) => toJson(ScheduleSchema, schedule, { alwaysEmitImplicit: true });

/** The fields a Subscriber and a Recipient share. */
function recipientFields(row: RecipientRow) {
  return {
    id: row.id,
    subscriberId: row.subscriber_id,
    ...optional("firstName", row.first_name),
    ...optional("lastName", row.last_name),
    ...optional("email", row.email),
    ...optional("phone", row.phone),
    ...optional("avatar", row.avatar),
    ...optional("locale", row.locale),
    ...optional("timezone", row.timezone),
    ...(row.data ? { data: row.data as JsonObject } : {}),
    channels: row.channels.map(channelFromStored),
    ...optional("isOnline", row.is_online),
  };
}

export const recipientFromRow = (row: RecipientRow): subscribersV1.Recipient => create(RecipientSchema, recipientFields(row));

export function subscriberFromRow(row: SubscriberRow): subscribersV1.Subscriber {
  return create(SubscriberSchema, {
    ...recipientFields(row),
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    ...(row.last_online_at ? { lastOnlineAt: timestampFromDate(row.last_online_at) } : {}),
    version: row.version,
    deleted: false,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

function optional<K extends string, V>(key: K, value: V | null): { [P in K]?: V } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: V };
}

const FIELD_COLUMNS = {
  firstName: "first_name",
  lastName: "last_name",
  email: "email",
  phone: "phone",
  avatar: "avatar",
  locale: "locale",
  timezone: "timezone",
  data: "data",
  isOnline: "is_online",
} as const satisfies Record<string, keyof ProfileColumns>;

export type FieldName = keyof typeof FIELD_COLUMNS;

export const isFieldName = (name: string): name is FieldName => Object.hasOwn(FIELD_COLUMNS, name);

/** The profile after applying the set fields and the cleared ones to `current`. */
export function applyFields(current: ProfileColumns, fields: subscribersV1.SubscriberFields | undefined, cleared: readonly FieldName[]): ProfileColumns {
  const next: Record<string, unknown> = { ...current };
  for (const name of cleared) next[FIELD_COLUMNS[name]] = null;
  if (fields) {
    for (const name of Object.keys(FIELD_COLUMNS) as FieldName[]) {
      if (name === "data") continue;
      const value = fields[name];
      if (value !== undefined) next[FIELD_COLUMNS[name]] = value;
    }
    if (fields.data) next.data = fields.data;
  }
  return next as unknown as ProfileColumns;
}

export const EMPTY_PROFILE: ProfileColumns = {
  first_name: null,
  last_name: null,
  email: null,
  phone: null,
  avatar: null,
  locale: null,
  timezone: null,
  data: null,
  is_online: null,
};

export function profileOf(row: SubscriberRow): ProfileColumns {
  return {
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    avatar: row.avatar,
    locale: row.locale,
    timezone: row.timezone,
    data: row.data,
    is_online: row.is_online,
  };
}

export function sameProfile(a: ProfileColumns, b: ProfileColumns): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
