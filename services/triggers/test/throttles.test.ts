import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { triggersV1 } from "@notify/proto";
import { objectId } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passThrottles } from "../src/triggers/throttles.js";
import { openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await openDatabase();
});
afterAll(() => fixture?.close());

const MINUTE = 60_000;
const entry = (key: string, transactionId: string, threshold: number, windowEnds: Date) =>
  create(triggersV1.ThrottleEntrySchema, { key, transactionId, threshold, windowEnds: timestampFromDate(windowEnds) });

describe("passThrottles", () => {
  it("lets a key's runs through up to the threshold per window, in order, each key apart", async () => {
    const environmentId = objectId();
    const ends = new Date(Date.now() + MINUTE);
    const passed = await passThrottles(fixture.pool, environmentId, [
      entry("ada", "t1", 2, ends),
      entry("bob", "t1", 2, ends),
      entry("ada", "t2", 2, ends),
      entry("ada", "t3", 2, ends),
    ]);
    expect(passed).toEqual([true, true, true, false]);
    // A later batch finds the window full; another environment's key of the same name is its own.
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t4", 2, ends), entry("bob", "t4", 2, ends)])).toEqual([false, true]);
    expect(await passThrottles(fixture.pool, objectId(), [entry("ada", "t4", 2, ends)])).toEqual([true]);
  });

  it("lets a redelivered run through again without counting it twice", async () => {
    const environmentId = objectId();
    const ends = new Date(Date.now() + MINUTE);
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t1", 2, ends)])).toEqual([true]);
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t1", 2, ends), entry("ada", "t1", 2, ends)])).toEqual([true, true]);
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t2", 2, ends), entry("ada", "t3", 2, ends)])).toEqual([true, false]);
  });

  it("opens a new window with the first run after the last one ended, until that run's end", async () => {
    const environmentId = objectId();
    const now = Date.now();
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t1", 1, new Date(now + MINUTE))], new Date(now))).toEqual([true]);
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t2", 1, new Date(now + 2 * MINUTE))], new Date(now + 30_000))).toEqual([false]);
    const later = now + MINUTE + 1;
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t3", 1, new Date(later + MINUTE))], new Date(later))).toEqual([true]);
    expect(await passThrottles(fixture.pool, environmentId, [entry("ada", "t4", 1, new Date(later + 2 * MINUTE))], new Date(later + MINUTE - 1))).toEqual([
      false,
    ]);
  });

  it("counts runs sent at once by many workers exactly", async () => {
    const environmentId = objectId();
    const ends = new Date(Date.now() + MINUTE);
    // Twenty batches at once, each with the same two keys in opposite orders (no deadlock: keys are locked sorted).
    const batches = Array.from({ length: 20 }, (_, index) => {
      const pair = [entry("ada", `a${index}`, 3, ends), entry("bob", `b${index}`, 5, ends)];
      return passThrottles(fixture.pool, environmentId, index % 2 === 0 ? pair : pair.reverse());
    });
    const outcomes = (await Promise.all(batches)).flat();
    expect(outcomes.filter(Boolean)).toHaveLength(8);
  });
});
