import type { ChangedKeys } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inMemoryClient, newNeighbours, newScope, openDatabase, rpcError, scopeHeaders, type Fixture } from "./fixtures.js";

let fixture: Fixture;
const announced: { environmentId: string; keys: ChangedKeys }[] = [];
const neighbours = newNeighbours();
let client: ReturnType<typeof inMemoryClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  neighbours.integrations.set("slack", "aaaaaaaaaaaaaaaaaaaaaaa2");
  client = inMemoryClient(fixture.pool, neighbours, async (environmentId, keys) => {
    announced.push({ environmentId, keys });
  });
});
afterAll(() => fixture?.close());

describe("change announcements", () => {
  const scope = newScope();
  const call = { headers: scopeHeaders(scope) };
  /** What the call announced, in the caller's environment. */
  async function announcedBy(write: () => Promise<unknown>): Promise<readonly string[][]> {
    announced.length = 0;
    await write().catch(() => undefined);
    expect(announced.every((entry) => entry.environmentId === scope.environmentId)).toBe(true);
    return announced.map((entry) => [...entry.keys]);
  }

  it("announces the subscribers every write may have changed, before it answers", async () => {
    expect(await announcedBy(() => client.upsertSubscriber({ subscriberId: "ada" }, call))).toEqual([["ada"]]);
    expect(await announcedBy(() => client.updateSubscriber({ subscriberId: "ada", fields: { firstName: "Ada" } }, call))).toEqual([["ada"]]);
    expect(
      await announcedBy(() => client.ensureSubscribers({ subscribers: [{ subscriberId: "bob" }, { subscriberId: "cy", fields: { lastName: "C" } }] }, call)),
    ).toEqual([["bob", "cy"]]);
    expect(
      await announcedBy(() =>
        client.updateChannelCredentials({ subscriberId: "ada", providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/a" } }, call),
      ),
    ).toEqual([["ada"]]);
    expect(
      await announcedBy(() =>
        client.applyChannelCredentials(
          { entries: [{ subscriberId: "bob", providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/b" } }] },
          call,
        ),
      ),
    ).toEqual([["bob"]]);
    expect(await announcedBy(() => client.deleteChannelCredentials({ subscriberId: "ada", providerId: "slack" }, call))).toEqual([["ada"]]);
    expect(await announcedBy(() => client.deleteSubscriber({ subscriberId: "ada" }, call))).toEqual([["ada"]]);
  });

  it("announces a failed write too, and no read", async () => {
    expect(await announcedBy(() => rpcError(client.deleteSubscriber({ subscriberId: "ghost" }, call)))).toEqual([["ghost"]]);
    expect(await announcedBy(() => client.batchGetSubscribers({ subscriberIds: ["bob"] }, call))).toEqual([]);
  });
});
