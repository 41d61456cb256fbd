import { create } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { digestPlan } from "../src/digest.js";

const step = (metadata: Record<string, unknown>) => create(workflowsV1.StepSchema, { template: { type: StepType.DIGEST }, metadata });
const now = Date.parse("2026-01-07T10:20:30Z");

describe("digestPlan", () => {
  it("keys by the value at digestKey, JSON-encoded, and ends a regular window amount × unit from now", () => {
    expect(digestPlan(step({ type: "regular", amount: 2, unit: "seconds", digestKey: "post.id" }), { post: { id: 7 } }, now)).toEqual({
      key: "7",
      runAt: new Date(now + 2_000),
    });
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "minutes", digestKey: "post.id" }), { post: { id: "7" } }, now)).toMatchObject({ key: '"7"' });
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "minutes", digestKey: "post.id" }), {}, now)).toMatchObject({ key: "" });
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "minutes" }), { post: 1 }, now)).toMatchObject({ key: "" });
  });

  it("adds the backoff window for type backoff or backoff: true", () => {
    const expected = { key: "", runAt: new Date(now + 300_000), backoffMs: 30_000 };
    expect(digestPlan(step({ type: "backoff", amount: 5, unit: "minutes", backoffAmount: 30, backoffUnit: "seconds" }), {}, now)).toEqual(expected);
    expect(digestPlan(step({ type: "regular", backoff: true, amount: 5, unit: "minutes", backoffAmount: 30, backoffUnit: "seconds" }), {}, now)).toEqual(
      expected,
    );
    expect(digestPlan(step({ type: "backoff", amount: 5, unit: "minutes" }), {}, now)).toHaveProperty("error");
  });

  it("ends a timed window at the next boundary", () => {
    expect(digestPlan(step({ type: "timed", amount: 1, unit: "days", timed: { atTime: "18:00" } }), {}, now)).toEqual({
      key: "",
      runAt: new Date("2026-01-07T18:00:00Z"),
    });
    expect(digestPlan(step({ type: "timed", amount: 1, unit: "seconds" }), {}, now)).toHaveProperty("error");
  });

  it("refuses a window without a valid amount and unit", () => {
    expect(digestPlan(step({ type: "regular", unit: "minutes" }), {}, now)).toHaveProperty("error");
    expect(digestPlan(step({ type: "regular", amount: 1, unit: "fortnights" }), {}, now)).toHaveProperty("error");
    expect(digestPlan(create(workflowsV1.StepSchema, { template: { type: StepType.DIGEST } }), {}, now)).toHaveProperty("error");
  });
});
