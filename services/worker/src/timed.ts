import type { workflowsV1 } from "@notify/proto";
import { Ordinal, Weekday, type KnownOrdinal, type KnownWeekday } from "@notify/runtime";

export type Boundary = { runAt: Date } | { error: string };

const DAY_MS = 86_400_000;
/** Each day as Date.getUTCDay() numbers it. */
const UTC_DAYS = {
  [Weekday.SUNDAY]: 0,
  [Weekday.MONDAY]: 1,
  [Weekday.TUESDAY]: 2,
  [Weekday.WEDNESDAY]: 3,
  [Weekday.THURSDAY]: 4,
  [Weekday.FRIDAY]: 5,
  [Weekday.SATURDAY]: 6,
} as const satisfies Record<KnownWeekday, number>;
/** Each ordinal as a position among a month's matching days (Array.at: negative from the end). */
const ORDINAL_POSITIONS = {
  [Ordinal.FIRST]: 0,
  [Ordinal.SECOND]: 1,
  [Ordinal.THIRD]: 2,
  [Ordinal.FOURTH]: 3,
  [Ordinal.FIFTH]: 4,
  [Ordinal.LAST]: -1,
} as const satisfies Record<KnownOrdinal, number>;
/** The days as getUTCDay() numbers them; undefined when one is UNSPECIFIED or of a newer build. */
function utcDaysOf(days: readonly Weekday[]): number[] | undefined {
  const numbered = days.map((day) => (UTC_DAYS as Partial<Record<Weekday, number>>)[day]);
  return numbered.includes(undefined) ? undefined : (numbered as number[]);
}
const ordinalPosition = (ordinal: Ordinal): number | undefined => (ORDINAL_POSITIONS as Partial<Record<Ordinal, number>>)[ordinal];
/** Periods (grid points, days, weeks or months of the interval) looked at before giving up. */
const MAX_PERIODS = 400;

const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const monthIndex = (date: Date) => date.getUTCFullYear() * 12 + date.getUTCMonth();
const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

function timeOfDay(atTime: string | undefined): number | undefined {
  if (atTime === undefined || atTime === "") return 0;
  const match = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(atTime);
  if (!match) return undefined;
  const [hours, minutes, seconds] = [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
  return ((hours * 60 + minutes) * 60 + seconds) * 1000;
}

/** Whether a day is the one at `position` among the days of its month whose weekday is listed. */
function isOrdinalDay(day: Date, position: number, weekdays: readonly number[]): boolean {
  const year = day.getUTCFullYear();
  const month = day.getUTCMonth();
  if (!weekdays.includes(day.getUTCDay())) return false;
  const matching: number[] = [];
  for (let date = 1; date <= daysInMonth(year, month); date += 1) {
    if (weekdays.includes(new Date(Date.UTC(year, month, date)).getUTCDay())) matching.push(date);
  }
  return matching.at(position) === day.getUTCDate();
}

/**
 * When a timed digest's window ends: the first boundary after `now` (UTC) of a recurrence of
 * `amount` (default 1) `unit`s at `timed.atTime` ("HH:mm", default 00:00):
 * - minutes, hours: every amount × unit on a grid through today's atTime;
 * - days: atTime on every amount-th day from today;
 * - weeks: atTime on the `weekDays` (default: today's) of every amount-th week from this one
 *   (weeks start on Monday);
 * - months: atTime on the `monthDays` (default: today's day of the month, days a month lacks are
 *   skipped) of every amount-th month from this one, or with `monthlyType: "on"` on the
 *   `ordinal` (first … fifth or last) of its days among `ordinalDays`.
 * `weekDays` and `monthDays` also restrict the boundaries of the other units to those days. As
 * in Novu's recurrence, but boundaries fall on whole seconds of atTime, and minutes and hours
 * keep their grid rather than counting from now. Answers an error for what it cannot compute.
 */
export function nextTimedBoundary(metadata: TimedMetadata, now: Date, timeZone?: string): Boundary {
  const zone = timeZone ? zoneFormat(timeZone) : undefined;
  if (!zone) return nextUtcBoundary(metadata, now);
  const boundary = nextUtcBoundary(metadata, new Date(wallClockMs(now.getTime(), zone)));
  return "error" in boundary ? boundary : { runAt: new Date(instantOfWallClock(boundary.runAt.getTime(), zone)) };
}

type TimedMetadata = Pick<workflowsV1.StepMetadata, "amount" | "unit" | "timed">;

const zoneFormats = new Map<string, Intl.DateTimeFormat | undefined>();

/** A formatter of a zone's wall clock; undefined for a zone Intl does not know (the boundary is then UTC's). */
function zoneFormat(timeZone: string): Intl.DateTimeFormat | undefined {
  if (!zoneFormats.has(timeZone)) {
    let format: Intl.DateTimeFormat | undefined;
    try {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
      });
    } catch {
      format = undefined;
    }
    if (zoneFormats.size < 1_000) zoneFormats.set(timeZone, format);
    return format;
  }
  return zoneFormats.get(timeZone);
}

/** What a zone's wall clock reads at an instant, as the UTC instant that reads the same. */
function wallClockMs(ms: number, zone: Intl.DateTimeFormat): number {
  const part = Object.fromEntries(zone.formatToParts(new Date(ms)).map(({ type, value }) => [type, Number(value)]));
  return Date.UTC(part["year"]!, part["month"]! - 1, part["day"], part["hour"], part["minute"], part["second"]) + (ms - Math.floor(ms / 1000) * 1000);
}

/** The instant a zone's wall clock reads `wall` (after a clock change, the reading's later instant). */
function instantOfWallClock(wall: number, zone: Intl.DateTimeFormat): number {
  const guess = wall - (wallClockMs(wall, zone) - wall);
  return wall - (wallClockMs(guess, zone) - guess);
}

/** The next boundary on UTC's calendar and clock. */
function nextUtcBoundary(metadata: TimedMetadata, now: Date): Boundary {
  const unit = metadata.unit ?? "";
  const interval = metadata.amount ?? 1;
  if (!Number.isInteger(interval) || interval < 1) return { error: `Timed digest amount must be a positive whole number, not ${interval}` };
  const timed = metadata.timed;
  const at = timeOfDay(timed?.atTime);
  if (at === undefined) return { error: `Timed digest atTime must be HH:mm, not ${timed?.atTime}` };
  const weekDays = utcDaysOf(timed?.weekDays ?? []);
  if (weekDays === undefined) return { error: `Timed digest weekDays must be days of the week, not ${timed?.weekDays.join(",")}` };
  const monthDays = (timed?.monthDays ?? []).map(Number);
  if (monthDays.some((day) => !Number.isInteger(day) || day < 1 || day > 31)) {
    return { error: `Timed digest monthDays must be 1 … 31, not ${timed?.monthDays.join(",")}` };
  }
  const onOrdinal = unit === "months" && timed?.monthlyType === "on";
  const position = ordinalPosition(timed?.ordinal ?? Ordinal.UNSPECIFIED);
  const ordinalWeekdays = utcDaysOf(timed?.ordinalDays ?? []);
  if (onOrdinal && (position === undefined || !ordinalWeekdays?.length)) {
    return { error: `Timed digest ordinal ${timed?.ordinal} of days ${timed?.ordinalDays.join(",")} is not a day of a month` };
  }

  const today = new Date(startOfDay(now.getTime()));
  const weekFilter = weekDays.length > 0 ? weekDays : unit === "weeks" ? [today.getUTCDay()] : [];
  const monthFilter = monthDays.length > 0 || weekDays.length > 0 || unit !== "months" ? monthDays : [today.getUTCDate()];
  const dayMatches = (day: Date) =>
    onOrdinal
      ? isOrdinalDay(day, position!, ordinalWeekdays!)
      : (weekFilter.length === 0 || weekFilter.includes(day.getUTCDay())) && (monthFilter.length === 0 || monthFilter.includes(day.getUTCDate()));
  const notFound: Boundary = { error: `Timed digest has no boundary within ${MAX_PERIODS} periods of ${interval} ${unit}` };
  // An interval beyond the dates JavaScript can represent has no boundary either.
  const found = (ms: number): Boundary => (Number.isNaN(new Date(ms).getTime()) ? notFound : { runAt: new Date(ms) });

  if (unit === "minutes" || unit === "hours") {
    const step = interval * (unit === "minutes" ? 60_000 : 3_600_000);
    const anchor = today.getTime() + at;
    // The first grid point at or after `from`.
    const gridFrom = (from: number) => anchor + Math.ceil((from - anchor) / step) * step;
    let candidate = gridFrom(now.getTime() + 1);
    for (let period = 0; period < MAX_PERIODS; period += 1) {
      if (dayMatches(new Date(startOfDay(candidate)))) return found(candidate);
      candidate = gridFrom(startOfDay(candidate) + DAY_MS);
    }
    return notFound;
  }
  if (unit === "days") {
    for (let period = 0; period < MAX_PERIODS; period += 1) {
      const day = today.getTime() + period * interval * DAY_MS;
      if (day + at > now.getTime() && dayMatches(new Date(day))) return found(day + at);
    }
    return notFound;
  }
  if (unit === "weeks") {
    const monday = today.getTime() - ((today.getUTCDay() + 6) % 7) * DAY_MS;
    for (let period = 0; period < MAX_PERIODS; period += 1) {
      for (let weekday = 0; weekday < 7; weekday += 1) {
        const day = monday + (period * interval * 7 + weekday) * DAY_MS;
        if (day + at > now.getTime() && dayMatches(new Date(day))) return found(day + at);
      }
    }
    return notFound;
  }
  if (unit === "months") {
    const first = monthIndex(today);
    for (let period = 0; period < MAX_PERIODS; period += 1) {
      const index = first + period * interval;
      const [year, month] = [Math.floor(index / 12), index % 12];
      for (let date = 1; date <= daysInMonth(year, month); date += 1) {
        const day = Date.UTC(year, month, date);
        if (day + at > now.getTime() && dayMatches(new Date(day))) return found(day + at);
      }
    }
    return notFound;
  }
  return { error: `Timed digest unit must be minutes, hours, days, weeks or months, not ${unit || "none"}` };
}
