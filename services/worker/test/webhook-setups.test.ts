import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrations } from "../src/server.js";
import * as store from "../src/store.js";

let fixture: DatabaseFixture;

beforeAll(async () => {
  fixture = await openTestDatabase([migrations]);
});
afterAll(async () => {
  await fixture?.close();
});

const hour = 3_600_000;

it("a webhook setup claim turns a second one away until it is released or stale", async () => {
  const integrationId = "6b0ad1b7cbed6372096ed619";
  expect(await store.claimWebhookSetup(fixture.pool, integrationId, hour)).toBe(true);
  expect(await store.claimWebhookSetup(fixture.pool, integrationId, hour)).toBe(false);
  expect(await store.claimWebhookSetup(fixture.pool, "6b0ad1b7cbed6372096ed620", hour)).toBe(true);

  await store.releaseWebhookSetup(fixture.pool, integrationId);
  expect(await store.claimWebhookSetup(fixture.pool, integrationId, hour)).toBe(true);
  // A claim older than the given age is a dead worker's, and is taken over.
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await store.claimWebhookSetup(fixture.pool, integrationId, 10)).toBe(true);
  expect(await store.claimWebhookSetup(fixture.pool, integrationId, hour)).toBe(false);
});
