import { Code, ConnectError } from "@connectrpc/connect";
import { subscribersV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeWorkflow, inMemoryClient, newNeighbours, newScope, openDatabase, scopeHeaders, type Fixture } from "./fixtures.js";

let fixture: Fixture;
const neighbours = newNeighbours();
let client: ReturnType<typeof inMemoryClient>;

const news = activeWorkflow({ name: "news", channels: ["in_app", "email"], tags: ["product"] });
const alerts = activeWorkflow({ name: "alerts", channels: ["sms", "push"], settings: { sms: false }, tags: ["ops", "billing"] });
const security = activeWorkflow({ name: "security", critical: true, channels: ["email", "chat"], settings: { chat: false } });

beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture.pool, neighbours);
  neighbours.workflows.push(news, alerts, security);
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

const { Criticality } = subscribersV1;

describe("preferences (in memory)", () => {
  const scope = newScope();
  const call = { headers: scopeHeaders(scope) };

  it("resolves defaults and workflow settings, lists by criticality", async () => {
    await client.upsertSubscriber({ subscriberId: "p1" }, call);
    const defaults = await client.getSubscriberPreferences({ subscriberId: "p1" }, call);
    expect(defaults.global).toMatchObject({ enabled: true, channels: { inApp: true, email: true, sms: true, push: true } });
    expect(defaults.global!.channels!.chat).toBeUndefined();
    expect(defaults.workflows.map((preference) => preference.workflow!.identifier)).toEqual(["news", "alerts"]);
    expect(defaults.workflows[1]).toMatchObject({
      channels: { sms: false, push: true },
      overrides: [
        { channel: "sms", source: "template" },
        { channel: "push", source: "template" },
      ],
    });
    const critical = await client.getSubscriberPreferences({ subscriberId: "p1", criticality: Criticality.CRITICAL }, call);
    expect(critical.workflows.map((preference) => preference.workflow!.identifier)).toEqual(["security"]);
    expect(critical.workflows[0]!.channels).toMatchObject({ email: true, chat: false });
    const all = await client.getSubscriberPreferences({ subscriberId: "p1", criticality: Criticality.ALL }, call);
    expect(all.workflows).toHaveLength(3);
  });

  it("layers global and per-workflow choices; a global choice clears per-workflow ones of that channel", async () => {
    await client.upsertSubscriber({ subscriberId: "p2" }, call);
    await client.updateSubscriberPreferences({ subscriberId: "p2", workflowId: news.id, channels: { email: false, inApp: false } }, call);
    const afterGlobal = await client.updateSubscriberPreferences({ subscriberId: "p2", channels: { email: true, sms: true } }, call);
    expect(afterGlobal.global!.channels).toMatchObject({ email: true, sms: true });
    const newsPreference = afterGlobal.workflows.find((preference) => preference.workflow!.id === news.id)!;
    expect(newsPreference.channels).toMatchObject({ email: true, inApp: false });
    expect(newsPreference.overrides).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel: "email", source: "subscriber" }),
        expect.objectContaining({ channel: "in_app", source: "subscriber" }),
      ]),
    );
    // The global sms choice beats the workflow's own setting.
    expect(afterGlobal.workflows.find((preference) => preference.workflow!.id === alerts.id)!.channels).toMatchObject({ sms: true });
  });

  it("refuses critical workflows, unknown workflows before unknown subscribers, and schedules per workflow", async () => {
    await client.upsertSubscriber({ subscriberId: "p3" }, call);
    const critical = await rpcError(client.updateSubscriberPreferences({ subscriberId: "p3", workflowId: security.id, channels: { email: false } }, call));
    expect(critical.code).toBe(Code.FailedPrecondition);
    expect(critical.rawMessage).toBe(`Critical workflow with id: ${security.id} can not be updated`);
    expect((await rpcError(client.updateSubscriberPreferences({ subscriberId: "ghost", workflowId: "nope", channels: {} }, call))).code).toBe(Code.NotFound);
    const ghost = await rpcError(client.updateSubscriberPreferences({ subscriberId: "ghost", channels: { email: true } }, call));
    expect(ghost.rawMessage).toBe("Subscriber with id: ghost is not found");
    expect((await rpcError(client.getSubscriberPreferences({ subscriberId: "ghost" }, call))).code).toBe(Code.NotFound);
    const perWorkflowSchedule = await rpcError(
      client.updateSubscriberPreferences({ subscriberId: "p3", workflowId: news.id, schedule: { isEnabled: true } }, call),
    );
    expect(perWorkflowSchedule.code).toBe(Code.InvalidArgument);
  });

  it("stores a schedule with the global row and validates its times", async () => {
    await client.upsertSubscriber({ subscriberId: "p4" }, call);
    const bad = await rpcError(
      client.updateSubscriberPreferences(
        { subscriberId: "p4", schedule: { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "25:00", end: "9:00 PM" }] } } } },
        call,
      ),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
    const schedule = {
      isEnabled: true,
      weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "17:30" }] }, sunday: { isEnabled: false } },
    };
    await client.updateSubscriberPreferences({ subscriberId: "p4", schedule }, call);
    await client.updateSubscriberPreferences({ subscriberId: "p4", channels: { push: false } }, call);
    const reply = await client.getSubscriberPreferences({ subscriberId: "p4" }, call);
    expect(reply.global!.schedule).toMatchObject({
      isEnabled: true,
      weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "17:30" }] }, sunday: { isEnabled: false, hours: [] } },
    });
    expect(reply.global!.channels!.push).toBe(false);
  });

  it("resolves a page of subscribers for the worker: defaults, and those who chose in request order", async () => {
    const ensured = await client.ensureSubscribers({ subscribers: [{ subscriberId: "w1" }, { subscriberId: "w2" }] }, call);
    const [w1, w2] = ["w1", "w2"].map((id) => ensured.subscribers.find((subscriber) => subscriber.subscriberId === id)!.id);
    await client.updateSubscriberPreferences({ subscriberId: "w1", channels: { push: false, chat: false } }, call);
    await client.updateSubscriberPreferences({ subscriberId: "w1", workflowId: alerts.identifier, channels: { push: true } }, call);
    await client.updateSubscriberPreferences({ subscriberId: "w2", workflowId: news.id, channels: { email: false } }, call);
    const unknown = "ffffffffffffffffffffffff";
    const reply = await client.resolveChannelPreferences({ workflowId: alerts.id, subscriberIds: [w2!, unknown, w1!, w1!] }, call);
    expect(reply.critical).toBe(false);
    // w2 chose only for another workflow: like the unknown id, it gets the defaults.
    expect(reply.defaults).toMatchObject({ inApp: true, email: true, sms: false, chat: true, push: true });
    expect(reply.subscribers.map((entry) => entry.subscriberId)).toEqual([w1]);
    expect(reply.subscribers[0]!.channels).toMatchObject({ inApp: true, email: true, sms: false, chat: false, push: true });
    // What decided: the workflow choice set push, the global one push and chat (the worker names it on skipped steps).
    expect(reply.subscribers[0]!.workflowChoices).toEqual(expect.objectContaining({ push: true }));
    expect(reply.subscribers[0]!.workflowChoices?.chat).toBeUndefined();
    expect(reply.subscribers[0]!.globalChoices).toEqual(expect.objectContaining({ push: false, chat: false }));
    expect(reply.subscribers[0]!.globalChoices?.email).toBeUndefined();
    const critical = await client.resolveChannelPreferences({ workflowId: security.id, subscriberIds: [w1!] }, call);
    expect(critical).toMatchObject({ critical: true, subscribers: [], defaults: { push: true, chat: false, email: true } });
    expect((await rpcError(client.resolveChannelPreferences({ workflowId: "gone", subscriberIds: [w1!] }, call))).code).toBe(Code.NotFound);
    const tooMany = Array.from({ length: 1001 }, () => w1!);
    expect((await rpcError(client.resolveChannelPreferences({ workflowId: news.id, subscriberIds: tooMany }, call))).code).toBe(Code.InvalidArgument);
  });

  it("takes the workflow's facts from the caller when given, without looking the workflow up", async () => {
    const ensured = await client.ensureSubscribers({ subscribers: [{ subscriberId: "f1" }] }, call);
    const f1 = ensured.subscribers[0]!.id;
    await client.updateSubscriberPreferences({ subscriberId: "f1", workflowId: alerts.identifier, channels: { push: false } }, call);
    // The job's snapshot says email is off and sms on, whatever the stored workflow says now.
    const reply = await client.resolveChannelPreferences(
      { workflowId: alerts.id, subscriberIds: [f1], workflow: { critical: false, preferenceSettings: { email: false } } },
      call,
    );
    expect(reply.defaults).toMatchObject({ inApp: true, email: false, sms: true, chat: true, push: true });
    expect(reply.subscribers).toEqual([expect.objectContaining({ subscriberId: f1, channels: expect.objectContaining({ email: false, push: false }) })]);
    const critical = await client.resolveChannelPreferences({ workflowId: alerts.id, subscriberIds: [f1], workflow: { critical: true } }, call);
    expect(critical).toMatchObject({ critical: true, subscribers: [], defaults: { push: true } });
    // Not looked up: an id the catalogue no longer has is answered from the given facts.
    const gone = await client.resolveChannelPreferences({ workflowId: "gone", subscriberIds: [f1], workflow: { critical: false } }, call);
    expect(gone.subscribers).toEqual([]);
  });

  it("pages through many active workflows", async () => {
    const many = Array.from({ length: 1205 }, (_, index) => activeWorkflow({ name: `bulk-${index}`, channels: ["in_app"] }));
    const other = { headers: scopeHeaders(newScope()) };
    neighbours.workflows.push(...many);
    try {
      await client.upsertSubscriber({ subscriberId: "pager" }, other);
      const reply = await client.getSubscriberPreferences({ subscriberId: "pager" }, other);
      expect(reply.workflows).toHaveLength(2 + many.length);
    } finally {
      neighbours.workflows.splice(3);
    }
  });

  it("lists by tags and severity, and names each workflow's tags and severity", async () => {
    await client.upsertSubscriber({ subscriberId: "t1" }, call);
    const listed = async (filter: { tags?: string[]; severities?: string[]; criticality?: subscribersV1.Criticality }) =>
      (await client.getSubscriberPreferences({ subscriberId: "t1", ...filter }, call)).workflows.map((preference) => preference.workflow!.identifier);
    expect(await listed({ tags: ["billing", "nothing"] })).toEqual(["alerts"]);
    expect(await listed({ tags: ["product", "ops"] })).toEqual(["news", "alerts"]);
    expect(await listed({ tags: ["nothing"] })).toEqual([]);
    // Workflows have no severity of their own: every one is "none".
    expect(await listed({ severities: ["high", "none"] })).toEqual(["news", "alerts"]);
    expect(await listed({ severities: ["high"] })).toEqual([]);
    expect(await listed({ tags: ["product"], criticality: Criticality.ALL })).toEqual(["news"]);
    const reply = await client.getSubscriberPreferences({ subscriberId: "t1", tags: ["ops"] }, call);
    expect(reply.workflows[0]!.workflow).toMatchObject({ id: alerts.id, tags: ["ops", "billing"], severity: "none", critical: false });
    // The global preference does not depend on the filter.
    expect(reply.global!.channels).toMatchObject({ inApp: true, email: true, sms: true, push: true });
  });

  it("names the updated workflow of an update", async () => {
    await client.upsertSubscriber({ subscriberId: "u1" }, call);
    const byIdentifier = await client.updateSubscriberPreferences({ subscriberId: "u1", workflowId: news.identifier, channels: { email: false } }, call);
    expect(byIdentifier.updatedWorkflowIds).toEqual([news.id]);
    expect((await client.updateSubscriberPreferences({ subscriberId: "u1", channels: { push: false } }, call)).updatedWorkflowIds).toEqual([]);
  });

  describe("bulk updates", () => {
    const dormant = activeWorkflow({ name: "dormant", channels: ["email"] });
    neighbours.inactiveWorkflows.push(dormant);
    const stored = async (subscriberId: string) => (await client.getSubscriberPreferences({ subscriberId, criticality: Criticality.ALL }, call)).workflows;

    it("applies every entry in one call, by id or identifier; of a workflow named twice, its last entry, as Novu", async () => {
      await client.upsertSubscriber({ subscriberId: "b1" }, call);
      const reply = await client.bulkUpdateSubscriberPreferences(
        {
          subscriberId: "b1",
          updates: [
            { workflowId: news.id, channels: { email: false, inApp: false } },
            { workflowId: alerts.identifier, channels: { push: false } },
            { workflowId: news.identifier, channels: { email: false } },
            { workflowId: dormant.id, channels: { email: false } },
          ],
        },
        call,
      );
      expect(reply.updatedWorkflowIds).toEqual([news.id, alerts.id, dormant.id]);
      const byId = new Map(reply.workflows.map((preference) => [preference.workflow!.id, preference]));
      expect(byId.get(news.id)!.channels).toMatchObject({ email: false, inApp: true });
      expect(byId.get(alerts.id)!.channels).toMatchObject({ push: false, sms: false });
      expect(byId.get(alerts.id)!.overrides).toMatchObject([
        { channel: "sms", source: "template" },
        { channel: "push", source: "subscriber" },
      ]);
      // The same store as single updates: a read sees it, and a global choice clears it.
      expect((await stored("b1")).find((preference) => preference.workflow!.id === news.id)!.channels).toMatchObject({ email: false });
      await client.updateSubscriberPreferences({ subscriberId: "b1", channels: { email: true } }, call);
      expect((await stored("b1")).find((preference) => preference.workflow!.id === news.id)!.channels).toMatchObject({ email: true, inApp: true });
    });

    it("changes nothing when any entry names an unknown or a critical workflow, or the subscriber is unknown", async () => {
      await client.upsertSubscriber({ subscriberId: "b2" }, call);
      const before = await stored("b2");
      const unknown = await rpcError(
        client.bulkUpdateSubscriberPreferences(
          {
            subscriberId: "b2",
            updates: [
              { workflowId: news.id, channels: { email: false } },
              { workflowId: "missing-one", channels: { email: false } },
              { workflowId: "ffffffffffffffffffffffff", channels: {} },
            ],
          },
          call,
        ),
      );
      expect(unknown.code).toBe(Code.NotFound);
      expect(unknown.rawMessage).toBe("Workflows with ids: missing-one, ffffffffffffffffffffffff not found");
      const critical = await rpcError(
        client.bulkUpdateSubscriberPreferences(
          {
            subscriberId: "b2",
            updates: [
              { workflowId: news.id, channels: { email: false } },
              { workflowId: security.identifier, channels: { email: false } },
            ],
          },
          call,
        ),
      );
      expect(critical.code).toBe(Code.FailedPrecondition);
      expect(critical.rawMessage).toBe(`Critical workflows with ids: ${security.id} cannot be updated`);
      expect(await stored("b2")).toEqual(before);
      const ghost = await rpcError(
        client.bulkUpdateSubscriberPreferences({ subscriberId: "ghost", updates: [{ workflowId: news.id, channels: { email: false } }] }, call),
      );
      expect(ghost.code).toBe(Code.NotFound);
      const none = await rpcError(client.bulkUpdateSubscriberPreferences({ subscriberId: "b2", updates: [] }, call));
      expect([none.code, none.rawMessage]).toEqual([Code.FailedPrecondition, "No preferences provided for bulk update"]);
      expect((await rpcError(client.bulkUpdateSubscriberPreferences({ subscriberId: "ghost", updates: [] }, call))).code).toBe(Code.NotFound);
      const tooMany = Array.from({ length: 101 }, () => ({ workflowId: news.id, channels: { email: false } }));
      expect((await rpcError(client.bulkUpdateSubscriberPreferences({ subscriberId: "b2", updates: tooMany }, call))).code).toBe(Code.InvalidArgument);
      expect(await stored("b2")).toEqual(before);
    });
  });

  describe("default schedules", () => {
    const weekdays = { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] } } };

    it("stores a default schedule only when the subscriber has none, and answers the one in force", async () => {
      await client.upsertSubscriber({ subscriberId: "d1" }, call);
      await client.updateSubscriberPreferences({ subscriberId: "d1", channels: { email: false } }, call);
      const first = await client.setDefaultSchedule({ subscriberId: "d1", schedule: weekdays }, call);
      expect(first.schedule).toMatchObject(weekdays);
      const other = { isEnabled: false };
      expect((await client.setDefaultSchedule({ subscriberId: "d1", schedule: other }, call)).schedule).toMatchObject(weekdays);
      // The subscriber's own choice replaces it, and a later default does not undo that.
      await client.updateSubscriberPreferences({ subscriberId: "d1", schedule: other }, call);
      expect((await client.setDefaultSchedule({ subscriberId: "d1", schedule: weekdays }, call)).schedule).toMatchObject({ isEnabled: false });
      const reply = await client.getSubscriberPreferences({ subscriberId: "d1" }, call);
      expect(reply.global).toMatchObject({ schedule: { isEnabled: false }, channels: { email: false } });
    });

    it("refuses bad times and unknown subscribers", async () => {
      await client.upsertSubscriber({ subscriberId: "d2" }, call);
      const bad = await rpcError(
        client.setDefaultSchedule(
          { subscriberId: "d2", schedule: { isEnabled: true, weeklySchedule: { friday: { isEnabled: true, hours: [{ start: "9", end: "17:00" }] } } } },
          call,
        ),
      );
      expect(bad.code).toBe(Code.InvalidArgument);
      expect((await client.getSubscriberPreferences({ subscriberId: "d2" }, call)).global!.schedule).toBeUndefined();
      expect((await rpcError(client.setDefaultSchedule({ subscriberId: "ghost", schedule: weekdays }, call))).code).toBe(Code.NotFound);
      expect((await rpcError(client.setDefaultSchedule({ subscriberId: "d2" }, call))).code).toBe(Code.InvalidArgument);
    });
  });

  it("drops a subscriber's preferences with the subscriber", async () => {
    await client.upsertSubscriber({ subscriberId: "gone" }, call);
    await client.updateSubscriberPreferences({ subscriberId: "gone", channels: { email: false } }, call);
    await client.deleteSubscriber({ subscriberId: "gone" }, call);
    await client.upsertSubscriber({ subscriberId: "gone" }, call);
    const reply = await client.getSubscriberPreferences({ subscriberId: "gone" }, call);
    expect(reply.global!.channels!.email).toBe(true);
  });
});

describe("preferences per context scope", () => {
  const scope = newScope();
  const call = { headers: scopeHeaders(scope) };
  const acme = ["tenant:acme"];

  it("keeps each scope's choices and schedule apart, falling back to the defaults, never to another scope", async () => {
    const [c1] = (await client.ensureSubscribers({ subscribers: [{ subscriberId: "c1" }] }, call)).subscribers;
    await client.updateSubscriberPreferences({ subscriberId: "c1", channels: { email: false } }, call);
    await client.updateSubscriberPreferences({ subscriberId: "c1", workflowId: news.id, channels: { inApp: false }, contextKeys: acme }, call);
    await client.bulkUpdateSubscriberPreferences(
      { subscriberId: "c1", updates: [{ workflowId: alerts.id, channels: { push: false } }], contextKeys: acme },
      call,
    );

    const plain = await client.getSubscriberPreferences({ subscriberId: "c1" }, call);
    expect(plain.global!.channels).toMatchObject({ email: false });
    expect(plain.workflows.find((preference) => preference.workflow!.id === news.id)!.channels).toMatchObject({ email: false, inApp: true });
    const scoped = await client.getSubscriberPreferences({ subscriberId: "c1", contextKeys: acme }, call);
    expect(scoped.global!.channels).toMatchObject({ email: true });
    expect(scoped.workflows.find((preference) => preference.workflow!.id === news.id)!.channels).toMatchObject({ email: true, inApp: false });
    expect(scoped.workflows.find((preference) => preference.workflow!.id === alerts.id)!.channels).toMatchObject({ push: false });
    const other = await client.getSubscriberPreferences({ subscriberId: "c1", contextKeys: ["tenant:globex"] }, call);
    expect(other.workflows.find((preference) => preference.workflow!.id === news.id)!.channels).toMatchObject({ email: true, inApp: true });

    // What a trigger of each scope is decided by.
    const resolved = async (contextKeys: string[]) =>
      (await client.resolveChannelPreferences({ workflowId: news.id, subscriberIds: [c1!.id], contextKeys }, call)).subscribers[0]?.channels;
    expect(await resolved([])).toMatchObject({ email: false, inApp: true });
    expect(await resolved(acme)).toMatchObject({ email: true, inApp: false });
    expect(await resolved(["tenant:globex"])).toBeUndefined();

    const schedule = { isEnabled: true, weeklySchedule: {} };
    await client.setDefaultSchedule({ subscriberId: "c1", schedule, contextKeys: acme }, call);
    expect((await client.getSubscriberPreferences({ subscriberId: "c1", contextKeys: acme }, call)).global!.schedule).toMatchObject({ isEnabled: true });
    expect((await client.getSubscriberPreferences({ subscriberId: "c1" }, call)).global!.schedule).toBeUndefined();
    const bad = await rpcError(client.getSubscriberPreferences({ subscriberId: "c1", contextKeys: ["acme"] }, call));
    expect(bad.code).toBe(Code.InvalidArgument);
  });
});
