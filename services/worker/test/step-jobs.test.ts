import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { triggersV1, workflowsV1 } from "@notify/proto";
import { Ordinal, StepType, Weekday } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { delayed, digestEntered, digestTriggered, MAX_JOB_DIGEST_EVENTS } from "../src/step-jobs.js";

const job = create(triggersV1.TriggerJobSchema, { triggerId: "t", transactionId: "txn", workflow: { id: "w" } });
const ada = { id: "id-ada", subscriberId: "ada" } as Parameters<typeof delayed>[1];
const step = (type: StepType, metadata: MessageInitShape<typeof workflowsV1.StepMetadataSchema>) =>
  create(workflowsV1.StepSchema, { id: "s", template: { type }, metadata });
const NOW = 1_700_000_000_000;

describe("step jobs' digest metadata, as Novu stores it", () => {
  it("names a regular delay's wait, with Novu's stand-in key, and none for a scheduled one", () => {
    const regular = delayed(job, ada, step(StepType.DELAY, { type: "regular", amount: 5, unit: "minutes" }), new Date(NOW + 300_000), NOW);
    expect(regular.digest).toEqual({ type: "regular", amount: 5, unit: "minutes", digestKey: "No-Key-Provided", events: [] });
    expect(regular.details[0]).toEqual({ detail: "Step delayed", status: "Pending", raw: '{"delay":300000}' });
    expect(delayed(job, ada, step(StepType.DELAY, { type: "scheduled", delayPath: "at" }), new Date(NOW + 1), NOW).digest).toBeUndefined();
  });

  it("says no 'Step delayed' for a wait of no time, as Novu", () => {
    const now = delayed(job, ada, step(StepType.DELAY, { type: "regular", amount: 0, unit: "seconds" }), new Date(NOW), NOW);
    expect(now.details.map((detail) => detail.detail)).toEqual(["Step queued"]);
  });

  it("keeps a digest's type as the step names it, with its backoff, key and timed days in Novu's words", () => {
    const backoff = step(StepType.DIGEST, {
      type: "regular",
      amount: 1,
      unit: "hours",
      digestKey: "postId",
      backoff: true,
      backoffAmount: 5,
      backoffUnit: "minutes",
    });
    expect(digestEntered(job, ada, backoff, "opened", new Date(NOW + 1), NOW).digest).toEqual({
      type: "regular",
      amount: 1,
      unit: "hours",
      digestKey: "postId",
      backoff: true,
      backoffAmount: 5,
      backoffUnit: "minutes",
      events: [],
    });
    const timed = step(StepType.DIGEST, {
      type: "timed",
      timed: {
        atTime: "09:30",
        weekDays: [Weekday.MONDAY, Weekday.FRIDAY],
        monthDays: ["1", "15"],
        monthlyType: "on",
        ordinal: Ordinal.LAST,
        ordinalDays: [Weekday.SATURDAY, Weekday.SUNDAY],
      },
    });
    expect(digestEntered(job, ada, timed, "merged", new Date(NOW + 1), NOW).digest).toEqual({
      type: "timed",
      digestKey: "No-Key-Provided",
      timed: { atTime: "09:30", weekDays: ["monday", "friday"], ordinal: "last", ordinalValue: "weekend", monthDays: [1, 15], monthlyType: "on" },
      events: [],
    });
  });

  it("lists the first of a digest's events on the job that triggered them", () => {
    const events = Array.from({ length: MAX_JOB_DIGEST_EVENTS + 5 }, (_, n) => ({ n }));
    const done = digestTriggered(job, ada, step(StepType.DIGEST, { type: "regular", amount: 1, unit: "hours" }), {
      events,
      arrivals: [],
      totalCount: events.length,
    });
    expect(done.status).toBe("completed");
    expect(done.digest?.["events"]).toHaveLength(MAX_JOB_DIGEST_EVENTS);
    expect(JSON.parse(done.details.at(-1)!.raw!)).toHaveLength(MAX_JOB_DIGEST_EVENTS);
  });
});
