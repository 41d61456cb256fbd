import { Code, ConnectError } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inMemoryClient, newNeighbours, newScope, openDatabase, rpcError, scopeHeaders, storedSubscriber, type Fixture } from "./fixtures.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await openDatabase();
});
afterAll(() => fixture?.close());

describe("DeleteSubscriber", () => {
  const scope = newScope();
  const call = { headers: scopeHeaders(scope) };

  it("publishes the job that makes other services follow, naming the deleted subscriber", async () => {
    const published: subscribersV1.SubscriberDeletedJob[] = [];
    const client = inMemoryClient(fixture.pool, newNeighbours(), undefined, async (job) => {
      published.push(job);
    });
    const { subscriber } = await client.upsertSubscriber({ subscriberId: "leaving" }, call);
    const { id } = await client.deleteSubscriber({ subscriberId: "leaving" }, call);
    expect(id).toBe(subscriber!.id);
    expect(published.map(({ organizationId, environmentId, id, subscriberId }) => ({ organizationId, environmentId, id, subscriberId }))).toEqual([
      { ...scope, id, subscriberId: "leaving" },
    ]);
    expect(await storedSubscriber(client, "leaving", call)).toBeUndefined();
  });

  it("deletes nothing when the job stream does not take the job", async () => {
    const client = inMemoryClient(fixture.pool, newNeighbours(), undefined, async () => {
      throw new ConnectError("the job stream is not reachable; nothing was deleted", Code.Unavailable);
    });
    await client.upsertSubscriber({ subscriberId: "staying" }, call);
    expect((await rpcError(client.deleteSubscriber({ subscriberId: "staying" }, call))).code).toBe(Code.Unavailable);
    expect((await storedSubscriber(client, "staying", call))?.subscriberId).toBe("staying");
  });

  it("publishes nothing for an unknown subscriber", async () => {
    const published: subscribersV1.SubscriberDeletedJob[] = [];
    const client = inMemoryClient(fixture.pool, newNeighbours(), undefined, async (job) => {
      published.push(job);
    });
    expect((await rpcError(client.deleteSubscriber({ subscriberId: "ghost" }, call))).code).toBe(Code.NotFound);
    expect(published).toEqual([]);
  });
});
