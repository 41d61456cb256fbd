import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack();
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
});
afterAll(async () => {
  await stack?.stop();
});

/** SDK calls that fail must not be retried for an hour. */
const once = { retries: { strategy: "none" as const } };

describe("@novu/api 3.19.1 against the gateway: integrations", () => {
  it("creates, sets as primary, lists active, updates and deletes with no validation error", async () => {
    const first = await novu.integrations.create({
      providerId: "sendgrid",
      channel: "email",
      active: true,
      credentials: { apiKey: "SG.sdk", from: "sdk@example.com" },
      conditions: [],
    });
    expect(first.result).toMatchObject({ providerId: "sendgrid", channel: "email", active: true, primary: true, deleted: false });
    const second = await novu.integrations.create({ providerId: "mailgun", channel: "email", active: true, name: "Backup", identifier: "backup" });
    expect(second.result.primary).toBe(false);

    const promoted = await novu.integrations.setAsPrimary(second.result.id!);
    expect(promoted.result).toMatchObject({ id: second.result.id, primary: true, active: true, identifier: "backup", name: "Backup" });
    expect(promoted.result.environmentId).toMatch(/^[0-9a-f]{24}$/);
    expect(promoted.result.organizationId).toMatch(/^[0-9a-f]{24}$/);

    const active = await novu.integrations.listActive();
    const emails = active.result.filter((integration) => integration.channel === "email");
    expect(emails.filter((integration) => integration.primary).map((integration) => integration.id)).toEqual([second.result.id]);
    expect(active.result.some((integration) => integration.providerId === "novu" && integration.channel === "in_app")).toBe(true);
    expect(emails.find((integration) => integration.id === first.result.id)?.credentials).toMatchObject({ apiKey: "SG.sdk" });

    const updated = await novu.integrations.update({ name: "Primary mail", active: true }, second.result.id!);
    expect(updated.result.name).toBe("Primary mail");
    const listed = await novu.integrations.list();
    expect(listed.result.map((integration) => integration.id)).toContain(first.result.id);
    const remaining = await novu.integrations.delete(first.result.id!);
    expect(remaining.result.map((integration) => integration.id)).not.toContain(first.result.id);
  });

  it("calls that need the provider to reach back into the service are refused with 400 for a known integration, 404 for an unknown one", async () => {
    const slack = await novu.integrations.create({ providerId: "slack", channel: "chat", active: true, identifier: "sdk-slack" });
    const refusals: [string, () => Promise<unknown>][] = [
      [
        "generateChatOAuthUrl",
        () => novu.integrations.generateChatOAuthUrl({ integrationIdentifier: "sdk-slack", subscriberId: "sdk-chatter" }, undefined, once),
      ],
      ["generateConnectOAuthUrl", () => novu.integrations.generateConnectOAuthUrl({ integrationIdentifier: "sdk-slack" }, undefined, once)],
      [
        "generateLinkUserOAuthUrl",
        () => novu.integrations.generateLinkUserOAuthUrl({ integrationIdentifier: "sdk-slack", subscriberId: "sdk-chatter" }, undefined, once),
      ],
      [
        "linkChannelEndpoint",
        () => novu.integrations.linkChannelEndpoint({ integrationIdentifier: "sdk-slack", subscriberId: "sdk-chatter" }, undefined, once),
      ],
      ["createMobileLink", () => novu.integrations.createMobileLink({ subscriberId: "sdk-chatter" }, "sdk-slack", undefined, once)],
      ["configureIntegrationWebhook", () => novu.integrations.integrationsControllerConfigureIntegrationWebhook("sdk-slack", undefined, once)],
      ["autoConfigureIntegration", () => novu.integrations.integrationsControllerAutoConfigureIntegration(slack.result.id!, undefined, once)],
    ];
    for (const [name, call] of refusals) {
      const refused = await call().catch((error: unknown) => error);
      expect(refused, name).toBeInstanceOf(errors.ErrorDto);
      expect((refused as errors.ErrorDto).statusCode, name).toBe(400);
      expect((refused as errors.ErrorDto).message, name).toMatch(/not supported for provider: slack$/);
    }
    const unknown = await novu.integrations.generateChatOAuthUrl({ integrationIdentifier: "sdk-nothing" }, undefined, once).catch((error: unknown) => error);
    expect((unknown as errors.ErrorDto).statusCode).toBe(404);
    const malformed = await novu.integrations
      .linkChannelEndpoint({ integrationIdentifier: "sdk-slack", subscriberId: "" }, undefined, once)
      .catch((error: unknown) => error);
    expect(malformed).toBeInstanceOf(errors.ValidationErrorDto);
  });

  it("set-primary on an unknown or in-app integration fails as an error, not a result", async () => {
    await expect(novu.integrations.setAsPrimary("0".repeat(24), undefined, once)).rejects.toBeInstanceOf(Error);
    const inApp = (await novu.integrations.list()).result.find((integration) => integration.channel === "in_app")!;
    await expect(novu.integrations.setAsPrimary(inApp.id!, undefined, once)).rejects.toBeInstanceOf(errors.ErrorDto);
  });
});

describe("@novu/api 3.19.1 against the gateway: topics", () => {
  it("lists topics by cursor with topics.list, filtered by key and name", async () => {
    const key = await stack.createKey("SDK topic listing");
    const sdk = new Novu({ secretKey: key, serverURL: stack.url });
    for (const topicKey of ["sdk-list-1", "sdk-list-2", "sdk-list-3", "sdk-list-4", "sdk-list-5"]) {
      await sdk.topics.create({ key: topicKey, name: `${topicKey}-name` });
    }
    const first = await sdk.topics.list({ limit: 3 });
    expect(first.result.data).toHaveLength(3);
    expect(first.result).toMatchObject({ previous: null, totalCount: 5, totalCountCapped: false });
    expect(first.result.next).toEqual(expect.any(String));
    const second = await sdk.topics.list({ limit: 3, after: first.result.next! });
    expect(second.result.data).toHaveLength(2);
    expect(second.result.next).toBeNull();
    expect(second.result.previous).toEqual(expect.any(String));
    expect(new Set([...first.result.data, ...second.result.data].map((topic) => topic.id)).size).toBe(5);

    expect((await sdk.topics.list({ key: "sdk-list-2" })).result.data.map((topic) => topic.key)).toEqual(["sdk-list-2"]);
    expect((await sdk.topics.list({ name: "sdk-list-3-name" })).result.data.map((topic) => topic.name)).toEqual(["sdk-list-3-name"]);
    const ordered = await sdk.topics.list({ orderBy: "key", orderDirection: "ASC" });
    expect(ordered.result.data.map((topic) => topic.key)).toEqual(["sdk-list-1", "sdk-list-2", "sdk-list-3", "sdk-list-4", "sdk-list-5"]);
    const [one] = (await sdk.topics.list({ limit: 1 })).result.data;
    expect(Object.keys(one!).sort()).toEqual(["createdAt", "id", "key", "name", "updatedAt"]);

    const tooMany = await sdk.topics.list({ limit: 101 }, once).catch((error: unknown) => error);
    expect(tooMany).toBeInstanceOf(errors.ValidationErrorDto);
  });

  it("checks a topic subscriber with all six fields, and 404 for a non-member", async () => {
    const subscriber = await novu.subscribers.create({ subscriberId: "sdk-member" });
    await novu.subscribers.create({ subscriberId: "sdk-outsider" });
    await novu.topics.create({ key: "sdk-topic", name: "SDK topic" });
    await novu.topics.subscriptions.create({ subscriptions: ["sdk-member"] }, "sdk-topic");

    const record = await novu.topics.subscribers.retrieve("sdk-member", "sdk-topic");
    const topic = await novu.topics.get("sdk-topic");
    expect(record.result).toEqual({
      organizationId: expect.stringMatching(/^[0-9a-f]{24}$/),
      environmentId: subscriber.result.environmentId,
      subscriberId: subscriber.result.id,
      topicId: topic.result.id,
      topicKey: "sdk-topic",
      externalSubscriberId: "sdk-member",
    });
    await expect(novu.topics.subscribers.retrieve("sdk-outsider", "sdk-topic", undefined, once)).rejects.toBeInstanceOf(errors.ErrorDto);
  });

  it("creates, gets, updates and deletes topics and lists, creates and deletes subscriptions with no validation error", async () => {
    await novu.subscribers.create({ subscriberId: "sdk-a", firstName: "A" });
    await novu.subscribers.create({ subscriberId: "sdk-b" });
    const created = await novu.topics.create({ key: "sdk-crud" });
    expect(created.result).toMatchObject({ key: "sdk-crud" });
    const conflict = await novu.topics.create({ key: "sdk-crud" }, true, undefined, once).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(errors.TopicResponseDto);

    // A topic made by a subscription and named by none has no name (v1's add-subscribers names it Autogenerated-<key>).
    await novu.topics.subscriptions.create({ subscriptions: ["sdk-a"] }, "sdk-made");
    expect((await novu.topics.get("sdk-made")).result).toMatchObject({ key: "sdk-made" });
    expect((await novu.topics.get("sdk-made")).result.name).toBeUndefined();
    const subscriptions = await novu.topics.subscriptions.create({ subscriptions: ["sdk-a", "sdk-b", "sdk-nobody"] }, "sdk-crud");
    expect(subscriptions.result.meta).toEqual({ totalCount: 3, successful: 2, failed: 1 });
    expect(subscriptions.result.data.map((item) => item.subscriber?.subscriberId)).toEqual(["sdk-a", "sdk-b"]);
    expect(subscriptions.result.errors?.[0]).toMatchObject({ subscriberId: "sdk-nobody", code: "SUBSCRIBER_NOT_FOUND" });

    const listed = await novu.topics.subscriptions.list({ topicKey: "sdk-crud", limit: 10 });
    expect(listed.result.data.map((item) => item.subscriber.subscriberId).sort()).toEqual(["sdk-a", "sdk-b"]);
    expect(listed.result.data[0]?.topic.key).toBe("sdk-crud");
    expect(listed.result.data.map((item) => item.identifier).sort()).toEqual(["tk_sdk-crud:si_sdk-a", "tk_sdk-crud:si_sdk-b"]);

    const one = await novu.topics.subscriptions.getSubscription("sdk-crud", "tk_sdk-crud:si_sdk-a");
    expect(one.result).toEqual({
      id: listed.result.data.find((item) => item.subscriber.subscriberId === "sdk-a")!.id,
      identifier: "tk_sdk-crud:si_sdk-a",
      contextKeys: [],
    });
    for (const unknown of ["tk_sdk-crud:si_sdk-nobody", "tk_other:si_sdk-a", "sdk-a"]) {
      const missing = await novu.topics.subscriptions.getSubscription("sdk-crud", unknown, undefined, once).catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(errors.ErrorDto);
      expect((missing as errors.ErrorDto).statusCode).toBe(404);
    }

    const updated = await novu.topics.update({ name: "Renamed by SDK" }, "sdk-crud");
    expect(updated.result.name).toBe("Renamed by SDK");
    expect((await novu.topics.get("sdk-crud")).result.name).toBe("Renamed by SDK");

    const removed = await novu.topics.subscriptions.delete({ subscriptions: ["sdk-a"] }, "sdk-crud");
    expect(removed.result.meta).toEqual({ totalCount: 1, successful: 1, failed: 0 });
    expect((await novu.topics.delete("sdk-crud")).result).toEqual({ acknowledged: true });
  });

  it("makes, reads, renames and deletes named subscriptions, one per subscriber and topic", async () => {
    for (const subscriberId of ["named-a", "named-b", "named-c"]) await novu.subscribers.create({ subscriberId });
    await novu.topics.create({ key: "named" });
    const created = await novu.topics.subscriptions.create(
      { subscriptions: [{ identifier: "a-phone", subscriberId: "named-a", name: "A's phone" }, "named-b"], name: "Everyone" },
      "named",
    );
    expect(created.result.meta).toEqual({ totalCount: 2, successful: 2, failed: 0 });
    expect(created.result.data.map((item) => item.identifier).sort()).toEqual(["a-phone", "tk_named:si_named-b"]);

    expect((await novu.topics.subscriptions.getSubscription("named", "a-phone")).result).toMatchObject({ identifier: "a-phone", name: "A's phone" });
    // The request's name is the topic's (as @novu/api documents it); a subscription from a bare id has none.
    expect((await novu.topics.get("named")).result.name).toBe("Everyone");
    expect((await novu.topics.subscriptions.getSubscription("named", "tk_named:si_named-b")).result.name).toBeUndefined();
    const derived = await novu.topics.subscriptions.getSubscription("named", "tk_named:si_named-a", undefined, once).catch((error: unknown) => error);
    expect((derived as errors.ErrorDto).statusCode).toBe(404);
    const listed = await novu.topics.subscriptions.list({ topicKey: "named" });
    expect(listed.result.data.map((item) => item.identifier).sort()).toEqual(["a-phone", "tk_named:si_named-b"]);

    const conflicts = await novu.topics.subscriptions.create(
      { subscriptions: [{ identifier: "a-tablet", subscriberId: "named-a" }, { identifier: "a-phone", subscriberId: "named-c" }, "named-b"] },
      "named",
    );
    expect(conflicts.result.meta).toEqual({ totalCount: 3, successful: 1, failed: 2 });
    expect(conflicts.result.data.map((item) => item.identifier)).toEqual(["tk_named:si_named-b"]);
    expect(conflicts.result.errors?.map((error) => `${error.subscriberId} ${error.code}`).sort()).toEqual([
      "named-a SUBSCRIPTION_CONFLICT",
      "named-c SUBSCRIPTION_CONFLICT",
    ]);
    const othersName = await novu.topics.subscriptions
      .create({ subscriptions: [{ identifier: "tk_named:si_named-b", subscriberId: "named-c" }] }, "named", undefined, once)
      .catch((error: unknown) => error);
    expect(othersName).toBeInstanceOf(errors.ErrorDto);
    expect((othersName as errors.ErrorDto).statusCode).toBe(400);

    const renamed = await novu.topics.subscriptions.update({
      topicKey: "named",
      identifier: "a-phone",
      updateTopicSubscriptionRequestDto: { name: "A's tablet" },
    });
    expect(renamed.result).toMatchObject({ identifier: "a-phone", name: "A's tablet", topic: { key: "named" }, subscriber: { subscriberId: "named-a" } });
    expect((await novu.topics.subscriptions.getSubscription("named", "a-phone")).result.name).toBe("A's tablet");
    const unknown = await novu.topics.subscriptions
      .update({ topicKey: "named", identifier: "nobody", updateTopicSubscriptionRequestDto: { name: "x" } }, once)
      .catch((error: unknown) => error);
    expect((unknown as errors.ErrorDto).statusCode).toBe(404);
    // A workflow that does not exist makes no preference (as in Novu: it is only logged there).
    const filtered = await novu.topics.subscriptions.update(
      { topicKey: "named", identifier: "a-phone", updateTopicSubscriptionRequestDto: { preferences: ["some-workflow"] } },
      once,
    );
    expect(filtered.result).toMatchObject({ identifier: "a-phone", name: "A's tablet" });
    expect(filtered.result.preferences).toBeUndefined();

    const removed = await novu.topics.subscriptions.delete({ subscriptions: [{ identifier: "a-phone" }, { identifier: "a-nothing" }] }, "named");
    expect(removed.result.meta).toEqual({ totalCount: 2, successful: 1, failed: 1 });
    expect(removed.result.data.map((item) => item.subscriber?.subscriberId)).toEqual(["named-a"]);
    expect(removed.result.errors?.[0]).toMatchObject({ subscriberId: "a-nothing", code: "SUBSCRIPTION_NOT_FOUND" });
    const left = await novu.topics.subscriptions.list({ topicKey: "named" });
    expect(left.result.data.map((item) => item.subscriber.subscriberId)).toEqual(["named-b"]);
  });

  it("subscribers.topics.list pages one subscriber's subscriptions across topics", async () => {
    await novu.subscribers.create({ subscriberId: "sdk-reader", firstName: "R" });
    for (const key of ["sdk-news-1", "sdk-news-2", "sdk-news-3"]) await novu.topics.subscriptions.create({ subscriptions: ["sdk-reader"] }, key);
    const first = await novu.subscribers.topics.list({ subscriberId: "sdk-reader", limit: 2 });
    expect(first.result).toMatchObject({ totalCount: 3, totalCountCapped: false, previous: null });
    expect(first.result.data).toHaveLength(2);
    const second = await novu.subscribers.topics.list({ subscriberId: "sdk-reader", limit: 2, after: first.result.next! });
    const all = [...first.result.data, ...second.result.data];
    expect(all.map((item) => item.topic.key).sort()).toEqual(["sdk-news-1", "sdk-news-2", "sdk-news-3"]);
    expect(all[0]).toMatchObject({ identifier: `tk_${all[0]!.topic.key}:si_sdk-reader`, subscriber: { subscriberId: "sdk-reader", firstName: "R" } });
    const missing = await novu.subscribers.topics.list({ subscriberId: "sdk-nobody" }, once).catch((error: unknown) => error);
    expect((missing as errors.ErrorDto).statusCode).toBe(404);
    const tooMany = await novu.subscribers.topics.list({ subscriberId: "sdk-reader", limit: 101 }, once).catch((error: unknown) => error);
    expect(tooMany).toBeInstanceOf(errors.ValidationErrorDto);
  });
});

describe("@novu/api 3.19.1 against the gateway: environments", () => {
  it("environments.list lists the organization's environments, the key's among them", async () => {
    await stack.createKey("Production");
    const listed = await novu.environments.list();
    // Other tests of this file make environments of their own.
    expect(listed.result.map((environment) => environment.name)).toEqual(expect.arrayContaining(["Development", "Production"]));
    const development = listed.result.find((environment) => environment.name === "Development")!;
    expect(development.id).toMatch(/^[0-9a-f]{24}$/);
    expect(listed.result.find((environment) => environment.name === "Production")!.parentId).toBe(development.id);
  });
});
