import { create } from "@bufbuild/protobuf";
import { triggersV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { callsOf, type HeldRun } from "../src/pipeline.js";

const run = (holdKey: string, bytes: number): HeldRun => ({ holdKey, job: create(triggersV1.TriggerJobSchema), bytes });
const keysOf = (calls: HeldRun[][]) => calls.map((call) => call.map((held) => held.holdKey));

describe("held runs per ScheduleJobs call", () => {
  it("go a thousand at most, and about 4 MiB, a larger one alone", () => {
    expect(keysOf(callsOf([]))).toEqual([]);
    const small = Array.from({ length: 2_500 }, (_, index) => run(`s${index}`, 100));
    expect(callsOf(small).map((call) => call.length)).toEqual([1_000, 1_000, 500]);
    const mib = 1024 * 1024;
    expect(keysOf(callsOf([run("a", 3 * mib), run("b", 2 * mib), run("huge", 9 * mib), run("c", mib), run("d", mib)]))).toEqual([
      ["a"],
      ["b"],
      ["huge"],
      ["c", "d"],
    ]);
  });
});
