import { Novu as NovuApi } from "@novu/api";
import type { Novu } from "@novu/js";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { openInbox, type InboxOptions } from "./inbox-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Novu's topic subscriptions with preferences and contexts, end to end: through @novu/api (its own
// response validation on every call) and the Inbox client @novu/js, then triggers to the topic,
// whose fan-out reaches exactly the subscriptions of the trigger's contexts whose preferences let
// the workflow through.

let stack: Stack;
let api: NovuApi;
const clients: Novu[] = [];
/** Trigger identifiers of the workflows, and their internal ids. */
let alerts: string;
let digestWorkflow: string;
let critical: string;
const ids = new Map<string, string>();

/** SDK calls that fail must not be retried for an hour. */
const once = { retries: { strategy: "none" as const } };

beforeAll(async () => {
  stack = await startStack();
  api = new NovuApi({ secretKey: stack.key, serverURL: stack.url });
  alerts = await createWorkflow(stack, "Project alerts", [{ template: { type: "in_app", content: "alert {{tier}}" } }]);
  digestWorkflow = await createWorkflow(stack, "Project digest", [{ template: { type: "in_app", content: "digest {{tier}}" } }]);
  critical = await createWorkflow(stack, "Security notices", [{ template: { type: "in_app", content: "security" } }]);
  for (const identifier of [alerts, digestWorkflow, critical]) {
    const reply = await stack.request<Data<{ _id: string }>>("GET", `/v1/workflows/${identifier}`);
    ids.set(identifier, reply.body.data._id);
  }
  await stack.request("PUT", `/v1/workflows/${ids.get(alerts)}`, { tags: ["alerts"] });
  for (const subscriberId of ["ann", "bob", "cy", "dee", "eve", "witness"]) {
    await api.subscribers.create({ subscriberId, data: { plan: subscriberId === "cy" ? "pro" : "free" } }, undefined, undefined, once);
  }
});

afterAll(async () => {
  for (const novu of clients) novu.socket.disconnect();
  await stack?.stop();
});

/**
 * Triggers a workflow to some topics (and to a witness named on its own, whose message shows the job
 * ran) and expects exactly `expected` to get its message: once they have, and still a while later.
 */
async function expectReached(
  workflowId: string,
  topicKeys: string | string[],
  payload: Record<string, unknown>,
  expected: string[],
  context?: Record<string, string>,
): Promise<void> {
  const to = [...[topicKeys].flat().map((topicKey) => ({ type: "Topic" as const, topicKey })), "witness"];
  const { result } = await api.trigger({ workflowId, to, payload, ...(context ? { context } : {}) }, undefined, once);
  const recipients = async () => {
    const reply = await stack.request<Data<{ subscriber: { subscriberId: string } }[]>>(
      "GET",
      `/v1/messages?transactionId=${result.transactionId}&channel=in_app&limit=100`,
    );
    return reply.body.data.map((message) => message.subscriber.subscriberId).sort();
  };
  const all = [...expected, "witness"].sort();
  const sameAsExpected = (found: string[]) => found.length === all.length && found.every((id, index) => id === all[index]);
  await eventually(async () => sameAsExpected(await recipients()) || undefined).catch(async () => {
    expect(await recipients()).toEqual(all);
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await recipients()).toEqual(all);
}

describe("topic subscriptions through @novu/api: preferences and contexts decide who a topic's trigger reaches", () => {
  it("stores preferences by workflow, scopes by context, and fans out accordingly", async () => {
    const gold = { "==": [{ var: "payload.tier" }, "gold"] };
    const annMade = await api.topics.subscriptions.create(
      { subscriptions: ["ann"], preferences: [{ workflowId: digestWorkflow, enabled: false }] },
      "project",
      undefined,
      once,
    );
    expect(annMade.result.data[0]).toMatchObject({
      identifier: "tk_project:si_ann",
      contextKeys: [],
      preferences: [
        { subscriptionId: "tk_project:si_ann", enabled: false, workflow: { id: ids.get(digestWorkflow), identifier: digestWorkflow, name: "Project digest" } },
      ],
    });
    // A condition over the payload; a group filter by tag; a context of its own.
    await api.topics.subscriptions.create(
      { subscriptions: ["cy"], preferences: [{ filter: { tags: ["alerts"] }, condition: gold }] },
      "project",
      undefined,
      once,
    );
    const bobMade = await api.topics.subscriptions.create({ subscriptions: ["bob"], context: { tenant: "acme" } }, "project", undefined, once);
    expect(bobMade.result.data[0]).toMatchObject({ identifier: "tk_project:si_bob:ctx_tenant:acme", contextKeys: ["tenant:acme"] });
    expect(bobMade.result.data[0]!.preferences).toBeUndefined();

    await expectReached(alerts, "project", { tier: "silver" }, ["ann"]);
    await expectReached(alerts, "project", { tier: "gold" }, ["ann", "cy"]);
    await expectReached(digestWorkflow, "project", { tier: "gold" }, ["cy"]);
    await expectReached(alerts, "project", { tier: "gold" }, ["bob"], { tenant: "acme" });
    await expectReached(alerts, "project", { tier: "gold" }, [], { tenant: "globex" });

    // Listed by scope (every scope unless contextKeys names one), read and replaced one at a time.
    const every = await api.topics.subscriptions.list({ topicKey: "project", limit: 10 }, once);
    expect(every.result.data.map((subscription) => subscription.identifier).sort()).toEqual([
      "tk_project:si_ann",
      "tk_project:si_bob:ctx_tenant:acme",
      "tk_project:si_cy",
    ]);
    const acme = await api.topics.subscriptions.list({ topicKey: "project", limit: 10, contextKeys: ["tenant:acme"] }, once);
    expect(acme.result.data.map((subscription) => subscription.identifier)).toEqual(["tk_project:si_bob:ctx_tenant:acme"]);
    // A subscriber's subscriptions, narrowed the same way, and to one topic by its key.
    await api.topics.subscriptions.create({ subscriptions: ["bob"] }, "side-project", undefined, once);
    const ofBob = async (narrowed: { key?: string; contextKeys?: string[] }) =>
      (await api.subscribers.topics.list({ subscriberId: "bob", limit: 10, ...narrowed }, once)).result.data
        .map((subscription) => subscription.identifier)
        .sort();
    expect(await ofBob({})).toEqual(["tk_project:si_bob:ctx_tenant:acme", "tk_side-project:si_bob"]);
    expect(await ofBob({ key: "project" })).toEqual(["tk_project:si_bob:ctx_tenant:acme"]);
    expect(await ofBob({ key: "side-project", contextKeys: ["tenant:acme"] })).toEqual([]);
    expect(await ofBob({ contextKeys: ["tenant:acme"] })).toEqual(["tk_project:si_bob:ctx_tenant:acme"]);
    expect(await ofBob({ key: "no-such-topic" })).toEqual([]);
    const emptyKey = await stack.request<{ data: { identifier: string }[] }>("GET", "/v2/subscribers/bob/subscriptions?key=");
    expect(emptyKey.body.data.map((subscription) => subscription.identifier).sort()).toEqual(["tk_project:si_bob:ctx_tenant:acme", "tk_side-project:si_bob"]);
    const cy = await api.topics.subscriptions.getSubscription("project", "tk_project:si_cy", undefined, once);
    expect(cy.result).toMatchObject({ identifier: "tk_project:si_cy", preferences: [{ enabled: true, condition: gold, workflow: { identifier: alerts } }] });

    const replaced = await api.topics.subscriptions.update(
      { topicKey: "project", identifier: "tk_project:si_ann", updateTopicSubscriptionRequestDto: { preferences: [] } },
      once,
    );
    expect(replaced.result.preferences).toBeUndefined();
    await expectReached(digestWorkflow, "project", {}, ["ann", "cy"]);
  });

  it("answers conditions over the subscriber's profile and the trigger's contexts", async () => {
    const pro = { "==": [{ var: "subscriber.data.plan" }, "pro"] };
    await api.topics.subscriptions.create({ subscriptions: ["cy", "eve"], preferences: [{ workflowId: alerts, condition: pro }] }, "plans", undefined, once);
    await expectReached(alerts, "plans", {}, ["cy"]);
    const acmeOnly = { "==": [{ var: "context.tenant.id" }, "acme"] };
    await api.topics.subscriptions.create(
      { subscriptions: ["eve"], context: { tenant: "acme" }, preferences: [{ workflowId: alerts, condition: acmeOnly }] },
      "plans",
      undefined,
      once,
    );
    await expectReached(alerts, "plans", {}, ["cy"]);
    await expectReached(alerts, "plans", {}, ["eve"], { tenant: "acme" });
    // Through two topics (project, as the first test left it, then plans): cy's condition in the
    // first fails, the one in the second holds.
    await expectReached(alerts, ["project", "plans"], { tier: "silver" }, ["ann", "cy"]);
  });

  it("refuses malformed preferences and contexts with a 422 naming the field, and changes nothing", async () => {
    for (const body of [
      { subscriptions: ["eve"], preferences: [{ workflowId: alerts, condition: "tier is gold" }] },
      { subscriptions: ["eve"], preferences: "all" },
      { subscriptions: ["eve"], context: { tenant: "not an id" } },
    ]) {
      const reply = await stack.request<{ message: string; errors: Record<string, unknown> }>("POST", "/v2/topics/refusals/subscriptions", body);
      expect(reply.status, JSON.stringify(reply.body)).toBe(422);
    }
    expect((await stack.request("GET", "/v2/topics/refusals")).status).toBe(404);
  });
});

describe("topic subscriptions in the Inbox (@novu/js `subscriptions`)", () => {
  async function inbox(subscriberId: string, options: InboxOptions = {}): Promise<Novu> {
    const novu = await openInbox(stack, subscriberId, options);
    clients.push(novu);
    return novu;
  }

  it("subscribes the session's subscriber, shows and switches its workflows, and only its own subscription", async () => {
    const dee = await inbox("dee");
    const created = await dee.subscriptions.create({ topicKey: "inbox-topic", topicName: "Inbox topic", preferences: [alerts] });
    if (created.error) throw created.error;
    expect(created.data).toMatchObject({ identifier: "tk_inbox-topic:si_dee", topicKey: "inbox-topic" });
    expect(created.data!.preferences?.map((preference) => [preference.workflow?.identifier, preference.enabled])).toEqual([[alerts, true]]);
    expect((await api.topics.get("inbox-topic", undefined, once)).result.name).toBe("Inbox topic");

    const listed = await dee.subscriptions.list({ topicKey: "inbox-topic" }, { useCache: false });
    expect(listed.data?.map((subscription) => subscription.identifier)).toEqual(["tk_inbox-topic:si_dee"]);
    // The stored preference, then the workflows asked for that have none: enabled.
    const shown = await dee.subscriptions.get(
      { topicKey: "inbox-topic", identifier: "tk_inbox-topic:si_dee", workflowIds: [digestWorkflow] },
      { useCache: false },
    );
    expect(shown.data?.preferences?.map((preference) => [preference.workflow?.identifier, preference.enabled])).toEqual([
      [alerts, true],
      [digestWorkflow, true],
    ]);

    // The Inbox's switch: alerts off for dee, stored on the subscription.
    const alertsPreference = shown.data!.preferences!.find((preference) => preference.workflow?.identifier === alerts)!;
    const switched = await alertsPreference.update({ value: false });
    if (switched.error) throw switched.error;
    expect(switched.data).toMatchObject({ enabled: false, subscriptionId: "tk_inbox-topic:si_dee" });
    await expectReached(alerts, "inbox-topic", {}, []);
    await expectReached(digestWorkflow, "inbox-topic", {}, ["dee"]);

    // Several at once (the bulk preference update): on the subscription, not the subscriber's own preferences.
    const bulk = await shown.data!.bulkUpdatePreferences([
      { workflowId: ids.get(alerts)!, value: true },
      { workflowId: ids.get(digestWorkflow)!, value: false },
    ]);
    if (bulk.error) throw bulk.error;
    expect(bulk.data?.map((preference) => [preference.workflow?.identifier, preference.enabled])).toEqual([
      [alerts, true],
      [digestWorkflow, false],
    ]);
    const own = await dee.preferences.list();
    expect(own.data?.filter((preference) => preference.workflow).every((preference) => preference.enabled)).toBe(true);
    await expectReached(alerts, "inbox-topic", {}, ["dee"]);
    await expectReached(digestWorkflow, "inbox-topic", {}, []);
    // A critical workflow always reaches its subscribers: its switch is refused.
    await stack.request("PUT", `/v1/workflows/${ids.get(critical)}`, { critical: true });
    expect((await shown.data!.updatePreference({ workflowId: ids.get(critical)!, value: false })).error).toBeDefined();
    await dee.subscriptions.update({ topicKey: "inbox-topic", identifier: "tk_inbox-topic:si_dee", preferences: [digestWorkflow] });
    await expectReached(digestWorkflow, "inbox-topic", {}, ["dee"]);

    // Another subscriber's session sees none of it and cannot change or remove it.
    const eve = await inbox("eve");
    expect((await eve.subscriptions.get({ topicKey: "inbox-topic", identifier: "tk_inbox-topic:si_dee" }, { useCache: false })).data).toBeNull();
    expect((await eve.subscriptions.delete({ topicKey: "inbox-topic", identifier: "tk_inbox-topic:si_dee" })).error).toBeDefined();
    expect((await eve.subscriptions.list({ topicKey: "inbox-topic" }, { useCache: false })).data).toEqual([]);

    const removed = await dee.subscriptions.delete({ topicKey: "inbox-topic", identifier: "tk_inbox-topic:si_dee" });
    expect(removed.error).toBeUndefined();
    expect((await dee.subscriptions.list({ topicKey: "inbox-topic" }, { useCache: false })).data).toEqual([]);
    await expectReached(digestWorkflow, "inbox-topic", {}, []);
  });

  it("keeps a session's subscriptions to its own contexts", async () => {
    const scoped = await inbox("dee", { context: { tenant: "acme" } });
    const made = await scoped.subscriptions.create({ topicKey: "tenant-news" });
    if (made.error) throw made.error;
    expect(made.data?.identifier).toBe("tk_tenant-news:si_dee:ctx_tenant:acme");
    const unscoped = await inbox("dee");
    expect((await unscoped.subscriptions.list({ topicKey: "tenant-news" }, { useCache: false })).data).toEqual([]);
    expect((await scoped.subscriptions.list({ topicKey: "tenant-news" }, { useCache: false })).data?.map((subscription) => subscription.identifier)).toEqual([
      "tk_tenant-news:si_dee:ctx_tenant:acme",
    ]);
    await expectReached(alerts, "tenant-news", {}, []);
    await expectReached(alerts, "tenant-news", {}, ["dee"], { tenant: "acme" });
  });
});
