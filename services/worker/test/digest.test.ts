import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { digestPlan, digestVariables } from "../src/digest.js";

const step = (metadata: Record<string, unknown>) => create(workflowsV1.StepSchema, { template: { type: StepType.DIGEST }, metadata });
const now = Date.parse("2026-01-07T10:20:30Z");

describe("digestPlan", () => {
  it("keys by the value at digestKey, JSON-encoded, and ends a regular window amount × unit from now", () => {
    expect(digestPlan(step({ type: "regular", amount: 2, unit: "seconds", digestKey: "post.id" }), { post: { id: 7 } }, {}, now)).toEqual({
      key: "7",
      runAt: new Date(now + 2_000),
    });
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "minutes", digestKey: "post.id" }), { post: { id: "7" } }, {}, now)).toMatchObject({
      key: '"7"',
    });
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "minutes", digestKey: "post.id" }), {}, {}, now)).toMatchObject({ key: "" });
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "minutes" }), { post: 1 }, {}, now)).toMatchObject({ key: "" });
    // Events of other contexts digest apart.
    const byPost = step({ type: "regular", amount: 1, unit: "minutes", digestKey: "post.id" });
    expect(digestPlan(byPost, { post: { id: 7 } }, {}, now, ["app:jira", "tenant:acme"])).toMatchObject({ key: "7 app:jira,tenant:acme" });
    expect(digestPlan(byPost, {}, {}, now, ["tenant:acme"])).toMatchObject({ key: " tenant:acme" });
  });

  it("adds the backoff window for type backoff or backoff: true", () => {
    const expected = { key: "", runAt: new Date(now + 300_000), backoffMs: 30_000 };
    expect(digestPlan(step({ type: "backoff", amount: 5, unit: "minutes", backoffAmount: 30, backoffUnit: "seconds" }), {}, {}, now)).toEqual(expected);
    expect(digestPlan(step({ type: "regular", backoff: true, amount: 5, unit: "minutes", backoffAmount: 30, backoffUnit: "seconds" }), {}, {}, now)).toEqual(
      expected,
    );
    expect(digestPlan(step({ type: "backoff", amount: 5, unit: "minutes" }), {}, {}, now)).toHaveProperty("error");
  });

  it("takes the trigger's overrides.delay as the window of a regular or backoff digest, when both its fields are valid", () => {
    const overrides = { delay: { amount: 5, unit: "seconds" } };
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "hours" }), {}, overrides, now)).toEqual({ key: "", runAt: new Date(now + 5_000) });
    const backoff = step({ type: "backoff", amount: 1, unit: "hours", backoffAmount: 30, backoffUnit: "seconds" });
    expect(digestPlan(backoff, {}, overrides, now)).toEqual({ key: "", runAt: new Date(now + 5_000), backoffMs: 30_000 });
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "hours" }), {}, { delay: { amount: 5 } }, now)).toMatchObject({
      runAt: new Date(now + 3_600_000),
    });
    // A timed digest ends at its boundary whatever the trigger says.
    expect(digestPlan(step({ type: "timed", amount: 1, unit: "days", timed: { atTime: "18:00" } }), {}, overrides, now)).toMatchObject({
      runAt: new Date("2026-01-07T18:00:00Z"),
    });
  });

  it("ends a timed window at the next boundary", () => {
    expect(digestPlan(step({ type: "timed", amount: 1, unit: "days", timed: { atTime: "18:00" } }), {}, {}, now)).toEqual({
      key: "",
      runAt: new Date("2026-01-07T18:00:00Z"),
    });
    expect(digestPlan(step({ type: "timed", amount: 1, unit: "seconds" }), {}, {}, now)).toHaveProperty("error");
  });

  it("ends a v2 timed window at its cron's next occurrence on the subscriber's clock", () => {
    const mondays = step({ type: "timed", cron: "0 8 * * 1", digestKey: "post.id" });
    // 2026-01-07 is a Wednesday: the next Monday 08:00 in Tokyo is 2026-01-11T23:00Z.
    expect(digestPlan(mondays, { post: { id: 1 } }, {}, now, [], "Asia/Tokyo")).toEqual({ key: "1", runAt: new Date("2026-01-11T23:00:00Z") });
    expect(digestPlan(step({ type: "timed", cron: "not a cron" }), {}, {}, now)).toHaveProperty("error");
  });

  it("refuses a window without a valid amount and unit", () => {
    expect(digestPlan(step({ type: "regular", unit: "minutes" }), {}, {}, now)).toHaveProperty("error");
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "fortnights" }), {}, {}, now)).toHaveProperty("error");
    expect(digestPlan(create(workflowsV1.StepSchema, { template: { type: StepType.DIGEST } }), {}, {}, now)).toHaveProperty("error");
  });
});

describe("digestVariables", () => {
  const steps = [
    create(workflowsV1.StepSchema, { stepId: "first", template: { type: StepType.DIGEST } }),
    create(workflowsV1.StepSchema, { stepId: "bell", template: { type: StepType.IN_APP } }),
    create(workflowsV1.StepSchema, { stepId: "comments", template: { type: StepType.DIGEST } }),
    create(workflowsV1.StepSchema, { stepId: "mail", template: { type: StepType.EMAIL } }),
  ];
  const digested = {
    events: [{ author: "Al" }, { author: "Bo" }],
    arrivals: [{ transactionId: "t1", arrivedAt: timestampFromDate(new Date(now)) }, { transactionId: "t2" }],
    totalCount: 3,
  };

  it("gives v1 templates step.events and step.total_count, and v2 templates the last digest before the step as Novu's events and eventCount", () => {
    expect(digestVariables(digested, steps, 3)).toEqual({
      step: { digest: true, events: [{ author: "Al" }, { author: "Bo" }], total_count: 3 },
      steps: {
        comments: {
          events: [
            { id: "t1", time: "2026-01-07T10:20:30.000Z", payload: { author: "Al" } },
            { id: "t2", time: "", payload: { author: "Bo" } },
          ],
          eventCount: 3,
        },
      },
    });
    expect(Object.keys(digestVariables(digested, steps, 1).steps)).toEqual(["first"]);
    expect(digestVariables(undefined, steps, 3)).toEqual({ step: { digest: false }, steps: {} });
  });
});
