import { createFollowedCache, type Scope } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { createSubscriberDirectory, type SubscribersClient } from "../src/subscribers.js";
import { fakeSubscribers } from "./fixtures.js";

const scope: Scope = { organizationId: "org", environmentId: "env" };
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The stand-in's BatchGetSubscribers, answering only once `release` is called: reads stay under way meanwhile. */
function heldClient(client: SubscribersClient) {
  let waiting: (() => void)[] = [];
  const held: Pick<SubscribersClient, "batchGetSubscribers"> = {
    async batchGetSubscribers(request, options) {
      await new Promise<void>((resolve) => waiting.push(resolve));
      return client.batchGetSubscribers(request, options);
    },
  };
  return {
    client: held as SubscribersClient,
    release() {
      for (const resolve of waiting) resolve();
      waiting = [];
    },
  };
}

describe("createSubscriberDirectory", () => {
  const directoryOf = () => {
    const subscribers = fakeSubscribers();
    const copies = createFollowedCache<ReturnType<typeof subscribers.add>>({ name: "messages_subscribers", max: 100, ttlMs: 60_000 });
    copies.setLive(true);
    const held = heldClient(subscribers.client);
    return { subscribers, copies, release: held.release, directory: createSubscriberDirectory(held.client, copies) };
  };

  it("lets a lookup join the read of the same subscriber under way, unless a change of it was announced since", async () => {
    const { subscribers, copies, release, directory } = directoryOf();
    const ada = subscribers.add(scope, "ada");
    const first = directory.find(scope, "ada");
    await nextTurn();
    const joined = directory.find(scope, "ada");
    release();
    expect(await Promise.all([first, joined])).toEqual([ada, ada]);
    expect(subscribers.calls).toHaveLength(1);

    copies.forget(scope.environmentId, ["ada"]);
    const before = directory.find(scope, "ada");
    await nextTurn();
    copies.forget(scope.environmentId, ["ada"]);
    const after = directory.find(scope, "ada");
    await nextTurn();
    release();
    expect(await Promise.all([before, after])).toEqual([ada, ada]);
    expect(subscribers.calls).toHaveLength(3);
  });
});
