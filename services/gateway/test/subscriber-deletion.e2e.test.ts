import { readConfig as readWorkerConfig, start as startWorker, type RunningWorker } from "@notify/worker";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

// Deleting a subscriber is one call; its topic memberships follow through a job on the job
// stream, so they go even when no worker runs at the time of the delete.

let stack: Stack;
let worker: RunningWorker | undefined;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await worker?.stop();
  await stack?.stop();
});

const members = async (topicKey: string) => (await stack.request<Data<{ subscribers: string[] }>>("GET", `/v1/topics/${topicKey}`)).body.data.subscribers;

describe("DELETE /v2/subscribers/{subscriberId}", () => {
  it("ends the subscriber's topic memberships once a worker takes the job, also when none ran at the delete", async () => {
    await stack.request("POST", "/v2/subscribers", { subscriberId: "leaver" });
    await stack.request("POST", "/v2/subscribers", { subscriberId: "stayer" });
    await stack.request("POST", "/v1/topics/club/subscribers", { subscribers: ["leaver", "stayer"] });
    expect((await members("club")).sort()).toEqual(["leaver", "stayer"]);

    expect((await stack.request("DELETE", "/v2/subscribers/leaver")).status).toBe(200);
    expect((await stack.request("GET", "/v2/subscribers/leaver")).status).toBe(404);
    // No worker yet: the membership is still stored, and the job waits on the stream.
    expect((await members("club")).sort()).toEqual(["leaver", "stayer"]);

    worker = await startWorker(readWorkerConfig(stack.workerEnv));
    await eventually(async () => ((await members("club")).includes("leaver") ? undefined : true));
    expect(await members("club")).toEqual(["stayer"]);
  });
});
