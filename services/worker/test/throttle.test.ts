import { create } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { renderer } from "@notify/templates";
import { describe, expect, it } from "vitest";
import { throttlePlan } from "../src/throttle.js";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const payload = { userId: "u-7", window: { amount: 2, unit: "hours" }, until: "2026-11-27T15:00:00Z", past: "2026-11-27T11:00:00Z" };
const render = renderer(workflowsV1.TemplateEngine.LIQUID, { payload, subscriber: {} });
const throttle = (metadata: Parameters<typeof create<typeof workflowsV1.StepMetadataSchema>>[1]) =>
  create(workflowsV1.StepSchema, { template: { type: StepType.THROTTLE }, metadata });
const plan = (metadata: Parameters<typeof throttle>[0]) => throttlePlan(throttle(metadata), "wf:step:sub", payload, render, NOW);

describe("throttlePlan", () => {
  it("counts a fixed window of amount × unit per workflow, step and subscriber, one run unless a threshold is set", () => {
    expect(plan({ type: "fixed", amount: 5, unit: "minutes" })).toEqual({ key: "wf:step:sub", windowEnds: new Date(NOW + 5 * 60_000), threshold: 1 });
    expect(plan({ type: "fixed", amount: 1, unit: "days", threshold: 3 })).toMatchObject({ windowEnds: new Date(NOW + 86_400_000), threshold: 3 });
  });

  it("keeps a window per value of the throttle key, given as a payload path or a template", () => {
    expect(plan({ type: "fixed", amount: 1, unit: "hours", throttleKey: "userId" })).toMatchObject({ key: "wf:step:sub:u-7" });
    expect(plan({ type: "fixed", amount: 1, unit: "hours", throttleKey: "payload.userId" })).toMatchObject({ key: "wf:step:sub:u-7" });
    expect(plan({ type: "fixed", amount: 1, unit: "hours", throttleKey: "{{ payload.userId }}" })).toMatchObject({ key: "wf:step:sub:u-7" });
    // A key without a value throttles per subscriber, as Novu's does.
    expect(plan({ type: "fixed", amount: 1, unit: "hours", throttleKey: "missing" })).toMatchObject({ key: "wf:step:sub" });
  });

  it("ends a dynamic window at the payload's date, or after the duration it holds", () => {
    expect(plan({ type: "dynamic", dynamicKey: "payload.until" })).toMatchObject({ windowEnds: new Date("2026-11-27T15:00:00Z") });
    expect(plan({ type: "dynamic", dynamicKey: "window" })).toMatchObject({ windowEnds: new Date(NOW + 2 * 3_600_000) });
    expect(plan({ type: "dynamic", dynamicKey: "past" })).toEqual({ error: "Throttle window date is in the past" });
  });

  it("names no window for a step without one, which lets every run through, as Novu's does", () => {
    expect(plan({ type: "fixed" })).toBeUndefined();
    expect(plan({ type: "fixed", amount: 1, unit: "fortnights" })).toBeUndefined();
    expect(plan({ type: "dynamic", dynamicKey: "nowhere" })).toBeUndefined();
  });
});
