import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/** SDK calls that fail must not be retried for an hour. */
const once = { retries: { strategy: "none" as const } };

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
});
afterAll(async () => {
  await stack?.stop();
});

describe("@novu/api 3.19.1 against the gateway: subscribers", () => {
  it("creates, retrieves, patches, searches and deletes a subscriber with no validation error", async () => {
    const created = await novu.subscribers.create({ subscriberId: "sdk-user", firstName: "Sdk", email: "sdk@example.com", data: { tier: 1 } });
    expect(created.result).toMatchObject({ subscriberId: "sdk-user", firstName: "Sdk", email: "sdk@example.com", deleted: false });
    expect(created.result.id).toMatch(/^[0-9a-f]{24}$/);

    const retrieved = await novu.subscribers.retrieve("sdk-user");
    expect(retrieved.result).toEqual(created.result);

    const patched = await novu.subscribers.patch({ lastName: "Client", data: { tier: 2 } }, "sdk-user");
    expect(patched.result).toMatchObject({ firstName: "Sdk", lastName: "Client", data: { tier: 2 }, v: 1 });

    const found = await novu.subscribers.search({ subscriberId: "sdk-user" });
    expect(found.result.data.map((subscriber) => subscriber.subscriberId)).toEqual(["sdk-user"]);
    expect(found.result.totalCount).toBe(1);

    const removed = await novu.subscribers.delete("sdk-user");
    expect(removed.result).toEqual({ acknowledged: true, status: "deleted" });
  });

  it("surfaces 404 and 409 as the SDK's typed errors", async () => {
    await expect(novu.subscribers.retrieve("nobody")).rejects.toBeInstanceOf(errors.ErrorDto);
    await novu.subscribers.create({ subscriberId: "twice" });
    // The SDK retries 409 for up to an hour by default; a caller asking failIfExists turns that off.
    const conflict = await novu.subscribers
      .create({ subscriberId: "twice" }, true, undefined, { retries: { strategy: "none" } })
      .catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(errors.SubscriberResponseDto);
    expect((conflict as errors.SubscriberResponseDto).data$.subscriberId).toBe("twice");
  });

  it("surfaces 422 as a ValidationErrorDto", async () => {
    const invalid = await novu.subscribers.create({ subscriberId: "bad-mail", email: "not-an-email" }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(errors.ValidationErrorDto);
  });

  it("subscribers.createBulk creates the new and updates the known, in one call of at most 500", async () => {
    await novu.subscribers.create({ subscriberId: "bulk-known", firstName: "Old", email: "old@example.com" });
    const bulk = await novu.subscribers.createBulk({
      subscribers: [
        { subscriberId: "bulk-new", firstName: "New", data: { plan: "pro" } },
        { subscriberId: "bulk-known", firstName: "Renamed" },
      ],
    });
    expect(bulk.result).toEqual({ created: [{ subscriberId: "bulk-new" }], updated: [{ subscriberId: "bulk-known" }], failed: [] });
    expect((await novu.subscribers.retrieve("bulk-new")).result).toMatchObject({ firstName: "New", data: { plan: "pro" } });
    expect((await novu.subscribers.retrieve("bulk-known")).result).toMatchObject({ firstName: "Renamed", email: "old@example.com" });
  });

  it("subscribers.createBulk refuses a bad entry or more than 500 with a ValidationErrorDto, writing none", async () => {
    const invalid = await novu.subscribers
      .createBulk({ subscribers: [{ subscriberId: "bulk-fine" }, { subscriberId: "bulk-bad", email: "not-an-email" }] }, undefined, once)
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(errors.ValidationErrorDto);
    expect(Object.keys((invalid as errors.ValidationErrorDto).errors)).toEqual(["subscribers[1].email"]);
    const tooMany = Array.from({ length: 501 }, (_, index) => ({ subscriberId: `bulk-many-${index}` }));
    expect(await novu.subscribers.createBulk({ subscribers: tooMany }, undefined, once).catch((error: unknown) => error)).toBeInstanceOf(
      errors.ValidationErrorDto,
    );
    for (const subscriberId of ["bulk-fine", "bulk-many-0"]) {
      expect(await novu.subscribers.retrieve(subscriberId, undefined, once).catch((error: unknown) => error)).toBeInstanceOf(errors.ErrorDto);
    }
  });

  it("subscribers.properties.updateOnlineFlag sets isOnline, and going offline records lastOnlineAt", async () => {
    await novu.subscribers.create({ subscriberId: "online-user" });
    const online = await novu.subscribers.properties.updateOnlineFlag({ isOnline: true }, "online-user");
    expect(online.result).toMatchObject({ subscriberId: "online-user", isOnline: true });
    expect(online.result.lastOnlineAt ?? null).toBeNull();
    const before = Date.now();
    const offline = await novu.subscribers.properties.updateOnlineFlag({ isOnline: false }, "online-user");
    expect(offline.result.isOnline).toBe(false);
    expect(Date.parse(offline.result.lastOnlineAt!)).toBeGreaterThanOrEqual(before - 1000);
    const missing = await novu.subscribers.properties.updateOnlineFlag({ isOnline: true }, "nobody", undefined, once).catch((error: unknown) => error);
    expect((missing as errors.ErrorDto).statusCode).toBe(404);
  });
});
