import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { subscribersV1 } from "@notify/proto";
import { scopeHeaders } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { getSubscriberBatched } from "../src/subscribers-client.js";

type SubscribersClient = Client<typeof subscribersV1.SubscriberService>;

/** A subscribers client that knows "ada" and "bob" and records the batches it is sent. */
function recordingClient() {
  const batches: string[][] = [];
  const client = {
    async batchGetSubscribers(request: { subscriberIds: string[] }) {
      batches.push(request.subscriberIds);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const known = request.subscriberIds.filter((id) => id === "ada" || id === "bob");
      return create(subscribersV1.BatchGetSubscribersResponseSchema, {
        subscribers: known.map((subscriberId) => ({ id: `id-${subscriberId}`, subscriberId })),
      });
    },
  } as unknown as SubscribersClient;
  return { getSubscriber: getSubscriberBatched(client), batches };
}

const environment = (environmentId: string) => ({ headers: scopeHeaders({ organizationId: "org", environmentId }) });

describe("getSubscriberBatched", () => {
  it("reads concurrent subscribers of one environment in one batch, each id once", async () => {
    const { getSubscriber, batches } = recordingClient();
    const call = environment("env-a");
    const replies = await Promise.all([
      getSubscriber("ada", call),
      getSubscriber("ada", call),
      getSubscriber("bob", call),
      getSubscriber("ada", environment("env-b")),
    ]);
    expect(replies.map((subscriber) => subscriber.id)).toEqual(["id-ada", "id-ada", "id-bob", "id-ada"]);
    expect(batches).toEqual([["ada", "bob"], ["ada"]]);
  });

  it("answers an unknown subscriber with the service's own NOT_FOUND, and only that caller", async () => {
    const { getSubscriber } = recordingClient();
    const call = environment("env-a");
    const [known, unknown] = await Promise.allSettled([getSubscriber("ada", call), getSubscriber("ghost", call)]);
    expect(known).toMatchObject({ status: "fulfilled", value: { subscriberId: "ada" } });
    const error = ConnectError.from((unknown as PromiseRejectedResult).reason);
    expect([error.code, error.rawMessage]).toEqual([Code.NotFound, "Subscriber 'ghost' was not found"]);
  });

  it("never lets a read join a batch that was already sent", async () => {
    const { getSubscriber, batches } = recordingClient();
    const call = environment("env-a");
    const first = getSubscriber("ada", call);
    // Until the first batch is sent, however long a loaded machine takes to get there.
    while (batches.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const second = getSubscriber("ada", call);
    await Promise.all([first, second]);
    expect(batches).toEqual([["ada"], ["ada"]]);
  });
});
