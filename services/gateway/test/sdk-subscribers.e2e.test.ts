import { Novu } from "novu-api-v1";
import * as errors from "novu-api-v1/models/errors/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
});
afterAll(async () => {
  await stack?.stop();
});

describe("@novu/api 1.7.1 against the gateway: subscribers", () => {
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
});
