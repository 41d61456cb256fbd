import { describe, expect, it } from "vitest";
import {
  CHANNELS,
  channelName,
  channelNamed,
  ORDINAL_DAY_NAMES,
  ordinalDaysName,
  ordinalDaysNamed,
  Ordinal,
  STEP_TYPES,
  StepType,
  stepChannel,
  stepTypeName,
  stepTypeNamed,
  timedDayNames,
  timedDaysNamed,
  Weekday,
  WEEKDAYS,
} from "../src/vocabulary.js";

describe("vocabulary", () => {
  it("names every step type, a channel step by its channel, and maps each name back", () => {
    expect(STEP_TYPES).toEqual([...CHANNELS, "digest", "delay", "throttle"]);
    for (const name of STEP_TYPES) expect(stepTypeName(stepTypeNamed(name))).toBe(name);
    for (const name of CHANNELS) expect(stepChannel(stepTypeNamed(name))).toBe(channelNamed(name));
    expect(stepChannel(StepType.DIGEST)).toBeUndefined();
    expect(stepChannel(StepType.UNSPECIFIED)).toBeUndefined();
    expect(stepTypeNamed("webhook")).toBeUndefined();
    expect(channelName(99 as never)).toBeUndefined();
  });

  it("reads a timed digest's days in Novu's words and writes them back", () => {
    expect(WEEKDAYS).toEqual(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]);
    expect(ORDINAL_DAY_NAMES).toEqual(["day", "weekday", "weekend", "sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]);
    for (const name of ORDINAL_DAY_NAMES) expect(ordinalDaysName(ordinalDaysNamed(name)!)).toBe(name);
    expect(ordinalDaysName([Weekday.SUNDAY, Weekday.SATURDAY])).toBe("weekend");
    expect(ordinalDaysName([Weekday.MONDAY, Weekday.SUNDAY])).toBeUndefined();

    const words = { weekDays: ["monday", "friday"], ordinal: "last", ordinalValue: "weekday" };
    const days = timedDaysNamed(words);
    expect(days).toEqual({
      weekDays: [Weekday.MONDAY, Weekday.FRIDAY],
      ordinal: Ordinal.LAST,
      ordinalDays: [Weekday.MONDAY, Weekday.TUESDAY, Weekday.WEDNESDAY, Weekday.THURSDAY, Weekday.FRIDAY],
    });
    expect(timedDayNames(days)).toEqual(words);
    expect(timedDayNames(timedDaysNamed({}))).toEqual({ weekDays: [] });
  });

  it("turns words that name nothing into UNSPECIFIED, which no reader accepts", () => {
    expect(timedDaysNamed({ weekDays: ["funday"], ordinal: "6", ordinalValue: "holiday" })).toEqual({
      weekDays: [Weekday.UNSPECIFIED],
      ordinal: Ordinal.UNSPECIFIED,
      ordinalDays: [Weekday.UNSPECIFIED],
    });
  });
});
