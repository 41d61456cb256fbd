import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow, messagesOf } from "./delivery-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Deleting a subscriber is one call; its topic memberships (and, deleted through v2, its messages)
// follow through a job on the job stream, so they go even when no worker runs at the time of the delete.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
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

    await stack.startWorker();
    await eventually(async () => ((await members("club")).includes("leaver") ? undefined : true));
    expect(await members("club")).toEqual(["stayer"]);
  });

  it("deletes the subscriber's messages of every channel, where the v1 delete keeps them", async () => {
    await stack.startWorker();
    const workflow = await createWorkflow(stack, "Farewell", [
      { template: { type: "in_app", content: "Bye {{name}}" } },
      { template: { type: "email", subject: "Bye", content: "Bye {{name}}" } },
    ]);
    const sent = async (subscriberId: string) => {
      const transactionId = `farewell-${subscriberId}`;
      const reply = await stack.request("POST", "/v1/events/trigger", {
        name: workflow,
        to: { subscriberId, email: `${subscriberId}@example.com` },
        payload: { name: subscriberId },
        transactionId,
      });
      expect(reply.status).toBe(201);
      await eventually(async () => ((await messagesOf(stack, transactionId, "email")).length === 1 ? true : undefined));
      return transactionId;
    };
    const [v2, v1] = [await sent("gone-v2"), await sent("gone-v1")];
    expect((await messagesOf(stack, v2, "in_app")).length).toBe(1);
    await stack.request("POST", "/v1/topics/farewells/subscribers", { subscribers: ["gone-v2", "gone-v1"] });

    expect((await stack.request("DELETE", "/v2/subscribers/gone-v2")).status).toBe(200);
    expect((await stack.request("DELETE", "/v1/subscribers/gone-v1")).status).toBe(200);
    // Memberships go first: once both are gone, both jobs have run.
    await eventually(async () => ((await members("farewells")).length === 0 ? true : undefined));
    await eventually(async () => ((await messagesOf(stack, v2, "in_app")).length === 0 ? true : undefined));
    expect(await messagesOf(stack, v2, "email")).toEqual([]);
    expect((await messagesOf(stack, v1, "in_app")).length).toBe(1);
    expect((await messagesOf(stack, v1, "email")).length).toBe(1);
  });
});
