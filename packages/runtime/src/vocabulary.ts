/**
 * The public API's words for the shared vocabulary (proto notify.common.v1), spelled here only.
 * Maps are exhaustive records over the enums: a value added to an enum does not compile until it
 * is named here, and every list below follows from the names.
 */
import type { workflowsV1 } from "@notify/proto";
import { commonV1 } from "@notify/proto";
import { invalidField } from "./errors.js";

export const { Channel, SortDirection, Severity, StepType, Weekday, Ordinal } = commonV1;
export type Channel = commonV1.Channel;
export type SortDirection = commonV1.SortDirection;
export type Severity = commonV1.Severity;
export type StepType = commonV1.StepType;
export type Weekday = commonV1.Weekday;
export type Ordinal = commonV1.Ordinal;

/** The value of a name: certain for a name of the vocabulary, undefined for a string that names nothing. */
export interface NamedLookup<Name extends string, Value> {
  (name: Name): Value;
  (name: string): Value | undefined;
}

/** One enum's words: the list in the enum's order, and lookups both ways. */
function wordsOf<Value extends number, const Name extends string>(names: Record<Value, Name>) {
  const byName = new Map<string, Value>(Object.entries<Name>(names).map(([value, name]) => [name, Number(value) as Value]));
  const byValue = new Map<number, Name>([...byName].map(([name, value]) => [value, name as Name]));
  return {
    list: [...byName.keys()] as [Name, ...Name[]],
    named: ((name: string) => byName.get(name)) as NamedLookup<Name, Value>,
    is: (name: string): name is Name => byName.has(name),
    /** The name of a value; undefined for UNSPECIFIED or a value this build does not know. */
    nameOf: (value: number): Name | undefined => byValue.get(value),
  };
}

/** A channel a message or step can have. */
export type KnownChannel = Exclude<Channel, commonV1.Channel.UNSPECIFIED>;

/** Novu's name of each channel. */
export const CHANNEL_NAMES = {
  [Channel.IN_APP]: "in_app",
  [Channel.EMAIL]: "email",
  [Channel.SMS]: "sms",
  [Channel.CHAT]: "chat",
  [Channel.PUSH]: "push",
} as const satisfies Record<KnownChannel, string>;

export type ChannelName = (typeof CHANNEL_NAMES)[KnownChannel];

const channels = wordsOf(CHANNEL_NAMES);

/** Every channel's name, in the enum's order (in_app, email, sms, chat, push). */
export const CHANNELS = channels.list;
export const channelNamed: NamedLookup<ChannelName, KnownChannel> = channels.named;
export const isChannelName = channels.is;
export const channelName = (channel: Channel): ChannelName | undefined => channels.nameOf(channel);

/** A record with an entry for every channel name (a schema's fields per channel, say). */
export function perChannel<T>(entry: (name: ChannelName) => T): Record<ChannelName, T> {
  return Object.fromEntries(CHANNELS.map((name) => [name, entry(name)])) as Record<ChannelName, T>;
}

/** A step type a workflow step can have. */
export type KnownStepType = Exclude<StepType, commonV1.StepType.UNSPECIFIED>;

/** The step type that delivers on each channel: a channel added without one does not compile. */
const CHANNEL_STEP_TYPES = {
  [Channel.IN_APP]: StepType.IN_APP,
  [Channel.EMAIL]: StepType.EMAIL,
  [Channel.SMS]: StepType.SMS,
  [Channel.CHAT]: StepType.CHAT,
  [Channel.PUSH]: StepType.PUSH,
} as const satisfies Record<KnownChannel, KnownStepType>;

const CHANNELS_BY_STEP_TYPE = new Map<StepType, KnownChannel>(
  Object.entries(CHANNEL_STEP_TYPES).map(([channel, stepType]) => [stepType, Number(channel) as KnownChannel]),
);

/** The channel a step of this type delivers on; undefined for digest, delay and throttle, which shape the run instead. */
export const stepChannel = (type: StepType): KnownChannel | undefined => CHANNELS_BY_STEP_TYPE.get(type);

/** Novu's name of each step type: a channel step is named by its channel. */
export const STEP_TYPE_NAMES = {
  [StepType.IN_APP]: CHANNEL_NAMES[Channel.IN_APP],
  [StepType.EMAIL]: CHANNEL_NAMES[Channel.EMAIL],
  [StepType.SMS]: CHANNEL_NAMES[Channel.SMS],
  [StepType.CHAT]: CHANNEL_NAMES[Channel.CHAT],
  [StepType.PUSH]: CHANNEL_NAMES[Channel.PUSH],
  [StepType.DIGEST]: "digest",
  [StepType.DELAY]: "delay",
  [StepType.THROTTLE]: "throttle",
} as const satisfies Record<KnownStepType, string>;

export type StepTypeName = (typeof STEP_TYPE_NAMES)[KnownStepType];

const stepTypes = wordsOf(STEP_TYPE_NAMES);

/** Every step type's name, in the enum's order. */
export const STEP_TYPES = stepTypes.list;
export const stepTypeNamed: NamedLookup<StepTypeName, KnownStepType> = stepTypes.named;
export const stepTypeName = (type: StepType): StepTypeName | undefined => stepTypes.nameOf(type);

/** A day a schedule or a timed digest can name. */
export type KnownWeekday = Exclude<Weekday, commonV1.Weekday.UNSPECIFIED>;

/** Novu's name of each day of the week. */
export const WEEKDAY_NAMES = {
  [Weekday.MONDAY]: "monday",
  [Weekday.TUESDAY]: "tuesday",
  [Weekday.WEDNESDAY]: "wednesday",
  [Weekday.THURSDAY]: "thursday",
  [Weekday.FRIDAY]: "friday",
  [Weekday.SATURDAY]: "saturday",
  [Weekday.SUNDAY]: "sunday",
} as const satisfies Record<KnownWeekday, string>;

export type WeekdayName = (typeof WEEKDAY_NAMES)[KnownWeekday];

const weekdays = wordsOf(WEEKDAY_NAMES);

/** Every day's name, Monday first. */
export const WEEKDAYS = weekdays.list;
export const weekdayNamed: NamedLookup<WeekdayName, KnownWeekday> = weekdays.named;
export const weekdayName = (day: Weekday): WeekdayName | undefined => weekdays.nameOf(day);

/** Which of a month's matching days an ordinal means. */
export type KnownOrdinal = Exclude<Ordinal, commonV1.Ordinal.UNSPECIFIED>;

/** Novu's name of each ordinal. */
export const ORDINAL_NAMES = {
  [Ordinal.FIRST]: "1",
  [Ordinal.SECOND]: "2",
  [Ordinal.THIRD]: "3",
  [Ordinal.FOURTH]: "4",
  [Ordinal.FIFTH]: "5",
  [Ordinal.LAST]: "last",
} as const satisfies Record<KnownOrdinal, string>;

export type OrdinalName = (typeof ORDINAL_NAMES)[KnownOrdinal];

const ordinals = wordsOf(ORDINAL_NAMES);

export const ORDINALS = ordinals.list;
export const ordinalNamed: NamedLookup<OrdinalName, KnownOrdinal> = ordinals.named;
export const ordinalName = (ordinal: Ordinal): OrdinalName | undefined => ordinals.nameOf(ordinal);

const { MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY } = Weekday;

/**
 * The days a monthly ordinal counts among, by Novu's name (a timed digest's ordinalValue): every
 * day, the working days, the weekend, or one day (listed Sunday first, as the spec does).
 */
const ORDINAL_DAY_SETS = new Map<string, readonly KnownWeekday[]>([
  ["day", [MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY]],
  ["weekday", [MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY]],
  ["weekend", [SATURDAY, SUNDAY]],
  ...([SUNDAY, MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY] as const).map((day): [string, KnownWeekday[]] => [WEEKDAY_NAMES[day], [day]]),
]);

/** Every name of a day set an ordinal counts among. */
export const ORDINAL_DAY_NAMES = [...ORDINAL_DAY_SETS.keys()] as [string, ...string[]];

/** The days of a name of ORDINAL_DAY_NAMES; undefined for a name that is none. */
export const ordinalDaysNamed = (name: string): readonly KnownWeekday[] | undefined => ORDINAL_DAY_SETS.get(name);

/** The name of a day set; undefined for a set that has none. */
export function ordinalDaysName(days: readonly Weekday[]): string | undefined {
  const given = new Set(days);
  for (const [name, set] of ORDINAL_DAY_SETS) if (set.length === given.size && set.every((day) => given.has(day))) return name;
  return undefined;
}

/** A timed digest's days in Novu's words (its weekDays, ordinal and ordinalValue). */
export interface TimedDayNames {
  weekDays?: readonly string[] | undefined;
  ordinal?: string | undefined;
  ordinalValue?: string | undefined;
}

type TimedDays = Pick<workflowsV1.TimedConfig, "weekDays" | "ordinal" | "ordinalDays">;

/** A timed digest's days as a TimedConfig carries them; a word that names nothing becomes UNSPECIFIED, which the worker refuses. */
export function timedDaysNamed(names: TimedDayNames): TimedDays {
  return {
    weekDays: (names.weekDays ?? []).map((name) => weekdayNamed(name) ?? Weekday.UNSPECIFIED),
    ordinal: names.ordinal === undefined ? Ordinal.UNSPECIFIED : (ordinalNamed(names.ordinal) ?? Ordinal.UNSPECIFIED),
    ordinalDays: names.ordinalValue === undefined ? [] : [...(ordinalDaysNamed(names.ordinalValue) ?? [Weekday.UNSPECIFIED])],
  };
}

/** A timed digest's days in Novu's words; ordinal and ordinalValue only when set. */
export function timedDayNames(days: TimedDays): TimedDayNames & { weekDays: string[] } {
  const ordinal = ordinalName(days.ordinal);
  const ordinalValue = ordinalDaysName(days.ordinalDays);
  return {
    weekDays: days.weekDays.flatMap((day) => weekdayName(day) ?? []),
    ...(ordinal !== undefined ? { ordinal } : {}),
    ...(ordinalValue !== undefined ? { ordinalValue } : {}),
  };
}

/** A severity a message or workflow can have. */
export type KnownSeverity = Exclude<Severity, commonV1.Severity.UNSPECIFIED>;

/** Novu's name of each severity. */
export const SEVERITY_NAMES = {
  [Severity.NONE]: "none",
  [Severity.LOW]: "low",
  [Severity.MEDIUM]: "medium",
  [Severity.HIGH]: "high",
} as const satisfies Record<KnownSeverity, string>;

export type SeverityName = (typeof SEVERITY_NAMES)[KnownSeverity];

const severities = wordsOf(SEVERITY_NAMES);

/** Every severity's name, in the enum's order (none, low, medium, high). */
export const SEVERITIES = severities.list;
export const severityNamed: NamedLookup<SeverityName, KnownSeverity> = severities.named;
export const severityName = (severity: Severity): SeverityName | undefined => severities.nameOf(severity);

/** The providers a subscriber's chat channel may name (the spec's list plus novu-slack, which the SDK sends). */
export const CHAT_PROVIDER_IDS: ReadonlySet<string> = new Set([
  "slack",
  "discord",
  "msteams",
  "mattermost",
  "ryver",
  "zulip",
  "grafana-on-call",
  "getstream",
  "rocket-chat",
  "whatsapp-business",
  "chat-webhook",
  "novu-slack",
]);

/** The providers a subscriber's push channel may name. */
export const PUSH_PROVIDER_IDS: ReadonlySet<string> = new Set(["fcm", "apns", "expo", "one-signal", "pushpad", "push-webhook", "pusher-beams"]);

/** A context's type and id (Novu's rule), checked by the gateway, the services and the table alike. */
export const CONTEXT_NAME = /^[a-zA-Z0-9_-]{1,100}$/;
/** A context's key: its type and id. */
export const CONTEXT_KEY = /^[a-zA-Z0-9_-]{1,100}:[a-zA-Z0-9_-]{1,100}$/;
/** Contexts one trigger or session may name. */
export const MAX_CONTEXTS = 5;
/** A context's data, as JSON text. */
export const MAX_CONTEXT_DATA_BYTES = 64 * 1024;

/** A context's key ("type:id"): how messages, sessions and lookups name it. */
export const contextKeyOf = (context: { type: string; id: string }) => `${context.type}:${context.id}`;

/**
 * The keys of a trigger's or a session's contexts, sorted: what the trigger's messages are stamped
 * with, and what an Inbox session must match exactly to show them.
 */
export function contextKeysOf(contexts: readonly { type: string; id: string }[]): string[] {
  return contexts.map(contextKeyOf).sort();
}

/** Context keys a call names, checked and sorted: the form they are stored and matched in. */
export function checkContextKeys(keys: readonly string[]): string[] {
  if (keys.length > MAX_CONTEXTS) throw invalidField("contextKeys", `at most ${MAX_CONTEXTS} context keys`, keys.length);
  const bad = keys.find((key) => !CONTEXT_KEY.test(key));
  if (bad !== undefined) throw invalidField("contextKeys", "a context key is <type>:<id>", bad);
  return [...keys].sort();
}

/** The context scope a call asks for: its context keys, or null for every context. */
export function contextScopeOf(request: { contextKeys: readonly string[]; anyContext: boolean }): string[] | null {
  return request.anyContext ? null : checkContextKeys(request.contextKeys);
}
