import { objectId } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMPTY_PROFILE } from "../src/mapping.js";
import * as store from "../src/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await openDatabase();
});
afterAll(() => fixture?.close());

const environmentId = objectId();
const organizationId = objectId();

async function insert(subscriberId: string, profile = EMPTY_PROFILE) {
  return store.insertSubscriber(fixture.pool, environmentId, { id: objectId(), organizationId, subscriberId, profile });
}

describe("subscribers store", () => {
  it("inserts once per (environment, subscriberId)", async () => {
    expect(await insert("once")).toBeDefined();
    expect(await insert("once")).toBeUndefined();
    const elsewhere = await store.insertSubscriber(fixture.pool, objectId(), { id: objectId(), organizationId, subscriberId: "once", profile: EMPTY_PROFILE });
    expect(elsewhere).toBeDefined();
  });

  it("updates the profile and bumps the version", async () => {
    const row = (await insert("versioned"))!;
    const updated = await store.updateSubscriberProfile(fixture.pool, environmentId, row.id, { ...EMPTY_PROFILE, first_name: "V", data: { k: [1] } });
    expect(updated).toMatchObject({ first_name: "V", data: { k: [1] }, version: 1 });
    expect(updated.updated_at.getTime()).toBeGreaterThanOrEqual(row.updated_at.getTime());
  });

  it("pages by keyset in both directions and counts up to a cap", async () => {
    const env = objectId();
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const row = await store.insertSubscriber(fixture.pool, env, {
        id: objectId(),
        organizationId,
        subscriberId: `k${index}`,
        profile: { ...EMPTY_PROFILE, first_name: index % 2 ? "Odd" : "Even" },
      });
      ids.push(row!.id);
    }
    const byId = { inclusive: false, byUpdatedAt: false };
    const ascending = await store.selectSubscriberKeysetPage(fixture.pool, env, { ...byId, cursor: ids[1], towardsLower: false, limit: 2, filters: {} });
    expect(ascending.map((row) => row.id)).toEqual(ids.slice(2, 5));
    const descending = await store.selectSubscriberKeysetPage(fixture.pool, env, { ...byId, cursor: ids[3], towardsLower: true, limit: 10, filters: {} });
    expect(descending.map((row) => row.id)).toEqual([ids[2], ids[1], ids[0]]);
    const named = await store.selectSubscriberKeysetPage(fixture.pool, env, {
      ...byId,
      cursor: undefined,
      towardsLower: false,
      limit: 10,
      filters: { name: "od" },
    });
    expect(named.map((row) => row.subscriber_id)).toEqual(["k1", "k3"]);
    expect(await store.countSubscribers(fixture.pool, env, 3)).toBe(3);
    expect(await store.countSubscribers(fixture.pool, env, 100)).toBe(5);
    expect(await store.countSubscribers(fixture.pool, env, 100, { name: "Even" })).toBe(3);
  });

  it("treats LIKE wildcards in a name filter literally", async () => {
    const env = objectId();
    await store.insertSubscriber(fixture.pool, env, { id: objectId(), organizationId, subscriberId: "w", profile: { ...EMPTY_PROFILE, first_name: "Plain" } });
    expect(await store.countSubscribers(fixture.pool, env, 10, { name: "%" })).toBe(0);
  });

  it("deletes and reports the internal id", async () => {
    const row = (await insert("gone"))!;
    expect(await store.deleteSubscriber(fixture.pool, environmentId, "gone")).toBe(row.id);
    expect(await store.deleteSubscriber(fixture.pool, environmentId, "gone")).toBeUndefined();
  });
});
