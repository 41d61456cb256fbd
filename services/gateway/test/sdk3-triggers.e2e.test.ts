import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
let workflowId: string;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
  const created = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", {
    name: "SDK3 welcome",
    active: true,
    steps: [{ template: { type: "in_app", content: "Hi {{subscriber.firstName}}, #{{n}}" } }],
  });
  workflowId = created.body.data.triggers[0].identifier;
});
afterAll(async () => {
  await stack?.stop();
});

/** SDK calls that fail must not be retried for an hour. */
const once = { retries: { strategy: "none" as const } };

/** The in-app contents of a subscriber's feed once it holds `count` messages, oldest first. */
async function feedContents(subscriberId: string, count: number): Promise<unknown[]> {
  return eventually(async () => {
    const feed = await novu.subscribers.notifications.feed({ subscriberId });
    return feed.result.data.length === count ? feed.result.data.map((message) => message.content).reverse() : undefined;
  });
}

describe("@novu/api 3.19.1 against the gateway: triggers", () => {
  it("trigger: to a subscriber id, to inline subscribers and a topic, and the messages arrive", async () => {
    await novu.subscribers.create({ subscriberId: "sdk-ada", firstName: "Ada" });
    await novu.topics.create({ key: "sdk-readers", name: "Readers" });
    await novu.topics.subscriptions.create({ subscriptions: ["sdk-ada"] }, "sdk-readers");

    const single = await novu.trigger({ workflowId, to: "sdk-ada", payload: { n: 1 } });
    expect(single.result).toMatchObject({ acknowledged: true, status: "processed" });
    expect(single.result.transactionId).toMatch(/^txn_/);

    const listed = await novu.trigger({
      workflowId,
      to: [
        { subscriberId: "sdk-bob", firstName: "Bob" },
        { type: "Topic", topicKey: "sdk-readers" },
      ],
      payload: { n: 2 },
      transactionId: "sdk-listed",
    });
    expect(listed.result).toEqual({ acknowledged: true, status: "processed", transactionId: "sdk-listed" });

    expect(await feedContents("sdk-ada", 2)).toEqual(["Hi Ada, #1", "Hi Ada, #2"]);
    expect(await feedContents("sdk-bob", 1)).toEqual(["Hi Bob, #2"]);
  });

  it("trigger: an unknown workflow is the SDK's typed validation error", async () => {
    const failure = await novu.trigger({ workflowId: "no-such-workflow", to: "sdk-ada" }, undefined, once).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(errors.ValidationErrorDto);
    expect((failure as errors.ValidationErrorDto).message).toBe("workflow_not_found");
  });

  it("triggerBulk: one result per event, a failed event in its own slot", async () => {
    await novu.subscribers.create({ subscriberId: "sdk-carol", firstName: "Carol" });
    const bulk = await novu.triggerBulk({
      events: [
        { workflowId, to: "sdk-carol", payload: { n: 3 } },
        { workflowId: "no-such-workflow", to: "sdk-carol" },
      ],
    });
    expect(bulk.result).toHaveLength(2);
    expect(bulk.result[0]).toMatchObject({ acknowledged: true, status: "processed" });
    expect(bulk.result[1]).toEqual({ acknowledged: true, status: "error", error: ["workflow_not_found"] });
    expect(await feedContents("sdk-carol", 1)).toEqual(["Hi Carol, #3"]);
  });

  it("triggerBroadcast and cancel: every subscriber of the environment, then cancelled by transaction id", async () => {
    await novu.subscribers.create({ subscriberId: "sdk-dan", firstName: "Dan" });
    const broadcast = await novu.triggerBroadcast({ name: workflowId, payload: { n: 4 } });
    expect(broadcast.result).toMatchObject({ acknowledged: true, status: "processed" });
    expect(await feedContents("sdk-dan", 1)).toEqual(["Hi Dan, #4"]);

    // Delivered already: nothing is left to cancel, as Novu answers it.
    expect((await novu.cancel(broadcast.result.transactionId!)).result).toBe(false);
    // Nothing to cancel is no error, as in Novu.
    expect((await novu.cancel("sdk-no-such-transaction", undefined, once)).result).toBe(false);
  });
});
