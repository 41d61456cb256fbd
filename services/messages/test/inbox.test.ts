import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { commonV1, messagesV1 } from "@notify/proto";
import type { Announce, ChangedKeys, Scope } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SnoozeSchedule } from "../src/snoozes.js";
import { callAs, fakeSubscribers, fakeWorkflows, inMemoryClient, newMessage, newScope, openDatabase, rpcError, type Fixture } from "./fixtures.js";

const { InboxChange, InboxBulkChange, InboxActionType } = messagesV1;
const { Severity } = commonV1;

let fixture: Fixture;
const subscribers = fakeSubscribers();
const workflows = fakeWorkflows();
let client: ReturnType<typeof inMemoryClient>;
const announced: { kind: "feeds" | "received"; environmentId: string; keys: ChangedKeys }[] = [];
const scheduled: { scope: Scope; id: string; until: Date }[] = [];
const recording =
  (kind: "feeds" | "received"): Announce =>
  async (environmentId, keys) => {
    announced.push({ kind, environmentId, keys });
  };
const snoozes: SnoozeSchedule = {
  async schedule(scope, message, until) {
    scheduled.push({ scope, id: message.id, until });
  },
};

beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture, subscribers, 10_000, workflows, recording("feeds"), recording("received"), snoozes);
});
afterAll(() => fixture?.close());

function setUp(subscriberId = "ada") {
  const scope = newScope();
  return { scope, call: callAs(scope), subscriber: subscribers.add(scope, subscriberId) };
}

type Subscriber = ReturnType<typeof setUp>["subscriber"];
type Fields = Parameters<typeof newMessage>[1];

/** Creates in-app messages one after another (distinct creation times, oldest first); answers their ids. */
async function create(call: ReturnType<typeof callAs>, subscriber: Subscriber, ...fields: Fields[]): Promise<string[]> {
  const ids: string[] = [];
  for (const field of fields) {
    const { messages } = await client.createMessages({ messages: [newMessage(subscriber, field)] }, call);
    ids.push(messages[0]!.id);
  }
  return ids;
}

const list = (
  call: ReturnType<typeof callAs>,
  subscriberId: string,
  filter: messagesV1.InboxFilter | object = {},
  page: { limit?: number; after?: string; offset?: number } = {},
) => client.listInboxMessages({ subscriberId, filter, limit: page.limit ?? 10, offset: page.offset ?? 0, ...(page.after ? { after: page.after } : {}) }, call);

async function counts(call: ReturnType<typeof callAs>, subscriberId: string, filters: object[], limit = 100): Promise<number[]> {
  const reply = await client.countInboxMessages({ subscriberId, filters, limit }, call);
  return reply.counts.map((count) => count.count);
}

describe("the Inbox RPCs", () => {
  it("lists newest first with a cursor and an offset, only the subscriber's in-app messages", async () => {
    const { call, scope, subscriber } = setUp();
    const bob = subscribers.add(scope, "bob");
    const ids = await create(call, subscriber, {}, {}, {}, {}, {});
    await create(call, bob, {});
    await create(call, subscriber, { channel: commonV1.Channel.EMAIL, stepId: "email" });
    const first = await list(call, "ada", {}, { limit: 2 });
    expect(first.messages.map((message) => message.id)).toEqual([ids[4], ids[3]]);
    expect(first.hasMore).toBe(true);
    expect(first.subscriber?.subscriberId).toBe("ada");
    expect(first.messages[0]!.payloadJson).toBeUndefined();
    const next = await list(call, "ada", {}, { limit: 2, after: ids[3]! });
    expect(next.messages.map((message) => message.id)).toEqual([ids[2], ids[1]]);
    const last = await list(call, "ada", {}, { limit: 2, after: ids[1]! });
    expect(last.messages.map((message) => message.id)).toEqual([ids[0]]);
    expect(last.hasMore).toBe(false);
    expect((await list(call, "ada", {}, { limit: 2, offset: 3 })).messages.map((message) => message.id)).toEqual([ids[1], ids[0]]);
    // A cursor of another subscriber's message names nothing of this one's.
    const [bobs] = (await list(call, "bob")).messages;
    expect((await list(call, "ada", {}, { after: bobs!.id })).messages).toEqual([]);
  });

  it("lists many subscribers' pages in one call, each succeeding or failing alone", async () => {
    const { call, scope, subscriber } = setUp();
    const bob = subscribers.add(scope, "bob");
    const [mine] = await create(call, subscriber, {});
    const [bobs] = await create(call, bob, {});
    const { results } = await client.batchListInboxMessages(
      {
        lists: [
          { subscriberId: "ada", limit: 10 },
          { subscriberId: "nobody", limit: 10 },
          { subscriberId: "bob", limit: 0 },
          { subscriberId: "bob", limit: 10 },
          { subscriberId: "ada", limit: 10, filter: { read: true } },
          { subscriberId: "ada", limit: 10, after: mine! },
        ],
      },
      call,
    );
    const pageOf = (index: number) => {
      const result = results[index]!.result;
      return result.case === "page" ? result.value : undefined;
    };
    expect(results.map((item) => item.result.case)).toEqual(["page", "error", "error", "page", "page", "page"]);
    expect(pageOf(4)?.messages).toEqual([]);
    expect(pageOf(5)?.messages).toEqual([]);
    expect(pageOf(0)?.messages.map((message) => message.id)).toEqual([mine]);
    expect(pageOf(3)?.messages.map((message) => message.id)).toEqual([bobs]);
    expect(pageOf(3)?.subscriber?.subscriberId).toBe("bob");
    const errorOf = (index: number) => {
      const result = results[index]!.result;
      return result.case === "error" ? result.value.code : undefined;
    };
    expect([errorOf(1), errorOf(2)]).toEqual([Code.NotFound, Code.InvalidArgument]);
  });

  it("filters by flags, severity, tags, data and creation time, and counts each filter up to the limit", async () => {
    const { call, subscriber } = setUp();
    const [high, billing, plain] = await create(
      call,
      subscriber,
      { severity: Severity.HIGH, tags: ["security"], data: { kind: "alert", level: 3 } },
      { severity: Severity.LOW, tags: ["billing", "invoices"], data: { kind: "invoice", owners: ["ann", "bo"], nested: { region: "eu" } } },
      {},
    );
    const ids = async (filter: object) => (await list(call, "ada", filter)).messages.map((message) => message.id);
    expect(await ids({ severities: [Severity.HIGH] })).toEqual([high]);
    expect(await ids({ severities: [Severity.NONE] })).toEqual([plain]);
    expect(await ids({ tags: [{ anyOf: ["billing", "security"] }] })).toEqual([billing, high]);
    expect(await ids({ tags: [{ anyOf: ["billing"] }, { anyOf: ["security"] }] })).toEqual([]);
    expect(await ids({ data: { kind: "alert" } })).toEqual([high]);
    expect(await ids({ data: { kind: ["alert", "invoice"] } })).toEqual([billing, high]);
    expect(await ids({ data: { kind: { or: ["invoice"] } } })).toEqual([billing]);
    expect(await ids({ data: { owners: "bo" } })).toEqual([billing]);
    expect(await ids({ data: { owners: { and: [{ or: ["ann"] }, { or: ["bo", "cy"] }] } } })).toEqual([billing]);
    expect(await ids({ data: { nested: { region: "eu" } } })).toEqual([billing]);
    expect(await ids({ data: { level: 3 } })).toEqual([high]);
    expect(await ids({ data: { level: "3" } })).toEqual([]);
    // Clients send milliseconds; the database keeps microseconds.
    const created = timestampDate((await list(call, "ada")).messages.find((message) => message.id === billing)!.createdAt!);
    expect(await ids({ createdGte: timestampFromDate(created), createdLte: timestampFromDate(new Date(created.getTime() + 1)) })).toEqual([billing]);

    await client.updateInboxMessage({ subscriberId: "ada", messageId: high!, change: InboxChange.READ }, call);
    expect(await counts(call, "ada", [{}, { read: false }, { read: true }, { seen: false }, { severities: [Severity.HIGH, Severity.LOW] }])).toEqual([
      3, 2, 1, 2, 2,
    ]);
    const capped = await client.countInboxMessages({ subscriberId: "ada", filters: [{}, { read: true }], limit: 2 }, call);
    expect(capped.counts).toEqual([expect.objectContaining({ count: 2, hasMore: true }), expect.objectContaining({ count: 1, hasMore: false })]);
  });

  it("refuses malformed filters and bounds", async () => {
    const { call } = setUp();
    for (const data of [
      { $where: "x" },
      { ".a": 1 },
      { a: "nul\u0000" },
      { constructor: 1 },
      { kind: { deep: { deeper: { deepest: 1 } } } },
      { kind: [{ object: 1 }] },
    ]) {
      expect((await rpcError(list(call, "ada", { data: data as JsonObject }))).code).toBe(Code.InvalidArgument);
    }
    expect((await rpcError(list(call, "ada", {}, { limit: 101 }))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(list(call, "ada", { tags: [{ anyOf: [] }] }))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(list(call, "ada", { severities: [9] }))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(list(call, "ada", {}, { after: "nope" }))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(client.countInboxMessages({ subscriberId: "ada", filters: [], limit: 10 }, call))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(list(call, "nobody"))).code).toBe(Code.NotFound);
  });

  it("applies each state change as Novu's Inbox does, only to the subscriber's own messages", async () => {
    const { call, scope, subscriber } = setUp();
    const bob = subscribers.add(scope, "bob");
    const [id] = await create(call, subscriber, {
      cta: {
        action: {
          buttons: [
            { type: "primary", content: "Accept" },
            { type: "secondary", content: "Decline" },
          ],
        },
      },
    });
    const [bobs] = await create(call, bob, {});
    const change = async (kind: messagesV1.InboxChange, extra: object = {}) =>
      (await client.updateInboxMessage({ subscriberId: "ada", messageId: id!, change: kind, ...extra }, call)).message!;

    const read = await change(InboxChange.READ);
    expect(read).toMatchObject({ read: true, seen: true, archived: false });
    expect(read.lastReadDate).toBeDefined();
    const firstSeen = read.firstSeenDate;
    expect(firstSeen).toBeDefined();
    const archived = await change(InboxChange.ARCHIVE);
    expect(archived).toMatchObject({ read: true, seen: true, archived: true });
    expect(archived.archivedAt).toBeDefined();
    const unread = await change(InboxChange.UNREAD);
    expect(unread).toMatchObject({ read: false, seen: true, archived: false });
    expect(unread.archivedAt).toBeUndefined();
    expect(unread.lastReadDate).toBeUndefined();
    expect(unread.firstSeenDate).toEqual(firstSeen);
    await change(InboxChange.ARCHIVE);
    expect(await change(InboxChange.UNARCHIVE)).toMatchObject({ archived: false, read: true, seen: true });

    const completed = await change(InboxChange.COMPLETE, { actionType: InboxActionType.PRIMARY });
    expect(completed.cta?.action).toMatchObject({ status: "done", result: { type: "primary" } });
    expect(completed.cta?.action?.buttons.map((button) => button.content)).toEqual(["Accept", "Decline"]);
    expect((await change(InboxChange.REVERT, { actionType: InboxActionType.SECONDARY })).cta?.action).toMatchObject({
      status: "pending",
      result: { type: "secondary" },
    });
    expect((await rpcError(change(InboxChange.COMPLETE))).code).toBe(Code.InvalidArgument);

    // Another subscriber's message, an unknown one, another environment's: not found, unchanged.
    expect((await rpcError(client.updateInboxMessage({ subscriberId: "ada", messageId: bobs!, change: InboxChange.READ }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.updateInboxMessage({ subscriberId: "ada", messageId: "0".repeat(24), change: InboxChange.READ }, call))).code).toBe(
      Code.NotFound,
    );
    const other = setUp();
    expect((await rpcError(client.updateInboxMessage({ subscriberId: "ada", messageId: id!, change: InboxChange.ARCHIVE }, other.call))).code).toBe(
      Code.NotFound,
    );
    expect((await list(call, "bob")).messages[0]).toMatchObject({ read: false, seen: false });
    expect((await rpcError(client.deleteInboxMessage({ subscriberId: "ada", messageId: bobs! }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.updateInboxMessage({ subscriberId: "ada", messageId: id!, change: InboxChange.UNSPECIFIED }, call))).code).toBe(
      Code.InvalidArgument,
    );

    await client.deleteInboxMessage({ subscriberId: "ada", messageId: id! }, call);
    expect((await list(call, "ada")).messages).toEqual([]);
    expect((await rpcError(client.deleteInboxMessage({ subscriberId: "ada", messageId: id! }, call))).code).toBe(Code.NotFound);
  });

  it("snoozes: the message leaves the list until due, its return is scheduled, and the return brings it back unread, at the top", async () => {
    const { call, scope, subscriber } = setUp();
    const [id] = await create(call, subscriber, {});
    const [later] = await create(call, subscriber, {});
    const written = (await list(call, "ada")).messages.find((message) => message.id === id)!.createdAt!;
    const until = new Date(Date.now() + 60_000);
    const snoozed = (
      await client.updateInboxMessage({ subscriberId: "ada", messageId: id!, change: InboxChange.SNOOZE, snoozeUntil: timestampFromDate(until) }, call)
    ).message!;
    expect(timestampDate(snoozed.snoozedUntil!)).toEqual(until);
    expect(snoozed.seen).toBe(true);
    expect(scheduled.at(-1)).toEqual({ scope, id, until });
    expect((await list(call, "ada", { snoozed: false })).messages.map((message) => message.id)).toEqual([later]);
    expect((await list(call, "ada", { snoozed: true })).messages.map((message) => message.id)).toEqual([id]);

    // A return for another time (snoozed again since) changes nothing.
    expect((await client.returnSnoozedMessage({ messageId: id!, snoozedUntil: timestampFromDate(new Date(until.getTime() + 1)) }, call)).returned).toBe(false);
    announced.length = 0;
    expect((await client.returnSnoozedMessage({ messageId: id!, snoozedUntil: timestampFromDate(until) }, call)).returned).toBe(true);
    expect(announced).toEqual([
      { kind: "feeds", environmentId: scope.environmentId, keys: ["ada"] },
      { kind: "received", environmentId: scope.environmentId, keys: [`${id}:ada`] },
    ]);
    const listed = (await list(call, "ada", { snoozed: false })).messages;
    // Made anew, as Novu brings it back: above the message written after it.
    expect(listed.map((message) => message.id)).toEqual([id, later]);
    const back = listed[0]!;
    expect(back).toMatchObject({ id, seen: true, read: false });
    expect(back.snoozedUntil).toBeUndefined();
    // Delivered as it was written, as Novu's in-app messages are, and again as it came back, its new creation.
    expect(back.deliveredAt.map(timestampDate)).toEqual([timestampDate(written), timestampDate(back.createdAt!)]);

    // A due snooze counts as none even before its return runs.
    await fixture.pool.query("UPDATE messages.messages SET snoozed_until = now() - interval '1 second' WHERE id = $1", [id]);
    expect((await list(call, "ada", { snoozed: false })).messages.map((message) => message.id)).toEqual([id, later]);

    for (const snoozeUntil of [new Date(Date.now() - 1000), new Date(Date.now() + 25 * 3_600_000)]) {
      const error = await rpcError(
        client.updateInboxMessage({ subscriberId: "ada", messageId: id!, change: InboxChange.SNOOZE, snoozeUntil: timestampFromDate(snoozeUntil) }, call),
      );
      expect(error.code).toBe(Code.InvalidArgument);
    }
    expect(
      (await client.updateInboxMessage({ subscriberId: "ada", messageId: id!, change: InboxChange.UNSNOOZE }, call)).message!.snoozedUntil,
    ).toBeUndefined();
  });

  it("changes in bulk: by ids, by tags and data, and deletes", async () => {
    const { call, scope, subscriber } = setUp();
    const bob = subscribers.add(scope, "bob");
    const [a, b, c] = await create(call, subscriber, { tags: ["x"] }, { tags: ["x"], data: { team: "red" } }, { tags: ["y"] });
    await create(call, bob, { tags: ["x"] });
    const bulk = (change: messagesV1.InboxBulkChange, fields: object = {}) => client.bulkUpdateInboxMessages({ subscriberId: "ada", change, ...fields }, call);

    expect((await bulk(InboxBulkChange.SEEN, { messageIds: [a] })).changed).toBe(1);
    expect((await bulk(InboxBulkChange.SEEN, { messageIds: [a] })).changed).toBe(0);
    expect((await bulk(InboxBulkChange.READ, { filter: { tags: [{ anyOf: ["x"] }], data: { team: "red" } } })).changed).toBe(1);
    expect((await bulk(InboxBulkChange.ARCHIVE_READ)).changed).toBe(1);
    expect((await bulk(InboxBulkChange.ARCHIVE, { filter: { tags: [{ anyOf: ["x"] }] } })).changed).toBe(1);
    const states = Object.fromEntries((await list(call, "ada")).messages.map((message) => [message.id, [message.read, message.seen, message.archived]]));
    expect(states).toEqual({ [a!]: [true, true, true], [b!]: [true, true, true], [c!]: [false, false, false] });
    // Bulk flags of the filter are ignored: only tags and data select.
    expect((await bulk(InboxBulkChange.DELETE, { filter: { read: true, tags: [{ anyOf: ["y"] }] } })).changed).toBe(1);
    expect((await bulk(InboxBulkChange.DELETE, { messageIds: [a, b] })).changed).toBe(2);
    expect((await list(call, "ada")).messages).toEqual([]);
    expect((await list(call, "bob")).messages[0]).toMatchObject({ read: false, archived: false });
    expect((await rpcError(bulk(InboxBulkChange.READ, { messageIds: ["bad"] }))).code).toBe(Code.InvalidArgument);

    // Walked in chunks (of 7 rows here), every matching message changes once.
    const chunked = inMemoryClient(fixture, subscribers, 7, workflows);
    await create(call, subscriber, ...Array.from({ length: 20 }, () => ({ tags: ["many"] })));
    const all = (change: messagesV1.InboxBulkChange) =>
      chunked.bulkUpdateInboxMessages({ subscriberId: "ada", change, filter: { tags: [{ anyOf: ["many"] }] } }, call);
    expect((await all(InboxBulkChange.READ)).changed).toBe(20);
    expect((await all(InboxBulkChange.READ)).changed).toBe(0);
    expect((await all(InboxBulkChange.DELETE)).changed).toBe(20);
    expect((await rpcError(bulk(InboxBulkChange.UNSPECIFIED))).code).toBe(Code.InvalidArgument);
  });

  it("answers many subscribers' bells at once, capped, archived and snoozed messages left out", async () => {
    const { call, scope, subscriber } = setUp();
    const bob = subscribers.add(scope, "bob");
    const [, second, third] = await create(call, subscriber, { severity: Severity.HIGH }, { severity: Severity.HIGH }, { severity: Severity.MEDIUM }, {}, {});
    await client.updateInboxMessage({ subscriberId: "ada", messageId: second!, change: InboxChange.ARCHIVE }, call);
    await client.updateInboxMessage(
      { subscriberId: "ada", messageId: third!, change: InboxChange.SNOOZE, snoozeUntil: timestampFromDate(new Date(Date.now() + 60_000)) },
      call,
    );
    await create(call, bob, {}, {}, {});
    const reply = await client.batchGetInboxCounts({ subscriberIds: ["ada", "bob", "nobody", "ada"], limit: 2 }, call);
    const [ada, bobs, nobody, again] = reply.results;
    expect(ada?.result).toEqual({
      case: "counts",
      value: expect.objectContaining({
        subscriberId: "ada",
        unseen: expect.objectContaining({ count: 2, hasMore: true }),
        unread: expect.objectContaining({ count: 2, hasMore: true }),
        unreadHigh: expect.objectContaining({ count: 1, hasMore: false }),
        unreadMedium: expect.objectContaining({ count: 0, hasMore: false }),
        unreadLow: expect.objectContaining({ count: 0, hasMore: false }),
        unreadNone: expect.objectContaining({ count: 2, hasMore: false }),
      }),
    });
    expect(bobs?.result.case === "counts" && bobs.result.value.unread).toMatchObject({ count: 2, hasMore: true });
    expect(nobody?.result.case === "error" && nobody.result.value.code).toBe(Code.NotFound);
    expect(again?.result).toEqual(ada?.result);
  });

  it("announces the in-app messages it creates as received, and answers them by id", async () => {
    const { call, scope, subscriber } = setUp();
    const bob = subscribers.add(scope, "bob");
    const workflow = workflows.add(scope, "Welcome");
    announced.length = 0;
    const { messages } = await client.createMessages(
      {
        messages: [
          newMessage(subscriber, { templateId: workflow.id, tags: ["t"] }),
          newMessage(subscriber, { channel: commonV1.Channel.EMAIL, stepId: "email" }),
        ],
        groups: [{ message: newMessage(subscriber, { stepId: "group" }), recipients: [{ subscriberId: bob.id, externalSubscriberId: "bob" }] }],
      },
      call,
    );
    const [inApp, , grouped] = messages.map((message) => message.id);
    expect(announced.find((entry) => entry.kind === "received")).toEqual({
      kind: "received",
      environmentId: scope.environmentId,
      keys: [`${inApp}:ada`, `${grouped}:bob`],
    });
    // A repeat creates nothing, so announces no arrival.
    announced.length = 0;
    await client.createMessages({ messages: [newMessage(subscriber, { templateId: workflow.id, tags: ["t"], transactionId: "x" })] }, call);
    const repeatedCall = await client.createMessages(
      { messages: [newMessage(subscriber, { templateId: workflow.id, tags: ["t"], transactionId: "x" })] },
      call,
    );
    expect(repeatedCall.createdCount).toBe(0);
    expect(announced.filter((entry) => entry.kind === "received").at(-1)?.keys).toEqual([]);

    const found = await client.getInAppMessages({ messageIds: [grouped!, messages[1]!.id, inApp!, "bad", "0".repeat(24)] }, call);
    expect(found.messages.map((message) => message.id)).toEqual([grouped, inApp]);
    expect(found.messages[1]!.tags).toEqual(["t"]);
    expect(found.subscribers.map((item) => item.subscriberId).sort()).toEqual(["ada", "bob"]);
    expect(found.workflows.map((item) => item.name)).toEqual(["Welcome"]);
    expect((await client.getInAppMessages({ messageIds: [inApp!] }, setUp().call)).messages).toEqual([]);
  });
  it("scopes every Inbox call to the session's contexts: exactly its keys, none for none; the API may ask for any", async () => {
    const { call, subscriber } = setUp();
    const acme = ["tenant:acme"];
    const acmeApp = ["app:jira", "tenant:acme"];
    const [plain, ofAcme, ofAcmeApp, later] = await create(call, subscriber, {}, { contextKeys: acme }, { contextKeys: acmeApp }, {});
    // A fan-out writes its messages as groups: their keys are the group's.
    const recipients = [{ subscriberId: subscriber.id, externalSubscriberId: "ada" }];
    const { messages } = await client.createMessages({ groups: [{ message: newMessage(subscriber, { contextKeys: acme }), recipients }] }, call);
    const grouped = messages[0]!.id;
    const ids = async (filter: object) => (await list(call, "ada", filter)).messages.map((message) => message.id);
    expect(await ids({})).toEqual([later, plain]);
    expect(await ids({ contextKeys: acme })).toEqual([grouped, ofAcme]);
    // Keys are matched as a set, whatever their order; a subset or superset is another context.
    expect(await ids({ contextKeys: ["tenant:acme", "app:jira"] })).toEqual([ofAcmeApp]);
    expect(await ids({ contextKeys: ["tenant:globex"] })).toEqual([]);
    expect(await ids({ anyContext: true })).toEqual([grouped, later, ofAcmeApp, ofAcme, plain]);
    expect((await list(call, "ada", {}, {})).messages[0]!.contextKeys).toEqual([]);
    expect((await list(call, "ada", { contextKeys: acmeApp })).messages[0]!.contextKeys).toEqual(acmeApp);
    expect(await counts(call, "ada", [{ contextKeys: acme }, {}, { anyContext: true }])).toEqual([2, 2, 5]);

    const bell = async (contextKeys: string[]) =>
      (await client.batchGetInboxCounts({ subscriberIds: ["ada"], limit: 100, contextKeys }, call)).results[0]!.result.value as messagesV1.InboxCounts;
    expect((await bell(acme)).unread?.count).toBe(2);
    expect((await bell([])).unseen?.count).toBe(2);

    // A message of another context is not the session's to change or delete.
    const read = { subscriberId: "ada", messageId: ofAcme!, change: InboxChange.READ };
    expect((await rpcError(client.updateInboxMessage(read, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.updateInboxMessage({ ...read, contextKeys: ["tenant:globex"] }, call))).code).toBe(Code.NotFound);
    expect((await client.updateInboxMessage({ ...read, contextKeys: acme }, call)).message?.read).toBe(true);
    expect((await client.updateInboxMessage({ ...read, change: InboxChange.UNREAD, anyContext: true }, call)).message?.read).toBe(false);
    expect((await client.bulkUpdateInboxMessages({ subscriberId: "ada", change: InboxBulkChange.READ, filter: { contextKeys: acme } }, call)).changed).toBe(2);
    expect((await bell(acme)).unread?.count).toBe(0);
    expect((await bell([])).unread?.count).toBe(2);
    expect((await rpcError(client.deleteInboxMessage({ subscriberId: "ada", messageId: ofAcmeApp! }, call))).code).toBe(Code.NotFound);
    await client.deleteInboxMessage({ subscriberId: "ada", messageId: ofAcmeApp!, contextKeys: acmeApp }, call);
    expect(await ids({ anyContext: true })).toEqual([grouped, later, ofAcme, plain]);

    const refused = await rpcError(list(call, "ada", { contextKeys: ["no colon"] }));
    expect(refused.code).toBe(Code.InvalidArgument);
  });
});
