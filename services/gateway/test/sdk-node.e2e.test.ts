import { ChannelTypeEnum, Novu } from "@novu/node";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSubscriber, newMessage, seeder, type Seeder } from "./messages-fixtures.js";
import { startStack, type Json, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
let seed: Seeder;
let workflowId: string;
let workflowIdentifier: string;

/** @novu/node answers the raw axios response: its body is Novu's `{data}` envelope (or a page). */
const dataOf = (response: { data: unknown }): Json => (response.data as { data: Json }).data;

/** The HTTP status of a failed @novu/node call (an axios error carries the response). */
async function statusOf(call: Promise<unknown>): Promise<number | undefined> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  return (error as { response?: { status?: number } } | undefined)?.response?.status;
}

beforeAll(async () => {
  stack = await startStack();
  novu = new Novu(stack.key, { backendUrl: stack.url });
  seed = seeder(stack, (await createSubscriber(stack, "node-scope")).scope);
  const created = dataOf(
    await novu.notificationTemplates.create({
      name: "Node welcome",
      notificationGroupId: dataOf(await novu.notificationGroups.get())[0]._id,
      active: true,
      steps: [{ template: { type: "in_app", content: "Hi {{subscriber.firstName}}, #{{n}}" } }, { template: { type: "push", title: "T", content: "P" } }],
    } as never),
  );
  workflowId = String(String(created._id));
  workflowIdentifier = String(created.triggers[0]!.identifier);
});
afterAll(async () => {
  seed?.close();
  await stack?.stop();
});

describe("@novu/node 2.6.6 against the gateway: subscribers", () => {
  it("identify, get, list, update, bulkCreate, updateOnlineStatus and delete", async () => {
    const identified = dataOf(await novu.subscribers.identify("node-ada", { firstName: "Ada", email: "ada@example.com" }));
    expect(identified).toMatchObject({ subscriberId: "node-ada", firstName: "Ada", email: "ada@example.com" });
    expect(dataOf(await novu.subscribers.get("node-ada"))._id).toBe(identified._id);
    const updated = dataOf(await novu.subscribers.update("node-ada", { lastName: "Lovelace" }));
    expect(updated).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });

    const bulk = dataOf(await novu.subscribers.bulkCreate([{ subscriberId: "node-bob", firstName: "Bob" }, { subscriberId: "node-ada" }]));
    expect(bulk).toEqual({ created: [{ subscriberId: "node-bob" }], updated: [{ subscriberId: "node-ada" }], failed: [] });

    const page = (await novu.subscribers.list(0, 100)).data;
    expect(page).toMatchObject({ page: 0, pageSize: 100, hasMore: false });
    expect(page.data.map((subscriber: Json) => subscriber.subscriberId)).toEqual(expect.arrayContaining(["node-ada", "node-bob"]));

    expect(dataOf(await novu.subscribers.updateOnlineStatus("node-ada", true)).isOnline).toBe(true);
    const offline = dataOf(await novu.subscribers.updateOnlineStatus("node-ada", false));
    expect(offline.isOnline).toBe(false);
    expect(offline.lastOnlineAt).toEqual(expect.any(String));

    expect(dataOf(await novu.subscribers.delete("node-bob"))).toEqual({ acknowledged: true, status: "deleted" });
    expect(await statusOf(novu.subscribers.get("node-bob"))).toBe(404);
  });

  it("setCredentials, unsetCredentials and deleteCredentials", async () => {
    await novu.integrations.create("fcm", { channel: ChannelTypeEnum.PUSH, active: true, credentials: { serviceAccount: "{}" } });
    await novu.subscribers.identify("node-push", {});
    const set = dataOf(await novu.subscribers.setCredentials("node-push", "fcm", { deviceTokens: ["t1", "t2"] }));
    expect(set.channels).toMatchObject([{ providerId: "fcm", credentials: { deviceTokens: ["t1", "t2"] } }]);
    const unset = dataOf(await novu.subscribers.unsetCredentials("node-push", "fcm"));
    expect(unset.channels[0].credentials.deviceTokens).toEqual([]);
    expect((await novu.subscribers.deleteCredentials("node-push", "fcm")).status).toBe(204);
    expect(dataOf(await novu.subscribers.get("node-push")).channels).toEqual([]);
  });

  it("getPreference, getGlobalPreference, getPreferenceByLevel, updatePreference and updateGlobalPreference", async () => {
    await novu.subscribers.identify("node-prefs", {});
    // A critical workflow is not listed, as Novu's v1 preferences leave critical ones out.
    await novu.notificationTemplates.create({
      name: "Node security",
      notificationGroupId: dataOf(await novu.notificationGroups.get())[0]._id,
      active: true,
      critical: true,
      steps: [{ template: { type: "in_app", content: "Signed in" } }],
    } as never);
    const listed = dataOf(await novu.subscribers.getPreference("node-prefs"));
    expect(listed).toEqual([
      {
        template: {
          _id: workflowId,
          name: "Node welcome",
          critical: false,
          tags: [],
          triggers: [{ type: "event", identifier: workflowIdentifier, variables: [] }],
        },
        preference: {
          enabled: true,
          channels: { email: true, sms: true, in_app: true, chat: true, push: true },
          // Every channel, those without a step too, as Novu's includeInactiveChannels (the default) lists them.
          overrides: ["in_app", "email", "sms", "chat", "push"].map((channel) => ({ channel, source: "template" })),
        },
      },
    ]);
    const activeOnly = dataOf(await novu.subscribers.getPreference("node-prefs", { includeInactiveChannels: false }));
    expect(activeOnly[0].preference.channels).toEqual({ in_app: true, push: true });
    expect(dataOf(await novu.subscribers.getPreferenceByLevel("node-prefs", "template" as never))).toEqual(listed);

    const workflow = dataOf(await novu.subscribers.updatePreference("node-prefs", workflowId, { channel: { type: ChannelTypeEnum.PUSH, enabled: false } }));
    expect(workflow.preference.channels).toMatchObject({ in_app: true, push: false });
    expect(workflow.preference.overrides).toContainEqual({ channel: "push", source: "subscriber" });

    // SMS, which no workflow sends, shows as the subscriber chose it, not as on.
    const global = dataOf(
      await novu.subscribers.updateGlobalPreference("node-prefs", {
        preferences: [
          { type: ChannelTypeEnum.IN_APP, enabled: false },
          { type: ChannelTypeEnum.SMS, enabled: false },
        ],
      }),
    );
    expect(global).toEqual({ preference: { enabled: true, channels: { email: true, sms: false, in_app: false, chat: true, push: true } } });
    expect(dataOf(await novu.subscribers.getGlobalPreference("node-prefs"))).toEqual([
      { preference: { enabled: true, channels: { email: true, sms: false, in_app: false, chat: true, push: true } } },
    ]);
    // The SDK's getGlobalPreference sends no options: the same route asked for the active channels only.
    const activeGlobal = await stack.request("GET", "/v1/subscribers/node-prefs/preferences/global?includeInactiveChannels=false");
    expect(activeGlobal.body).toEqual({ data: [{ preference: { enabled: true, channels: { in_app: false, push: true } } }] });
    const [afterGlobal] = dataOf(await novu.subscribers.getPreference("node-prefs"));
    expect(afterGlobal.preference.channels).toEqual({ email: true, sms: false, in_app: false, chat: true, push: false });

    expect(await statusOf(novu.subscribers.updatePreference("node-prefs", workflowId, { enabled: false }))).toBe(422);
    expect(await statusOf(novu.subscribers.updateGlobalPreference("node-prefs", { preferences: [{ type: "fax" as never, enabled: true }] }))).toBe(422);
    expect(await statusOf(novu.subscribers.getPreferenceByLevel("node-prefs", "team" as never))).toBe(422);
    expect(await statusOf(novu.subscribers.getPreference("nobody"))).toBe(404);
  });

  it("getNotificationsFeed, getUnseenCount, markMessageSeen, markMessageRead, markMessageAs, markAllMessagesAs and markMessageActionSeen", async () => {
    const ada = await createSubscriber(stack, "node-feed");
    const [first, second, third] = (
      await seed.create([newMessage(ada, { payload: { team: "red", n: 1 } }), newMessage(ada, { payload: { team: "blue", n: 2 } }), newMessage(ada)])
    ).messages.map((message) => message.id);

    const feed = (await novu.subscribers.getNotificationsFeed("node-feed", { limit: 10 })).data;
    expect(feed).toMatchObject({ page: 0, totalCount: 3, hasMore: false });
    const red = (await novu.subscribers.getNotificationsFeed("node-feed", { payload: { team: "red" } })).data;
    expect(red.data.map((message: Json) => message._id)).toEqual([first]);
    expect(dataOf(await novu.subscribers.getUnseenCount("node-feed", false))).toEqual({ count: 3 });

    const seen = dataOf(await novu.subscribers.markMessageSeen("node-feed", first!));
    expect(seen.map((message: Json) => [message._id, message.seen, message.read])).toEqual([[first, true, false]]);
    const read = dataOf(await novu.subscribers.markMessageRead("node-feed", second!));
    expect(read.map((message: Json) => [message.read, message.seen])).toEqual([[true, true]]);
    const unread = dataOf(await novu.subscribers.markMessageAs("node-feed", second!, { read: false, seen: true }));
    expect(unread.map((message: Json) => [message.read, message.seen])).toEqual([[false, true]]);
    expect(dataOf(await novu.subscribers.getUnseenCount("node-feed", false))).toEqual({ count: 1 });

    expect(dataOf(await novu.subscribers.markAllMessagesAs("node-feed", "read" as never))).toBe(3);
    const acted = dataOf(
      await novu.subscribers.markMessageActionSeen("node-feed", third!, "primary" as never, { status: "done" as never, payload: { answer: 42 } }),
    );
    expect(acted.cta.action).toMatchObject({ status: "done", result: { type: "primary", payload: { answer: 42 } } });

    expect(await statusOf(novu.subscribers.markMessageAs("node-feed", first!, {} as never))).toBe(422);
    expect(await statusOf(novu.subscribers.getNotificationsFeed("node-feed", { payload: "not base64 json" as never }))).toBe(422);
  });
});

describe("@novu/node 2.6.6 against the gateway: events", () => {
  it("trigger, bulkTrigger, broadcast and cancel", async () => {
    await novu.subscribers.identify("node-event", { firstName: "Eve" });
    const single = dataOf(await novu.trigger(workflowIdentifier, { to: "node-event", payload: { n: 1 } }));
    expect(single).toMatchObject({ acknowledged: true, status: "processed", transactionId: expect.any(String) });
    const bulk = dataOf(
      await novu.bulkTrigger([
        { name: workflowIdentifier, to: "node-event", payload: { n: 2 } },
        { name: "no-such-workflow", to: "node-event", payload: {} },
      ]),
    );
    expect(bulk.map((outcome: Json) => outcome.status)).toEqual(["processed", "error"]);
    const broadcast = dataOf(await novu.broadcast(workflowIdentifier, { payload: { n: 3 } }));
    expect(broadcast).toMatchObject({ acknowledged: true, status: "processed" });
    await eventually(async () => {
      const feed = (await novu.subscribers.getNotificationsFeed("node-event", {})).data;
      return feed.data.length === 3 ? feed : undefined;
    });
    // Delivered already: nothing is left to cancel, as Novu answers it.
    expect(dataOf(await novu.events.cancel(String(broadcast.transactionId)))).toBe(false);
  });
});

describe("@novu/node 2.6.6 against the gateway: topics", () => {
  it("create, get, rename, list, addSubscribers, getSubscriber, checkSubscriber, removeSubscribers and delete", async () => {
    await novu.subscribers.identify("node-member", {});
    expect(dataOf(await novu.topics.create({ key: "node-topic", name: "Node topic" }))).toEqual({ _id: expect.any(String), key: "node-topic" });
    expect(dataOf(await novu.topics.rename("node-topic", "Renamed"))).toMatchObject({ key: "node-topic", name: "Renamed" });
    const added = dataOf(await novu.topics.addSubscribers("node-topic", { subscribers: ["node-member", "node-nobody"] }));
    expect(added).toEqual({ succeeded: ["node-member"], failed: { notFound: ["node-nobody"] } });
    expect(dataOf(await novu.topics.get("node-topic"))).toMatchObject({ key: "node-topic", subscribers: ["node-member"] });
    const page = (await novu.topics.list({ page: 0, pageSize: 10, key: "node-topic" })).data;
    expect(page.data.map((topic: Json) => topic.key)).toEqual(["node-topic"]);
    expect(dataOf(await novu.topics.getSubscriber("node-topic", "node-member"))).toMatchObject({ topicKey: "node-topic", externalSubscriberId: "node-member" });
    expect(dataOf(await novu.topics.checkSubscriber("node-topic", "node-member"))).toMatchObject({ externalSubscriberId: "node-member" });
    expect((await novu.topics.removeSubscribers("node-topic", { subscribers: ["node-member"] })).status).toBe(204);
    expect(await statusOf(novu.topics.checkSubscriber("node-topic", "node-member"))).toBe(404);
    expect((await novu.topics.delete("node-topic")).status).toBe(204);
  });
});

describe("@novu/node 2.6.6 against the gateway: integrations", () => {
  it("create, getAll, getActive, update, setIntegrationAsPrimary and delete", async () => {
    const created = dataOf(await novu.integrations.create("sendgrid", { channel: ChannelTypeEnum.EMAIL, active: true, credentials: { apiKey: "SG.node" } }));
    expect(created).toMatchObject({ providerId: "sendgrid", channel: "email", active: true });
    const second = dataOf(await novu.integrations.create("mailgun", { channel: ChannelTypeEnum.EMAIL, active: true, credentials: { apiKey: "key" } }));
    expect(dataOf(await novu.integrations.getAll()).map((integration: Json) => integration._id)).toEqual(expect.arrayContaining([created._id, second._id]));
    expect(dataOf(await novu.integrations.getActive()).map((integration: Json) => integration._id)).toContain(String(second._id));
    expect(dataOf(await novu.integrations.update(String(second._id), { name: "Backup", credentials: { apiKey: "key2" } } as never)).name).toBe("Backup");
    expect(dataOf(await novu.integrations.setIntegrationAsPrimary(String(second._id)))).toMatchObject({ _id: second._id, primary: true });
    expect(dataOf(await novu.integrations.delete(String(created._id))).map((integration: Json) => integration._id)).not.toContain(String(created._id));
  });

  it("getWebhookProviderStatus: whether notify reads the events of an integration's provider, by provider or integration id", async () => {
    const postmark = dataOf(await novu.integrations.create("postmark", { channel: ChannelTypeEnum.EMAIL, active: false, credentials: { apiKey: "pm" } }));
    expect(dataOf(await novu.integrations.getWebhookProviderStatus("postmark"))).toBe(true);
    expect(dataOf(await novu.integrations.getWebhookProviderStatus(String(postmark._id)))).toBe(true);
    const smtp = dataOf(
      await novu.integrations.create("nodemailer", { channel: ChannelTypeEnum.EMAIL, active: false, credentials: { host: "smtp.example.com" } }),
    );
    expect(dataOf(await novu.integrations.getWebhookProviderStatus(String(smtp._id)))).toBe(false);
    const chat = dataOf(await novu.integrations.create("discord", { channel: ChannelTypeEnum.CHAT, active: true, credentials: { apiKey: "d" } }));
    const refused = await novu.integrations
      .getWebhookProviderStatus(String(chat._id))
      .catch((error: { response: { status: number; data: Json } }) => error.response);
    expect(refused).toMatchObject({ status: 400, data: { message: "Webhook for discord-chat is not supported yet" } });
    expect(await statusOf(novu.integrations.getWebhookProviderStatus("0123456789abcdef01234567"))).toBe(404);
    // A provider none of whose integrations has credentials is not found, as Novu finds it.
    expect(await statusOf(novu.integrations.getWebhookProviderStatus("resend"))).toBe(404);
  });
});

describe("@novu/node 2.6.6 against the gateway: organizations", () => {
  it("getCurrent, list, rename and updateBranding: the caller's organization, its branding replaced whole", async () => {
    const current = dataOf(await novu.organizations.getCurrent()) as unknown as { _id: string; name: string; branding?: unknown };
    expect(current).toMatchObject({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), name: expect.any(String) });
    expect(current.branding).toBeUndefined();
    expect(dataOf(await novu.organizations.list())).toEqual([dataOf(await novu.organizations.getCurrent())]);

    expect(dataOf(await novu.organizations.rename({ name: "Acme Notifications" }))).toEqual({ name: "Acme Notifications" });
    const branding = { color: "#f47373", logo: "https://cdn.example.com/logo.png", fontFamily: "Inter" };
    expect(dataOf(await novu.organizations.updateBranding(branding as never))).toEqual(branding);
    expect(dataOf(await novu.organizations.getCurrent())).toMatchObject({ _id: current._id, name: "Acme Notifications", branding });
    // A second update replaces the branding, as Novu's does.
    await novu.organizations.updateBranding({ color: "#000000" } as never);
    expect(dataOf(await novu.organizations.getCurrent())).toMatchObject({ branding: { color: "#000000" } });
    expect((dataOf(await novu.organizations.getCurrent()) as unknown as { branding: object }).branding).toEqual({ color: "#000000" });

    for (const refused of [{ color: "red" }, { logo: "https://cdn.example.com/logo.txt" }, { logo: "javascript:alert(1)//x.png" }]) {
      expect(await statusOf(novu.organizations.updateBranding(refused as never))).toBe(422);
    }
    expect(await statusOf(novu.organizations.rename({ name: "" }))).toBe(422);
  });
});

describe("@novu/node 2.6.6 against the gateway: environments", () => {
  it("getApiKeys answers the caller's environment's active keys, another environment's none", async () => {
    const keys = dataOf(await novu.environments.getApiKeys()) as unknown as { key: string; _userId: string }[];
    expect(keys).toContainEqual({ key: stack.key, _userId: expect.any(String) });
    const created = await stack.request<{ data: { apiKeys: { key: string }[] } }>("POST", "/v1/environments", { name: "Keys elsewhere", color: "#111111" });
    const other = created.body.data.apiKeys[0]!.key;
    expect(keys.map((one) => one.key)).not.toContain(other);
    const theirs = dataOf(await new Novu(other, { backendUrl: stack.url }).environments.getApiKeys()) as unknown as { key: string }[];
    expect(theirs.map((one) => one.key)).toEqual([other]);
  });
});

describe("@novu/node 2.6.6 against the gateway: messages", () => {
  it("list, deleteById and deleteByTransactionId", async () => {
    const ada = await createSubscriber(stack, "node-messages");
    const [kept, removed] = (await seed.create([newMessage(ada, { transactionId: "node-txn-1" }), newMessage(ada, { transactionId: "node-txn-2" })])).messages;
    const page = (await novu.messages.list({ subscriberId: "node-messages", limit: 10 })).data;
    expect(page.data.map((message: Json) => message._id).sort()).toEqual([kept!.id, removed!.id].sort());
    // The SDK sends transactionId[]=…: read as a list, as Novu's server reads it.
    const byTransaction = (await novu.messages.list({ transactionIds: ["node-txn-2"], limit: 10 })).data;
    expect(byTransaction.data.map((message: Json) => message._id)).toEqual([removed!.id]);
    expect(dataOf(await novu.messages.deleteById(removed!.id))).toEqual({ acknowledged: true, status: "deleted" });
    expect((await novu.messages.deleteByTransactionId("node-txn-1")).status).toBe(204);
    expect((await novu.messages.list({ subscriberId: "node-messages" })).data.data).toEqual([]);
  });
});

describe("@novu/node 2.6.6 against the gateway: workflow overrides", () => {
  it("create, get by id and by workflow and tenant, update both ways, list and delete", async () => {
    const tenantId = String(dataOf(await novu.tenants.create("node-override-tenant", { name: "Override tenant" }))._id);
    const created = dataOf(await novu.workflowOverrides.create({ workflowId, tenantId, active: true, preferenceSettings: { email: false } as never }));
    // The channels not given are on, as Novu stores them.
    expect(created).toMatchObject({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      _workflowId: workflowId,
      _tenantId: tenantId,
      _environmentId: expect.any(String),
      _organizationId: expect.any(String),
      active: true,
      preferenceSettings: { email: false, sms: true, in_app: true, chat: true, push: true },
      deleted: false,
    });
    const id = String(created._id);
    expect(await statusOf(novu.workflowOverrides.create({ workflowId, tenantId }))).toBe(409);
    expect(dataOf(await novu.workflowOverrides.getOneById(id))).toEqual(created);
    // The workflow by its trigger identifier and the tenant by its identifier name the same override.
    expect(dataOf(await novu.workflowOverrides.getOneByTenantIdandWorkflowId(workflowIdentifier, "node-override-tenant"))).toEqual(created);

    // The channels given go over those stored; active stays unless given.
    expect(dataOf(await novu.workflowOverrides.updateOneById(id, { preferenceSettings: { sms: false } as never }))).toMatchObject({
      active: true,
      preferenceSettings: { email: false, sms: false, in_app: true, chat: true, push: true },
    });
    expect(dataOf(await novu.workflowOverrides.updateOneByTenantIdandWorkflowId(workflowId, tenantId, { active: false }))).toMatchObject({
      _id: id,
      active: false,
      preferenceSettings: { email: false, sms: false },
    });
    // Its active flag decides whether the workflow runs for the tenant, as Novu's does; other triggers are not concerned.
    const statusOfTrigger = async (name: string, tenant?: string) =>
      dataOf(await novu.trigger(name, { to: "node-override-subscriber", payload: { n: 1 }, ...(tenant ? { tenant } : {}) })).status;
    expect(await statusOfTrigger(workflowIdentifier, "node-override-tenant")).toBe("trigger_not_active");
    expect(await statusOfTrigger(workflowIdentifier)).toBe("processed");
    const paused = await stack.request<Json>("POST", "/v1/workflows", {
      name: "Node paused",
      active: false,
      steps: [{ template: { type: "in_app", content: "Hi" } }],
    });
    const pausedIdentifier = String(paused.body.data.triggers[0].identifier);
    expect(await statusOfTrigger(pausedIdentifier, "node-override-tenant")).toBe("trigger_not_active");
    dataOf(await novu.workflowOverrides.create({ workflowId: String(paused.body.data._id), tenantId, active: true }));
    expect(await statusOfTrigger(pausedIdentifier, "node-override-tenant")).toBe("processed");
    expect(await statusOfTrigger(pausedIdentifier)).toBe("trigger_not_active");
    const page = (await novu.workflowOverrides.list()).data as Json;
    expect(page).toMatchObject({ page: 0, pageSize: 10, hasMore: false });
    expect(page.data.map((override: Json) => override._workflowId)).toEqual([workflowId, String(paused.body.data._id)]);

    // Bad input is a 422 and changes nothing; what does not exist is a 404 in Novu's words.
    expect(await statusOf(novu.workflowOverrides.create({ workflowId } as never))).toBe(422);
    expect(await statusOf(novu.workflowOverrides.updateOneById(id, { preferenceSettings: { email: "no" } as never }))).toBe(422);
    expect(await statusOf(novu.workflowOverrides.updateOneById(id, { active: "yes" } as never))).toBe(422);
    const missingWorkflow = await stack.request("POST", "/v1/workflow-overrides", { workflowId: "no-such-workflow", tenantId });
    expect([missingWorkflow.status, missingWorkflow.body.message]).toEqual([404, "Workflow with id no-such-workflow is not found"]);
    const missingTenant = await stack.request("PUT", `/v1/workflow-overrides/workflows/${workflowId}/tenants/no-such-tenant`, { active: true });
    expect([missingTenant.status, missingTenant.body.message]).toEqual([404, "Tenant with id no-such-tenant is not found"]);
    const missingOverride = await stack.request("GET", `/v1/workflow-overrides/workflows/${workflowId}/tenants/no-such-tenant`);
    expect([missingOverride.status, missingOverride.body.message]).toEqual([
      404,
      `Workflow Override with workflow id ${workflowId}, tenant id no-such-tenant not found`,
    ]);
    expect(await statusOf(novu.workflowOverrides.getOneById("0123456789abcdef01234567"))).toBe(404);
    expect(await statusOf(novu.workflowOverrides.getOneById("not-an-id"))).toBe(404);
    // Another environment sees none of it, and cannot name this one's workflow or tenant.
    const elsewhere = { authorization: `ApiKey ${await stack.createKey("Overrides elsewhere")}` };
    expect((await stack.request("GET", `/v1/workflow-overrides/${id}`, undefined, elsewhere)).status).toBe(404);
    expect((await stack.request("PUT", `/v1/workflow-overrides/${id}`, { active: true }, elsewhere)).status).toBe(404);
    expect((await stack.request("DELETE", `/v1/workflow-overrides/${id}`, undefined, elsewhere)).status).toBe(404);
    expect((await stack.request("POST", "/v1/workflow-overrides", { workflowId, tenantId }, elsewhere)).status).toBe(404);
    expect((await stack.request<Json>("GET", "/v1/workflow-overrides", undefined, elsewhere)).body.data).toEqual([]);
    expect(dataOf(await novu.workflowOverrides.getOneById(id))).toMatchObject({ active: false, preferenceSettings: { email: false, sms: false } });

    expect((await novu.workflowOverrides.delete(id)).data).toEqual({ data: true });
    expect(await statusOf(novu.workflowOverrides.getOneById(id))).toBe(404);
    expect(await statusOf(novu.workflowOverrides.delete(id))).toBe(404);

    // A tenant's overrides go with it.
    dataOf(await novu.workflowOverrides.create({ workflowId, tenantId }));
    expect((await novu.tenants.delete("node-override-tenant")).status).toBe(204);
    expect(((await novu.workflowOverrides.list()).data as Json).data).toEqual([]);
  });
});

describe("@novu/node 2.6.6 against the gateway: feeds, tenants and notification groups", () => {
  it("feeds: create, get and delete", async () => {
    const created = dataOf(await novu.feeds.create("node-feed"));
    expect(created).toMatchObject({ name: "node-feed", identifier: "node-feed" });
    expect(dataOf(await novu.feeds.get()).map((feed: Json) => feed._id)).toContain(String(created._id));
    expect(dataOf(await novu.feeds.delete(String(created._id))).map((feed: Json) => feed._id)).not.toContain(String(created._id));
  });

  it("tenants: create, get, list, update and delete", async () => {
    expect(dataOf(await novu.tenants.create("node-tenant", { name: "Node tenant", data: { plan: "pro" } }))).toMatchObject({
      identifier: "node-tenant",
      name: "Node tenant",
    });
    expect(dataOf(await novu.tenants.get("node-tenant"))).toMatchObject({ data: { plan: "pro" } });
    expect((await novu.tenants.list({ page: 0, limit: 10 })).data.data.map((tenant: Json) => tenant.identifier)).toContain("node-tenant");
    expect(dataOf(await novu.tenants.update("node-tenant", { name: "Renamed" }))).toMatchObject({ name: "Renamed" });
    expect((await novu.tenants.delete("node-tenant")).status).toBe(204);
    expect(await statusOf(novu.tenants.get("node-tenant"))).toBe(404);
  });

  it("notificationGroups: create, get, getOne, update and delete", async () => {
    const created = dataOf(await novu.notificationGroups.create("Node group"));
    expect(created).toMatchObject({ name: "Node group", _environmentId: expect.any(String) });
    expect(dataOf(await novu.notificationGroups.get()).map((group: Json) => group.name)).toEqual(expect.arrayContaining(["General", "Node group"]));
    expect(dataOf(await novu.notificationGroups.getOne(String(created._id)))).toEqual(created);
    expect(dataOf(await novu.notificationGroups.update(String(created._id), { name: "Renamed group" }))).toMatchObject({
      _id: created._id,
      name: "Renamed group",
    });
    expect(dataOf(await novu.notificationGroups.delete(String(created._id)))).toEqual({ acknowledged: true, status: "deleted" });
    expect(await statusOf(novu.notificationGroups.getOne(String(created._id)))).toBe(404);
    // A group its workflows still name stays.
    const general = dataOf(await novu.notificationGroups.get()).find((group: Json) => String(group.name) === "General");
    expect(await statusOf(novu.notificationGroups.delete(String(general!._id)))).toBe(400);
  });
});

describe("@novu/node 2.6.6 against the gateway: notification templates", () => {
  it("getAll, getOne, update, updateStatus and delete", async () => {
    const page = (await novu.notificationTemplates.getAll(0, 10)).data;
    expect(page.data.map((workflow: Json) => workflow._id)).toContain(workflowId);
    expect(dataOf(await novu.notificationTemplates.getOne(workflowId))).toMatchObject({ _id: workflowId, name: "Node welcome" });
    expect(dataOf(await novu.notificationTemplates.update(workflowId, { name: "Node renamed" } as never))).toMatchObject({ name: "Node renamed" });
    expect(dataOf(await novu.notificationTemplates.updateStatus(workflowId, false))).toMatchObject({ active: false });
    const other = dataOf(
      await novu.notificationTemplates.create({
        name: "Node other",
        notificationGroupId: dataOf(await novu.notificationGroups.get())[0]._id,
        steps: [{ template: { type: "in_app", content: "x" } }],
      } as never),
    );
    expect(dataOf(await novu.notificationTemplates.delete(String(other._id)))).toBe(true);
    expect(await statusOf(novu.notificationTemplates.getOne(String(other._id)))).toBe(404);
  });
});
