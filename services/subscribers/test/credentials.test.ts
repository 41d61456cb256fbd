import { Code, ConnectError } from "@connectrpc/connect";
import { fieldErrorsOf } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inMemoryClient, newNeighbours, newScope, openDatabase, scopeHeaders, storedSubscriber, type Fixture } from "./fixtures.js";

let fixture: Fixture;
const neighbours = newNeighbours();
let client: ReturnType<typeof inMemoryClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture.pool, neighbours);
  neighbours.integrations.set("fcm", "aaaaaaaaaaaaaaaaaaaaaaa1");
  neighbours.integrations.set("slack", "aaaaaaaaaaaaaaaaaaaaaaa2");
  neighbours.integrations.set("slack/team-b", "aaaaaaaaaaaaaaaaaaaaaaa3");
});
afterAll(() => fixture?.close());

async function rpcError(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}

describe("channel credentials (in memory)", () => {
  const scope = newScope();
  const call = { headers: scopeHeaders(scope) };

  it("binds to the provider's integration, appends tokens and bumps the version only on change", async () => {
    await client.upsertSubscriber({ subscriberId: "push-user" }, call);
    const first = await client.updateChannelCredentials(
      { subscriberId: "push-user", providerId: "fcm", credentials: { deviceTokens: { tokens: ["a", "b"] } } },
      call,
    );
    expect(first.channels).toMatchObject([{ providerId: "fcm", integrationId: "aaaaaaaaaaaaaaaaaaaaaaa1", credentials: { deviceTokens: ["a", "b"] } }]);
    expect(first.version).toBe(1);
    const second = await client.updateChannelCredentials(
      { subscriberId: "push-user", providerId: "fcm", credentials: { deviceTokens: { tokens: ["b", "c"] } } },
      call,
    );
    expect(second.channels[0]!.credentials!.deviceTokens).toEqual(["a", "b", "c"]);
    const unchanged = await client.updateChannelCredentials(
      { subscriberId: "push-user", providerId: "fcm", credentials: { deviceTokens: { tokens: ["c"] } } },
      call,
    );
    expect(unchanged.version).toBe(second.version);
  });

  it("binds by identifier when one is given", async () => {
    await client.upsertSubscriber({ subscriberId: "chatter" }, call);
    const reply = await client.updateChannelCredentials(
      { subscriberId: "chatter", providerId: "slack", integrationIdentifier: "team-b", credentials: { webhookUrl: "https://hooks.slack.com/b" } },
      call,
    );
    expect(reply.channels).toMatchObject([{ providerId: "slack", integrationId: "aaaaaaaaaaaaaaaaaaaaaaa3", integrationIdentifier: "team-b" }]);
  });

  it("answers NOT_FOUND, FAILED_PRECONDITION and INVALID_ARGUMENT in that order of checks", async () => {
    expect((await rpcError(client.updateChannelCredentials({ subscriberId: "ghost", providerId: "apns", credentials: {} }, call))).code).toBe(Code.NotFound);
    await client.upsertSubscriber({ subscriberId: "no-apns" }, call);
    const missing = await rpcError(client.updateChannelCredentials({ subscriberId: "no-apns", providerId: "apns", credentials: {} }, call));
    expect(missing.code).toBe(Code.FailedPrecondition);
    expect(missing.rawMessage).toBe(`Subscribers environment (${scope.environmentId}) do not have active apns integration.`);
    const invalid = await rpcError(
      client.updateChannelCredentials({ subscriberId: "ghost", providerId: "nope", credentials: { webhookUrl: "not a url" } }, call),
    );
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(invalid) ?? {}).sort()).toEqual(["credentials.webhookUrl", "providerId"]);
  });

  it("applies the channels an upsert gives, in order and in append mode, when creating and when updating", async () => {
    const created = await client.upsertSubscriber(
      {
        subscriberId: "born-with-channels",
        fields: { firstName: "Ada" },
        channels: [
          { providerId: "fcm", credentials: { deviceTokens: { tokens: ["a", "b"] } } },
          { providerId: "slack", integrationIdentifier: "team-b", credentials: { webhookUrl: "https://hooks.slack.com/b" } },
          { providerId: "fcm", credentials: { deviceTokens: { tokens: ["b", "c"] } } },
        ],
      },
      call,
    );
    expect(created.created).toBe(true);
    expect(created.subscriber).toMatchObject({ firstName: "Ada" });
    expect(created.subscriber!.channels).toMatchObject([
      { providerId: "fcm", integrationId: "aaaaaaaaaaaaaaaaaaaaaaa1", credentials: { deviceTokens: ["a", "b", "c"] } },
      { providerId: "slack", integrationId: "aaaaaaaaaaaaaaaaaaaaaaa3", credentials: { webhookUrl: "https://hooks.slack.com/b" } },
    ]);
    const updated = await client.upsertSubscriber(
      { subscriberId: "born-with-channels", channels: [{ providerId: "fcm", credentials: { deviceTokens: { tokens: ["d"] } } }] },
      call,
    );
    expect(updated.created).toBe(false);
    expect(updated.subscriber!.channels[0]!.credentials!.deviceTokens).toEqual(["a", "b", "c", "d"]);
    expect((await storedSubscriber(client, "born-with-channels", call))?.channels).toEqual(updated.subscriber!.channels);
  });

  it("writes nothing when one of an upsert's channels cannot be applied, naming it by index", async () => {
    const missing = await rpcError(
      client.upsertSubscriber(
        {
          subscriberId: "never-born",
          channels: [
            { providerId: "fcm", credentials: {} },
            { providerId: "apns", credentials: {} },
          ],
        },
        call,
      ),
    );
    expect(missing.code).toBe(Code.FailedPrecondition);
    expect(await storedSubscriber(client, "never-born", call)).toBeUndefined();

    await client.upsertSubscriber({ subscriberId: "kept-as-is", fields: { firstName: "Old" } }, call);
    const invalid = await rpcError(
      client.upsertSubscriber(
        {
          subscriberId: "kept-as-is",
          fields: { firstName: "New" },
          channels: [
            { providerId: "slack", credentials: { webhookUrl: "https://h/1" } },
            { providerId: "slack", credentials: { webhookUrl: "not a url" } },
          ],
        },
        call,
      ),
    );
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(invalid) ?? {})).toEqual(["channels[1].credentials.webhookUrl"]);
    expect(await storedSubscriber(client, "kept-as-is", call)).toMatchObject({ firstName: "Old", channels: [] });

    const tooMany = await rpcError(
      client.upsertSubscriber({ subscriberId: "kept-as-is", channels: Array.from({ length: 101 }, () => ({ providerId: "fcm" })) }, call),
    );
    expect(tooMany.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(tooMany)).toHaveProperty("channels");
  });

  it("deletes a provider's channels", async () => {
    await client.upsertSubscriber({ subscriberId: "two-channels" }, call);
    await client.updateChannelCredentials({ subscriberId: "two-channels", providerId: "fcm", credentials: { deviceTokens: { tokens: ["x"] } } }, call);
    await client.updateChannelCredentials({ subscriberId: "two-channels", providerId: "slack", credentials: { webhookUrl: "https://h/1" } }, call);
    await client.deleteChannelCredentials({ subscriberId: "two-channels", providerId: "fcm" }, call);
    const reply = (await storedSubscriber(client, "two-channels", call))!;
    expect(reply.channels.map((channel) => channel.providerId)).toEqual(["slack"]);
    expect((await rpcError(client.deleteChannelCredentials({ subscriberId: "ghost", providerId: "fcm" }, call))).code).toBe(Code.NotFound);
  });

  it("applies a batch in order, skipping entries that cannot be applied", async () => {
    await client.ensureSubscribers({ subscribers: [{ subscriberId: "r1" }, { subscriberId: "r2" }] }, call);
    const reply = await client.applyChannelCredentials(
      {
        entries: [
          { subscriberId: "r1", providerId: "fcm", credentials: { deviceTokens: { tokens: ["1"] } } },
          { subscriberId: "r1", providerId: "apns", credentials: { deviceTokens: { tokens: ["x"] } } },
          { subscriberId: "r2", providerId: "slack", credentials: { webhookUrl: "ftp://bad" } },
          { subscriberId: "nobody", providerId: "fcm", credentials: { deviceTokens: { tokens: ["y"] } } },
          { subscriberId: "r1", providerId: "fcm", credentials: { deviceTokens: { tokens: ["2", "1"] } } },
          { subscriberId: "r2", providerId: "slack", credentials: { webhookUrl: "https://hooks/r2" } },
        ],
      },
      call,
    );
    expect(reply.outcomes.map((outcome) => outcome.applied)).toEqual([true, false, false, false, true, true]);
    expect(reply.outcomes[1]!.reason).toContain("apns");
    expect(reply.outcomes[2]!.reason).toContain("credentials.webhookUrl");
    expect(reply.outcomes[3]!.reason).toContain("nobody");
    const byId = new Map(reply.subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
    expect([...byId.keys()].sort()).toEqual(["r1", "r2"]);
    expect(byId.get("r1")!.channels[0]!.credentials!.deviceTokens).toEqual(["1", "2"]);
    expect(byId.get("r2")!.channels[0]!.credentials!.webhookUrl).toBe("https://hooks/r2");
    // EnsureSubscribers and BatchGetSubscribers show the channels too.
    const ensured = await client.ensureSubscribers({ subscribers: [{ subscriberId: "r1" }] }, call);
    expect(ensured.subscribers[0]!.channels[0]!.credentials!.deviceTokens).toEqual(["1", "2"]);
    const fetched = await client.batchGetSubscribers({ subscriberIds: ["r2"] }, call);
    expect(fetched.subscribers[0]!.channels).toHaveLength(1);
  });

  it("loses no token under concurrent appends to one subscriber", async () => {
    await client.upsertSubscriber({ subscriberId: "busy" }, call);
    const tokens = Array.from({ length: 40 }, (_, index) => `token-${index}`);
    await Promise.all(
      tokens.map((token) =>
        client.updateChannelCredentials({ subscriberId: "busy", providerId: "fcm", credentials: { deviceTokens: { tokens: [token] } } }, call),
      ),
    );
    const reply = (await storedSubscriber(client, "busy", call))!;
    expect([...reply.channels[0]!.credentials!.deviceTokens].sort()).toEqual([...tokens].sort());
  });

  it("keeps environments apart", async () => {
    const other = { headers: scopeHeaders(newScope()) };
    expect((await rpcError(client.updateChannelCredentials({ subscriberId: "push-user", providerId: "fcm", credentials: {} }, other))).code).toBe(
      Code.NotFound,
    );
    const batch = await client.applyChannelCredentials({ entries: [{ subscriberId: "push-user", providerId: "fcm", credentials: {} }] }, other);
    expect(batch.outcomes[0]!.applied).toBe(false);
  });
});
