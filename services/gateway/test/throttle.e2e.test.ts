import { Novu } from "@novu/api";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
}, 120_000);
afterAll(() => stack?.stop());

/**
 * A workflow that writes an in-app message before its throttle step and one after it: every
 * trigger's run shows it was composed, and only those let through show the second.
 */
async function throttled(workflowId: string, controlValues: Record<string, unknown>) {
  return (
    await novu.workflows.create(
      {
        name: workflowId,
        workflowId,
        active: true,
        steps: [
          { name: "Before", stepId: "before", type: "in_app", controlValues: { body: "before {{ payload.n }}" } },
          { name: "Throttle", stepId: "throttle", type: "throttle", controlValues },
          { name: "After", stepId: "after", type: "in_app", controlValues: { body: "after {{ payload.n }}" } },
        ],
      },
      undefined,
      once,
    )
  ).result;
}

async function trigger(workflowId: string, subscriberId: string, n: number, payload: Record<string, unknown> = {}) {
  const reply = await stack.request<Data<{ status: string }>>("POST", "/v1/events/trigger", { name: workflowId, to: subscriberId, payload: { n, ...payload } });
  expect(reply.body.data?.status, JSON.stringify(reply.body)).toBe("processed");
}

/** The "after" messages of a subscriber once all `runs` runs were composed, by their n. */
async function passedRuns(subscriberId: string, runs: number): Promise<number[]> {
  const contents = await eventually(async () => {
    const reply = await stack.request<Data<{ content: string }[]>>("GET", `/v1/messages?subscriberId=${subscriberId}&channel=in_app&limit=100`);
    const found = reply.body.data.map((message) => message.content);
    return found.filter((content) => content.startsWith("before")).length === runs ? found : undefined;
  }, 20_000);
  return contents
    .filter((content) => content.startsWith("after"))
    .map((content) => Number(content.split(" ")[1]))
    .sort((a, b) => a - b);
}

describe("throttle steps (Novu's v2 throttle)", () => {
  it("are written, read and previewed in Novu's shapes, and refuse controls Novu's documents refuse", async () => {
    const workflow = await throttled("throttle-shapes", { type: "fixed", amount: 2, unit: "hours", threshold: 3, throttleKey: "userId" });
    expect(workflow.steps[1]).toMatchObject({ type: "throttle", stepId: "throttle" });
    expect(workflow.steps[1]!.controls.values).toEqual({ type: "fixed", amount: 2, unit: "hours", threshold: 3, throttleKey: "userId" });
    const preview = await novu.workflows.steps.generatePreview({ workflowId: "throttle-shapes", stepId: "throttle", generatePreviewRequestDto: {} }, once);
    expect(preview.result.result).toMatchObject({ type: "throttle", preview: { type: "fixed", amount: 2, unit: "hours", threshold: 3 } });

    const refused = await failureOf(throttled("throttle-refused", { type: "fixed", amount: 1, unit: "seconds", threshold: 101 }));
    expect(refused.statusCode).toBe(422);
    expect(Object.keys(JSON.parse(refused.body).errors).sort()).toEqual(["steps[1].controlValues.threshold", "steps[1].controlValues.unit"]);
    // Novu's v1 workflows have no throttle step.
    const v1 = await stack.request<{ errors: Record<string, unknown> }>("POST", "/v1/workflows", {
      name: "V1 throttle",
      steps: [{ template: { type: "throttle" } }],
    });
    expect([v1.status, Object.keys(v1.body.errors)]).toEqual([422, ["steps[0].template.type"]]);
  });

  it("let a subscriber's runs through up to the threshold per window, each subscriber apart", async () => {
    await throttled("throttle-fixed", { type: "fixed", amount: 1, unit: "hours", threshold: 2 });
    for (const n of [1, 2, 3, 4]) await trigger("throttle-fixed", "throttle-ada", n);
    await trigger("throttle-fixed", "throttle-bob", 5);
    // Which runs pass is the order workers reach the step in: jobs run side by side, as in Novu.
    expect(await passedRuns("throttle-ada", 4)).toHaveLength(2);
    expect(await passedRuns("throttle-bob", 1)).toEqual([5]);
  }, 60_000);

  it("keep a window per value of the throttle key", async () => {
    await throttled("throttle-keyed", { type: "fixed", amount: 1, unit: "days", throttleKey: "{{ payload.orderId }}" });
    await trigger("throttle-keyed", "throttle-cy", 1, { orderId: "o-1" });
    await trigger("throttle-keyed", "throttle-cy", 2, { orderId: "o-1" });
    await trigger("throttle-keyed", "throttle-cy", 3, { orderId: "o-2" });
    const passed = await passedRuns("throttle-cy", 3);
    expect([passed.filter((n) => n < 3).length, passed.includes(3)]).toEqual([1, true]);
  }, 60_000);

  it("let exactly the threshold through when many triggers arrive at once", async () => {
    await throttled("throttle-burst", { type: "fixed", amount: 5, unit: "minutes" });
    await Promise.all(Array.from({ length: 20 }, (_, index) => trigger("throttle-burst", "throttle-dee", index + 1)));
    expect(await passedRuns("throttle-dee", 20)).toHaveLength(1);
  }, 60_000);
});
