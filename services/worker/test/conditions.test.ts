import { describe, expect, it, vi } from "vitest";
import { conditionsHold, type ConditionData } from "../src/conditions.js";

const data: ConditionData = {
  payload: {
    plan: "pro",
    seats: "12",
    total: 120,
    trial: "false",
    email: "ada@example.com",
    tags: ["a"],
    signedUp: new Date(Date.now() - 3 * 86_400_000).toISOString(),
  },
  subscriber: { firstName: "Ada", locale: null },
  steps: { digest: { eventCount: 3 } },
  env: { REGION: "eu" },
};
const holds = (rule: Record<string, unknown>) => conditionsHold(rule, data);
const v = (name: string) => ({ var: name });

describe("v2 step conditions (JSON Logic, as Novu evaluates them)", () => {
  it("runs a step without conditions", () => {
    expect(conditionsHold(undefined, data)).toBe(true);
    expect(conditionsHold({}, data)).toBe(true);
  });

  it("reads the environment's variables", () => {
    expect(holds({ "==": [v("env.REGION"), "eu"] })).toBe(true);
    expect(holds({ "==": [v("env.MISSING"), "eu"] })).toBe(false);
  });

  it("compares numeric texts as numbers, boolean texts as booleans, dates as instants, and nothing else as ordered", () => {
    expect(holds({ ">": [v("payload.seats"), 9] })).toBe(true);
    expect(holds({ "==": [v("payload.seats"), 12] })).toBe(true);
    expect(holds({ "==": [v("payload.trial"), false] })).toBe(true);
    expect(holds({ "<": ["2026-01-01", "2026-02-01T00:00:00Z"] })).toBe(true);
    expect(holds({ ">": [v("payload.plan"), "a"] })).toBe(false);
    expect(holds({ "==": [v("payload.plan"), "pro"] })).toBe(true);
    expect(holds({ "!=": [v("payload.plan"), "free"] })).toBe(true);
    expect(holds({ "=": [v("subscriber.firstName"), "Ada"] })).toBe(true);
    expect(holds({ "<=": [100, v("payload.total"), 200] })).toBe(true);
    expect(holds({ ">=": [v("steps.digest.eventCount"), 3] })).toBe(true);
  });

  it("has the text, list, null and range operators the dashboard writes", () => {
    expect(
      holds({ and: [{ startsWith: [v("payload.email"), "ada"] }, { endsWith: [v("payload.email"), ".com"] }, { contains: [v("payload.email"), "@"] }] }),
    ).toBe(true);
    expect(
      holds({
        or: [
          { doesNotContain: [v("payload.email"), "@"] },
          { doesNotBeginWith: [v("payload.email"), "ada"] },
          { doesNotEndWith: [v("payload.email"), ".com"] },
        ],
      }),
    ).toBe(false);
    expect(holds({ null: [v("subscriber.locale")] })).toBe(true);
    expect(holds({ notNull: [v("subscriber.firstName")] })).toBe(true);
    expect(holds({ in: [v("payload.plan"), ["pro", "team"]] })).toBe(true);
    expect(holds({ notIn: [v("payload.plan"), ["free"]] })).toBe(true);
    expect(holds({ between: [v("payload.total"), [100, 200]] })).toBe(true);
    expect(holds({ notBetween: [v("payload.total"), [100, 200]] })).toBe(false);
    expect(holds({ contains: [v("payload.total"), "1"] })).toBe(false);
  });

  it("compares dates with a time ago", () => {
    expect(holds({ withinLast: [v("payload.signedUp"), { amount: 1, unit: "weeks" }] })).toBe(true);
    expect(holds({ moreThanXAgo: [v("payload.signedUp"), { amount: 2, unit: "days" }] })).toBe(true);
    expect(holds({ lessThanXAgo: [v("payload.signedUp"), { amount: 2, unit: "days" }] })).toBe(false);
    expect(holds({ notWithinLast: [v("payload.signedUp"), { amount: 1, unit: "days" }] })).toBe(true);
    expect(holds({ exactlyXAgo: [v("payload.signedUp"), { amount: 3, unit: "days" }] })).toBe(true);
    expect(holds({ withinLast: [v("payload.signedUp"), { amount: 0, unit: "days" }] })).toBe(false);
    expect(holds({ withinLast: [v("payload.plan"), { amount: 1, unit: "days" }] })).toBe(false);
  });

  it("reads a missing value as not there, and throws on an operator it does not know", () => {
    expect(holds({ "==": [v("payload.missing"), null] })).toBe(true);
    expect(holds({ "!!": [v("payload.tags")] })).toBe(true);
    expect(() => holds({ sortOf: [1, 2] })).toThrow(/Unrecognized operation/);
  });

  it("answers log's value without printing it", () => {
    const printed = vi.spyOn(console, "log").mockImplementation(() => undefined);
    expect(holds({ "==": [{ log: v("payload.plan") }, "pro"] })).toBe(true);
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();
  });
});
