import { Code } from "@connectrpc/connect";
import { commonV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callAs, inMemoryClient, newScope, openDatabase, rpcError, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let client: ReturnType<typeof inMemoryClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture.pool);
});
afterAll(() => fixture?.close());

const webhook = (identifier: string, subscriberId: string, contextKeys: string[] = []) => ({
  identifier,
  subscriberId,
  integrationIdentifier: "hooks",
  providerId: "discord",
  channel: "chat",
  contextKeys,
  type: "webhook",
  endpoint: { url: `https://hooks.example/${identifier}` },
});

/** A fresh environment with subscribers ada and bob and four endpoints, made in this order. */
async function setUp() {
  const call = callAs(newScope());
  for (const subscriberId of ["ada", "bob"]) await client.upsertSubscriber({ subscriberId }, call);
  for (const endpoint of [webhook("e1", "ada"), webhook("e2", "bob"), webhook("e3", "ada", ["team:b", "app:x"]), webhook("e4", "ada")]) {
    await client.createChannelEndpoint(endpoint, call);
  }
  return call;
}

const identifiers = (reply: { endpoints: { identifier: string }[] }) => reply.endpoints.map((endpoint) => endpoint.identifier);

describe("channel endpoints (in memory)", () => {
  it("pages by creation or by last update, either way, from a cursor included or not", async () => {
    const call = await setUp();
    const first = await client.listChannelEndpoints({ limit: 2 }, call);
    expect(identifiers(first)).toEqual(["e4", "e3"]);
    expect(first).toMatchObject({ totalCount: 4, totalCountCapped: false });
    const second = await client.listChannelEndpoints({ limit: 2, after: first.next! }, call);
    expect(identifiers(second)).toEqual(["e2", "e1"]);
    expect(second.next).toBeUndefined();
    expect(identifiers(await client.listChannelEndpoints({ limit: 2, before: second.previous! }, call))).toEqual(["e4", "e3"]);
    expect(identifiers(await client.listChannelEndpoints({ limit: 2, after: first.next!, includeCursor: true }, call))).toEqual(["e3", "e2"]);

    // The oldest endpoint changed last comes last in update order.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await client.updateChannelEndpoint({ identifier: "e1", endpoint: { url: "https://hooks.example/new" } }, call);
    const ascending = { direction: commonV1.SortDirection.ASC, byUpdatedAt: true };
    const updated = await client.listChannelEndpoints({ limit: 3, ...ascending }, call);
    expect(identifiers(updated)).toEqual(["e2", "e3", "e4"]);
    expect(identifiers(await client.listChannelEndpoints({ limit: 3, ...ascending, after: updated.next! }, call))).toEqual(["e1"]);
  });

  it("filters by subscriber and by exactly the contexts, and refuses both cursors", async () => {
    const call = await setUp();
    expect(identifiers(await client.listChannelEndpoints({ subscriberId: "ada" }, call))).toEqual(["e4", "e3", "e1"]);
    expect(identifiers(await client.listChannelEndpoints({ contextKeys: ["app:x", "team:b"], filterContextKeys: true }, call))).toEqual(["e3"]);
    expect(identifiers(await client.listChannelEndpoints({ contextKeys: [], filterContextKeys: true }, call))).toEqual(["e4", "e2", "e1"]);
    expect((await rpcError(client.listChannelEndpoints({ after: "a", before: "b" }, call))).code).toBe(Code.FailedPrecondition);
    expect((await rpcError(client.listChannelEndpoints({ limit: 101 }, call))).code).toBe(Code.InvalidArgument);
  });

  it("answers a page of subscribers' endpoints of exactly the run's contexts, oldest first", async () => {
    const call = await setUp();
    const [ada, bob] = await Promise.all(
      ["ada", "bob"].map(async (subscriberId) => (await client.batchGetSubscribers({ subscriberIds: [subscriberId] }, call)).subscribers[0]!.id),
    );
    const plain = await client.listRecipientEndpoints({ internalSubscriberIds: [ada!, bob!], channel: "chat", contextKeys: [] }, call);
    expect(plain.endpoints.map((endpoint) => [endpoint.identifier, endpoint.subscriberId, endpoint.internalSubscriberId])).toEqual([
      ["e1", "ada", ada],
      ["e2", "bob", bob],
      ["e4", "ada", ada],
    ]);
    // Keys are matched as the set they name, in any order.
    const scoped = await client.listRecipientEndpoints({ internalSubscriberIds: [ada!], channel: "chat", contextKeys: ["team:b", "app:x"] }, call);
    expect(identifiers(scoped)).toEqual(["e3"]);
    expect(identifiers(await client.listRecipientEndpoints({ internalSubscriberIds: [ada!], channel: "push", contextKeys: [] }, call))).toEqual([]);
    // Another environment's subscribers and endpoints are out of reach.
    expect(identifiers(await client.listRecipientEndpoints({ internalSubscriberIds: [ada!], channel: "chat", contextKeys: [] }, callAs(newScope())))).toEqual(
      [],
    );
    const tooMany = Array.from({ length: 1001 }, (_, index) => index.toString(16).padStart(24, "0"));
    expect((await rpcError(client.listRecipientEndpoints({ internalSubscriberIds: tooMany, channel: "chat", contextKeys: [] }, call))).code).toBe(
      Code.InvalidArgument,
    );
  });

  it("refuses an unknown subscriber, a taken identifier and unknown identifiers, and goes with its subscriber", async () => {
    const call = await setUp();
    expect((await rpcError(client.createChannelEndpoint(webhook("e9", "nobody"), call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.createChannelEndpoint(webhook("e1", "bob"), call))).code).toBe(Code.AlreadyExists);
    const generated = await client.createChannelEndpoint(webhook("", "bob"), call);
    expect(generated.identifier).toMatch(/^chendp_[A-Za-z0-9_-]{12}$/);
    // Each call is made only when awaited: one made earlier could fail before anything handles it.
    for (const refused of [
      () => client.getChannelEndpoint({ identifier: "missing" }, call),
      () => client.updateChannelEndpoint({ identifier: "missing", endpoint: {} }, call),
      () => client.deleteChannelEndpoint({ identifier: "missing" }, call),
    ]) {
      expect((await rpcError(refused())).code).toBe(Code.NotFound);
    }
    await client.deleteSubscriber({ subscriberId: "bob" }, call);
    expect(identifiers(await client.listChannelEndpoints({}, call))).toEqual(["e4", "e3", "e1"]);
  });
});
