import { create } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { delayUntil } from "../src/delay.js";

const step = (metadata: Record<string, unknown>) => create(workflowsV1.StepSchema, { template: { type: StepType.DELAY }, metadata });
const now = Date.parse("2026-01-01T00:00:00Z");

describe("delayUntil", () => {
  it("adds amount × unit, a month being 30 days", () => {
    expect(delayUntil(step({ type: "regular", amount: 5, unit: "minutes" }), {}, {}, now)).toEqual({ runAt: new Date(now + 300_000) });
    expect(delayUntil(step({ type: "regular", amount: 1, unit: "months" }), {}, {}, now)).toEqual({ runAt: new Date(now + 30 * 86_400_000) });
  });

  it("lets overrides.delay win over the step", () => {
    expect(delayUntil(step({ type: "regular", amount: 5, unit: "minutes" }), {}, { delay: { amount: 2, unit: "seconds" } }, now)).toEqual({
      runAt: new Date(now + 2_000),
    });
  });

  it("waits until the payload's date for a scheduled delay, refusing a past one", () => {
    const scheduled = step({ type: "scheduled", delayPath: "sendAt" });
    expect(delayUntil(scheduled, { sendAt: "2026-01-02T00:00:00Z" }, {}, now)).toEqual({ runAt: new Date("2026-01-02T00:00:00Z") });
    expect(delayUntil(scheduled, { sendAt: "2025-12-31T00:00:00Z" }, {}, now)).toEqual({ error: "Delay date at path must be a future date" });
    expect(delayUntil(scheduled, {}, {}, now)).toHaveProperty("error");
  });

  it("waits for a timed delay's cron to occur next, on the subscriber's clock (UTC's for an unknown zone)", () => {
    const daily = step({ type: "timed", cron: "0 9 * * *" });
    expect(delayUntil(daily, {}, {}, now)).toEqual({ runAt: new Date("2026-01-01T09:00:00Z") });
    expect(delayUntil(daily, {}, {}, now, "America/New_York")).toEqual({ runAt: new Date("2026-01-01T14:00:00Z") });
    expect(delayUntil(daily, {}, {}, now, "Not/AZone")).toEqual({ runAt: new Date("2026-01-01T09:00:00Z") });
    expect(delayUntil(step({ type: "timed", cron: "61 * * * *" }), {}, {}, now)).toHaveProperty("error");
    expect(delayUntil(step({ type: "timed" }), {}, {}, now)).toHaveProperty("error");
  });
});
