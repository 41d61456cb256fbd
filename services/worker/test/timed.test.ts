import { create } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { timedDaysNamed, type TimedDayNames } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { nextTimedBoundary } from "../src/timed.js";

// A Wednesday.
const now = new Date("2026-01-07T10:20:30Z");
type TimedInNovuWords = TimedDayNames & { atTime?: string; monthDays?: string[]; monthlyType?: string };

/** The boundary of a timed digest configured in Novu's words, as the gateway takes them. */
const at = (unit: string, amount: number | undefined, { weekDays, ordinal, ordinalValue, ...timed }: TimedInNovuWords = {}, from = now) =>
  nextTimedBoundary(
    {
      unit,
      ...(amount !== undefined ? { amount } : {}),
      timed: create(workflowsV1.TimedConfigSchema, { ...timed, ...timedDaysNamed({ weekDays, ordinal, ordinalValue }) }),
    },
    from,
  );
const runAt = (iso: string) => ({ runAt: new Date(iso) });

describe("nextTimedBoundary", () => {
  it("puts minutes and hours on a grid through atTime (midnight by default)", () => {
    expect(at("minutes", 15)).toEqual(runAt("2026-01-07T10:30:00Z"));
    expect(at("minutes", 15, {}, new Date("2026-01-07T10:30:00Z"))).toEqual(runAt("2026-01-07T10:45:00Z"));
    expect(at("hours", 6)).toEqual(runAt("2026-01-07T12:00:00Z"));
    expect(at("hours", 1, { atTime: "09:45" })).toEqual(runAt("2026-01-07T10:45:00Z"));
    expect(at("hours", 1, { atTime: "10:20:40" })).toEqual(runAt("2026-01-07T10:20:40Z"));
  });

  it("keeps minutes and hours to the listed week days", () => {
    expect(at("hours", 1, { weekDays: ["saturday"] })).toEqual(runAt("2026-01-10T00:00:00Z"));
    expect(at("minutes", 30, { weekDays: ["wednesday"] })).toEqual(runAt("2026-01-07T10:30:00Z"));
  });

  it("takes atTime today when still ahead, else on the next day of the interval", () => {
    expect(at("days", 1, { atTime: "18:00" })).toEqual(runAt("2026-01-07T18:00:00Z"));
    expect(at("days", 1, { atTime: "09:00" })).toEqual(runAt("2026-01-08T09:00:00Z"));
    expect(at("days", 2, { atTime: "09:00" })).toEqual(runAt("2026-01-09T09:00:00Z"));
    expect(at("days", undefined)).toEqual(runAt("2026-01-08T00:00:00Z"));
  });

  it("reads atTime and the days on the subscriber's clock when a time zone is given, as Novu does", () => {
    const daily = { unit: "days", amount: 1, timed: create(workflowsV1.TimedConfigSchema, { atTime: "09:00" }) };
    // 05:20 in New York (UTC-5 in January): 09:00 there is still ahead today.
    expect(nextTimedBoundary(daily, now, "America/New_York")).toEqual(runAt("2026-01-07T14:00:00Z"));
    // In July New York keeps summer time (UTC-4).
    expect(nextTimedBoundary(daily, new Date("2026-07-07T10:20:30Z"), "America/New_York")).toEqual(runAt("2026-07-07T13:00:00Z"));
    // 19:20 in Tokyo: tomorrow's 09:00 there, which is midnight UTC.
    expect(nextTimedBoundary(daily, now, "Asia/Tokyo")).toEqual(runAt("2026-01-08T00:00:00Z"));
    // Friday in Auckland already (UTC+13), so the next Friday 08:00 there is a week away.
    const fridays = {
      unit: "weeks",
      amount: 1,
      timed: create(workflowsV1.TimedConfigSchema, { atTime: "08:00", ...timedDaysNamed({ weekDays: ["friday"] }) }),
    };
    expect(nextTimedBoundary(fridays, new Date("2026-01-08T20:00:00Z"), "Pacific/Auckland")).toEqual(runAt("2026-01-15T19:00:00Z"));
    // A zone Intl does not know is taken as UTC.
    expect(nextTimedBoundary(daily, now, "Mars/Olympus_Mons")).toEqual(runAt("2026-01-08T09:00:00Z"));
  });

  it("takes the next listed week day of every amount-th week (weeks start on Monday)", () => {
    expect(at("weeks", 1, { weekDays: ["monday", "friday"], atTime: "09:00" })).toEqual(runAt("2026-01-09T09:00:00Z"));
    expect(at("weeks", 1, { weekDays: ["monday"], atTime: "09:00" })).toEqual(runAt("2026-01-12T09:00:00Z"));
    expect(at("weeks", 2, { weekDays: ["monday"], atTime: "09:00" })).toEqual(runAt("2026-01-19T09:00:00Z"));
    expect(at("weeks", 1, { weekDays: ["wednesday"], atTime: "18:00" })).toEqual(runAt("2026-01-07T18:00:00Z"));
    // Without weekDays: today's week day.
    expect(at("weeks", 1)).toEqual(runAt("2026-01-14T00:00:00Z"));
  });

  it("takes the next listed month day of every amount-th month, skipping months without it", () => {
    expect(at("months", 1, { monthDays: ["1", "15"], atTime: "08:00" })).toEqual(runAt("2026-01-15T08:00:00Z"));
    expect(at("months", 2, { monthDays: ["5"] })).toEqual(runAt("2026-03-05T00:00:00Z"));
    expect(at("months", 1, { monthDays: ["31"] }, new Date("2026-04-05T00:00:00Z"))).toEqual(runAt("2026-05-31T00:00:00Z"));
    // Without monthDays: today's day of the month.
    expect(at("months", 1)).toEqual(runAt("2026-02-07T00:00:00Z"));
  });

  it("takes an ordinal day of the month with monthlyType on", () => {
    expect(at("months", 1, { monthlyType: "on", ordinal: "last", ordinalValue: "friday", atTime: "17:00" })).toEqual(runAt("2026-01-30T17:00:00Z"));
    expect(at("months", 1, { monthlyType: "on", ordinal: "1", ordinalValue: "weekday" })).toEqual(runAt("2026-02-02T00:00:00Z"));
    expect(at("months", 1, { monthlyType: "on", ordinal: "3", ordinalValue: "weekend" })).toEqual(runAt("2026-01-10T00:00:00Z"));
    expect(at("months", 1, { monthlyType: "on", ordinal: "last", ordinalValue: "day" })).toEqual(runAt("2026-01-31T00:00:00Z"));
    // Only some months have a fifth Monday: March 2026 does, February does not.
    expect(at("months", 1, { monthlyType: "on", ordinal: "5", ordinalValue: "monday" }, new Date("2026-02-01T00:00:00Z"))).toEqual(
      runAt("2026-03-30T00:00:00Z"),
    );
  });

  it("answers an error for what it cannot compute", () => {
    expect(at("seconds", 10)).toHaveProperty("error");
    expect(at("", 1)).toHaveProperty("error");
    expect(at("days", 0)).toHaveProperty("error");
    expect(at("days", 1.5)).toHaveProperty("error");
    expect(at("days", 1, { atTime: "25:00" })).toHaveProperty("error");
    expect(at("days", 1, { atTime: "noon" })).toHaveProperty("error");
    expect(at("weeks", 1, { weekDays: ["funday"] })).toHaveProperty("error");
    expect(at("months", 1, { monthDays: ["0"] })).toHaveProperty("error");
    expect(at("months", 1, { monthlyType: "on", ordinal: "6", ordinalValue: "day" })).toHaveProperty("error");
    // Every 7th day from a Wednesday is never a Monday.
    expect(at("days", 7, { weekDays: ["monday"] })).toHaveProperty("error");
    // Every April has 30 days.
    expect(at("months", 12, { monthDays: ["31"] }, new Date("2026-04-01T00:00:00Z"))).toHaveProperty("error");
    expect(at("days", 1e12)).toHaveProperty("error");
  });
});
