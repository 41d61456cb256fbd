/**
 * The public API's words for the shared vocabulary (proto notify.common.v1), spelled here only.
 * Maps are exhaustive records over the enums: a value added to an enum does not compile until it
 * is named here, and every list below follows from the names.
 */
import { commonV1 } from "@notify/proto";

export const { Channel, SortDirection, Severity } = commonV1;
export type Channel = commonV1.Channel;
export type SortDirection = commonV1.SortDirection;
export type Severity = commonV1.Severity;

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

/** Every channel's name, in the enum's order (in_app, email, sms, chat, push). */
export const CHANNELS = Object.values(CHANNEL_NAMES) as [ChannelName, ...ChannelName[]];

const CHANNELS_BY_NAME = new Map<string, KnownChannel>(Object.entries(CHANNEL_NAMES).map(([value, name]) => [name, Number(value) as KnownChannel]));

/** The channel of a name; undefined for a name that is none. */
export const channelNamed = (name: string): KnownChannel | undefined => CHANNELS_BY_NAME.get(name);

export const isChannelName = (name: string): name is ChannelName => CHANNELS_BY_NAME.has(name);

/** Novu's name of a channel; undefined for UNSPECIFIED or a value this build does not know. */
export const channelName = (channel: Channel): ChannelName | undefined => CHANNEL_NAMES[channel as KnownChannel];

/** A record with an entry for every channel name (a schema's fields per channel, say). */
export function perChannel<T>(entry: (name: ChannelName) => T): Record<ChannelName, T> {
  return Object.fromEntries(CHANNELS.map((name) => [name, entry(name)])) as Record<ChannelName, T>;
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

/** Every severity's name, in the enum's order (none, low, medium, high). */
export const SEVERITIES = Object.values(SEVERITY_NAMES) as [SeverityName, ...SeverityName[]];

const SEVERITIES_BY_NAME = Object.fromEntries(Object.entries(SEVERITY_NAMES).map(([value, name]) => [name, Number(value)])) as Record<
  SeverityName,
  KnownSeverity
>;

/** The severity of a name; undefined for a name that is none. */
export function severityNamed(name: SeverityName): KnownSeverity;
export function severityNamed(name: string): KnownSeverity | undefined;
export function severityNamed(name: string): KnownSeverity | undefined {
  return Object.hasOwn(SEVERITIES_BY_NAME, name) ? SEVERITIES_BY_NAME[name as SeverityName] : undefined;
}

/** Novu's name of a severity; undefined for UNSPECIFIED or a value this build does not know. */
export const severityName = (severity: Severity): SeverityName | undefined => SEVERITY_NAMES[severity as KnownSeverity];

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
