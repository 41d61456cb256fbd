import { Code, ConnectError } from "@connectrpc/connect";
import { subscribersV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeWorkflow, inMemoryClient, newNeighbours, newScope, openDatabase, scopeHeaders, type Fixture } from "./fixtures.js";

let fixture: Fixture;
const neighbours = newNeighbours();
let client: ReturnType<typeof inMemoryClient>;

const news = activeWorkflow({ name: "news", channels: ["in_app", "email"] });
const alerts = activeWorkflow({ name: "alerts", channels: ["sms", "push"], settings: { sms: false } });
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

  it("drops a subscriber's preferences with the subscriber", async () => {
    await client.upsertSubscriber({ subscriberId: "gone" }, call);
    await client.updateSubscriberPreferences({ subscriberId: "gone", channels: { email: false } }, call);
    await client.deleteSubscriber({ subscriberId: "gone" }, call);
    await client.upsertSubscriber({ subscriberId: "gone" }, call);
    const reply = await client.getSubscriberPreferences({ subscriberId: "gone" }, call);
    expect(reply.global!.channels!.email).toBe(true);
  });
});
