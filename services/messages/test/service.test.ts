import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { commonV1, messagesV1 } from "@notify/proto";
import { fieldErrorsOf } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_OFFSET, SUBSCRIBER_DELETE_BATCH } from "../src/service.js";
import { MAX_CREATE_BATCH } from "../src/validation.js";
import {
  callAs,
  countOne,
  feedOne,
  fakeSubscribers,
  fakeWorkflows,
  inMemoryClient,
  newMessage,
  newScope,
  openDatabase,
  rpcError,
  type Fixture,
} from "./fixtures.js";

const { MarkAs } = messagesV1;
const { Channel } = commonV1;

let fixture: Fixture;
const subscribers = fakeSubscribers();
const workflows = fakeWorkflows();
let client: ReturnType<typeof inMemoryClient>;
/** A service that walks mark-all in chunks of 7 rows, to exercise chunking on small data. */
let chunked: ReturnType<typeof inMemoryClient>;

beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture, subscribers, 10_000, workflows);
  chunked = inMemoryClient(fixture, subscribers, 7, workflows);
});
afterAll(() => fixture?.close());

/** A subscriber of a fresh environment, with the call options of that environment. */
function setUp(subscriberId = "ada") {
  const scope = newScope();
  return { scope, call: callAs(scope), subscriber: subscribers.add(scope, subscriberId) };
}

describe("MessageService (in memory)", () => {
  it("refuses calls without the scope headers", async () => {
    expect((await rpcError(countOne(client, { subscriberId: "x", limit: 1 }))).code).toBe(Code.Unauthenticated);
  });

  describe("CreateMessages", () => {
    it("creates a batch, one notification per transaction and subscriber, and nothing new on a repeat", async () => {
      const { call, subscriber, scope } = setUp();
      const bob = subscribers.add(scope, "bob");
      const shared = "txn-shared";
      const batch = [
        newMessage(subscriber, { transactionId: shared }),
        newMessage(subscriber, { transactionId: shared, channel: Channel.EMAIL, stepId: "email" }),
        newMessage(bob, { transactionId: shared }),
      ];
      const first = await client.createMessages({ messages: batch }, call);
      expect(first.messages.map((message) => message.created)).toEqual([true, true, true]);
      expect(first.messages[0]!.notificationId).toBe(first.messages[1]!.notificationId);
      expect(first.messages[2]!.notificationId).not.toBe(first.messages[0]!.notificationId);

      expect(first.messages.map((message) => message.writtenAt)).toEqual([undefined, undefined, undefined]);

      const again = await client.createMessages({ messages: [...batch, newMessage(bob, { transactionId: shared, stepId: "later" })] }, call);
      // Each message written before answers when: a send of it counts its age from then.
      const { rows: written } = await fixture.pool.query<{ id: string; created_at: Date }>("SELECT id, created_at FROM messages.messages WHERE id = ANY($1)", [
        first.messages.map((message) => message.id),
      ]);
      const writtenAt = new Map(written.map((row) => [row.id, row.created_at.getTime()]));
      expect(again.messages.slice(0, 3).map(({ writtenAt: at, ...rest }) => ({ ...rest, writtenAt: at && timestampDate(at).getTime() }))).toEqual(
        first.messages.map((message) => ({ ...message, created: false, writtenAt: writtenAt.get(message.id) })),
      );
      expect(again.messages[3]).toMatchObject({ created: true, notificationId: first.messages[2]!.notificationId });
      expect(again.messages[3]!.writtenAt).toBeUndefined();
      const count = await fixture.pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE environment_id = $1", [scope.environmentId]);
      expect(count.rows[0].n).toBe(4);
    });

    it("keeps one message per destination of a step (each chat channel, each endpoint), idempotently", async () => {
      const { call, subscriber } = setUp();
      const chat = (destination: string) => newMessage(subscriber, { transactionId: "txn-destinations", channel: Channel.CHAT, stepId: "chat", destination });
      const batch = [chat("integration-a"), chat("endpoint:room"), chat("integration-a")];
      const first = await client.createMessages({ messages: batch }, call);
      expect(first.messages.map((message) => message.created)).toEqual([true, true, false]);
      expect(first.messages[2]!.id).toBe(first.messages[0]!.id);
      const again = await client.createMessages({ messages: [chat("endpoint:room"), chat("integration-b")] }, call);
      expect(again.messages.map((message) => [message.id === first.messages[1]!.id, message.created])).toEqual([
        [true, false],
        [false, true],
      ]);
    });

    it("creates the messages of a group, one per recipient, after the call's single messages and idempotently", async () => {
      const { call, subscriber, scope } = setUp();
      const others = ["bob", "cy", "dee"].map((id) => subscribers.add(scope, id));
      const shared = newMessage(subscriber, { transactionId: "txn-group", payload: { order: 7 } });
      const single = newMessage(subscriber, { transactionId: "txn-group", stepId: "first" });
      const request = {
        messages: [single],
        groups: [
          {
            message: shared,
            recipients: [subscriber, ...others].map((recipient) => ({ subscriberId: recipient.id, externalSubscriberId: recipient.subscriberId })),
          },
        ],
      };
      const first = await client.createMessages(request, call);
      expect(first.messages.map((message) => message.created)).toEqual([true, true, true, true, true]);
      // One notification per transaction and subscriber, whether the message came alone or in a group.
      expect(first.messages[1]!.notificationId).toBe(first.messages[0]!.notificationId);
      expect(new Set(first.messages.slice(1).map((message) => message.notificationId)).size).toBe(4);
      const again = await client.createMessages(request, call);
      expect(again.messages).toEqual(first.messages.map((message) => ({ ...message, created: false, writtenAt: expect.anything() })));
      const rows = await fixture.pool.query(
        "SELECT external_subscriber_id, payload, content FROM messages.messages WHERE environment_id = $1 AND step_id = $2 ORDER BY external_subscriber_id",
        [scope.environmentId, shared.stepId],
      );
      expect(rows.rows).toEqual(["ada", "bob", "cy", "dee"].map((id) => ({ external_subscriber_id: id, payload: { order: 7 }, content: "Hello" })));
    });

    it("answers only how many were new when asked for the count, on a first call and on a partial repeat", async () => {
      const { call, subscriber, scope } = setUp();
      const others = ["bob", "cy"].map((id) => subscribers.add(scope, id));
      const recipients = (people: typeof others) => people.map((recipient) => ({ subscriberId: recipient.id, externalSubscriberId: recipient.subscriberId }));
      const message = newMessage(subscriber, { transactionId: "txn-count" });
      const first = await client.createMessages({ groups: [{ message, recipients: recipients(others) }], countOnly: true }, call);
      expect(first).toMatchObject({ createdCount: 2, messages: [] });
      // A repeat that adds one recipient goes the conflict-skipping way and counts only that one.
      const again = await client.createMessages({ groups: [{ message, recipients: recipients([...others, subscriber]) }], countOnly: true }, call);
      expect(again).toMatchObject({ createdCount: 1, messages: [] });
      const full = await client.createMessages({ groups: [{ message, recipients: recipients([subscriber]) }] }, call);
      expect(full.createdCount).toBe(0);
      expect(full.messages.map((created) => created.created)).toEqual([false]);
      const count = await fixture.pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE environment_id = $1", [scope.environmentId]);
      expect(count.rows[0].n).toBe(3);
    });

    it("names the invalid fields of a group and its recipients, and writes nothing", async () => {
      const { call, subscriber, scope } = setUp();
      const error = await rpcError(
        client.createMessages(
          {
            groups: [
              {
                message: newMessage(subscriber, { stepId: "" }),
                recipients: [
                  { subscriberId: subscriber.id, externalSubscriberId: "" },
                  { subscriberId: "nope", externalSubscriberId: "x" },
                ],
              },
            ],
          },
          call,
        ),
      );
      expect(error.code).toBe(Code.InvalidArgument);
      expect(Object.keys(fieldErrorsOf(error) ?? {}).sort()).toEqual([
        "groups[0].message.stepId",
        "groups[0].recipients[0].externalSubscriberId",
        "groups[0].recipients[1].subscriberId",
      ]);
      const count = await fixture.pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE environment_id = $1", [scope.environmentId]);
      expect(count.rows[0].n).toBe(0);
    });

    it("creates a key named twice in one call once, reporting the first as created", async () => {
      const { call, subscriber } = setUp();
      const message = newMessage(subscriber);
      const reply = await client.createMessages({ messages: [message, message] }, call);
      expect(reply.messages.map((created) => created.created)).toEqual([true, false]);
      expect(reply.messages[0]!.id).toBe(reply.messages[1]!.id);
    });

    it("creates each message once when the same batch arrives twice at the same time", async () => {
      const { call, subscriber, scope } = setUp();
      const others = ["bob", "cy"].map((id) => subscribers.add(scope, id));
      const request = {
        groups: [
          {
            message: newMessage(subscriber, { transactionId: "txn-twice" }),
            recipients: [subscriber, ...others].map((recipient) => ({ subscriberId: recipient.id, externalSubscriberId: recipient.subscriberId })),
          },
        ],
      };
      const [one, two] = await Promise.all([client.createMessages(request, call), client.createMessages(request, call)]);
      // Whichever call came second waited for the first and found its messages.
      expect(one.messages.map((message) => message.id)).toEqual(two.messages.map((message) => message.id));
      expect(one.messages.map((message, index) => Number(message.created) + Number(two.messages[index]!.created))).toEqual([1, 1, 1]);
      const count = await fixture.pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE environment_id = $1", [scope.environmentId]);
      expect(count.rows[0].n).toBe(3);
    });

    it("takes thousands of messages in one call", async () => {
      const { call, subscriber } = setUp();
      const reply = await client.createMessages({ messages: Array.from({ length: 5_000 }, () => newMessage(subscriber)) }, call);
      expect(new Set(reply.messages.map((message) => message.id)).size).toBe(5_000);
      expect(await countOne(client, { subscriberId: "ada", limit: 1000 }, call)).toBe(1000);
    });

    it("names every invalid field of every message, and writes nothing", async () => {
      const { call, subscriber, scope } = setUp();
      const error = await rpcError(
        client.createMessages(
          {
            messages: [
              newMessage(subscriber),
              newMessage(subscriber, {
                transactionId: "",
                subscriberId: "not-an-id",
                channel: Channel.UNSPECIFIED,
                content: { case: "blocks", value: { blocks: [{ type: "image", content: "x", textAlign: "top" }] } },
                cta: { type: "popup", action: { status: "later", buttons: [{ type: "tertiary", content: "x" }] } },
              }),
            ],
          },
          call,
        ),
      );
      expect(error.code).toBe(Code.InvalidArgument);
      expect(Object.keys(fieldErrorsOf(error)!).sort()).toEqual([
        "messages[1].channel",
        "messages[1].content[0].styles.textAlign",
        "messages[1].content[0].type",
        "messages[1].cta.action.buttons[0].type",
        "messages[1].cta.action.status",
        "messages[1].cta.type",
        "messages[1].subscriberId",
        "messages[1].transactionId",
      ]);
      const count = await fixture.pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE environment_id = $1", [scope.environmentId]);
      expect(count.rows[0].n).toBe(0);
    });

    it(`refuses more than ${MAX_CREATE_BATCH} messages per call`, async () => {
      const { call, subscriber } = setUp();
      const message = newMessage(subscriber);
      const error = await rpcError(client.createMessages({ messages: Array.from({ length: MAX_CREATE_BATCH + 1 }, () => message) }, call));
      expect(error.code).toBe(Code.InvalidArgument);
    });
  });

  describe("subscriber-facing calls", () => {
    it("answer NOT_FOUND for an unknown subscriber", async () => {
      const { call } = setUp();
      const attempts = [
        client.markMessages({ subscriberId: "ghost", messageIds: ["64b7f0c2a1b2c3d4e5f60718"], markAs: MarkAs.READ }, call),
        client.markAllMessages({ subscriberId: "ghost", markAs: MarkAs.READ }, call),
        countOne(client, { subscriberId: "ghost", limit: 10 }, call),
        feedOne(client, { subscriberId: "ghost", limit: 10 }, call),
      ];
      for (const attempt of attempts) expect((await rpcError(attempt)).code).toBe(Code.NotFound);
    });

    it("do not see a subscriber of another environment", async () => {
      const { subscriber } = setUp("shared-name");
      const other = newScope();
      expect((await rpcError(countOne(client, { subscriberId: subscriber.subscriberId, limit: 10 }, callAs(other)))).code).toBe(Code.NotFound);
    });

    it("share one subscriber lookup among the calls that arrive together", async () => {
      const { call, scope } = setUp();
      for (let index = 0; index < 20; index++) subscribers.add(scope, `together-${index}`);
      const before = subscribers.calls.length;
      const counts = await Promise.all(Array.from({ length: 20 }, (_, index) => countOne(client, { subscriberId: `together-${index}`, limit: 5 }, call)));
      expect(counts).toEqual(Array(20).fill(0));
      expect(subscribers.calls.length - before).toBe(1);
    });

    it("counts by read state and feeds too, each alone in a batch with the unseen counts", async () => {
      const { call, scope } = setUp();
      const cleo = subscribers.add(scope, "cleo");
      const written = await client.createMessages(
        {
          messages: [
            newMessage(cleo, { stepId: "a", feedIdentifier: "news" }),
            newMessage(cleo, { stepId: "b", feedIdentifier: "news" }),
            newMessage(cleo, { stepId: "c", feedIdentifier: "billing" }),
            newMessage(cleo, { stepId: "d" }),
          ],
        },
        call,
      );
      const [first, second] = written.messages.map((message) => message.id);
      await client.markMessages({ subscriberId: "cleo", messageIds: [first!], markAs: messagesV1.MarkAs.READ }, call);
      await client.markMessages({ subscriberId: "cleo", messageIds: [second!], markAs: messagesV1.MarkAs.SEEN }, call);
      const reply = await client.batchCountMessages(
        {
          counts: [
            { subscriberId: "cleo", limit: 100 },
            { subscriberId: "cleo", limit: 100, read: false },
            { subscriberId: "cleo", limit: 100, read: true },
            { subscriberId: "cleo", limit: 100, seen: false, feedIdentifiers: ["news"] },
            { subscriberId: "cleo", limit: 100, read: false, feedIdentifiers: ["news", "billing"] },
            { subscriberId: "cleo", limit: 100, seen: true, read: false },
            { subscriberId: "cleo", limit: 1, read: false },
          ],
        },
        call,
      );
      expect(reply.results.map((result) => (result.result.case === "count" ? result.result.value : result.result.value!.code))).toEqual([2, 3, 1, 0, 2, 1, 1]);
    });

    it("BatchCountMessages answers each count alone, with one lookup and one statement for the batch", async () => {
      const { call, scope, subscriber } = setUp();
      const bob = subscribers.add(scope, "bob");
      await client.createMessages({ messages: [newMessage(subscriber), newMessage(subscriber), newMessage(bob)] }, call);
      const before = subscribers.calls.length;
      const reply = await client.batchCountMessages(
        {
          counts: [
            { subscriberId: "ada", limit: 100 },
            { subscriberId: "ghost", limit: 100 },
            { subscriberId: "bob", limit: 100 },
            { subscriberId: "ada", limit: 1 },
            { subscriberId: "ada", limit: 0 },
            { subscriberId: "ada", limit: 100, seen: true },
            { subscriberId: "ada", limit: 100 },
          ],
        },
        call,
      );
      expect(subscribers.calls.length - before).toBe(1);
      expect(reply.results.map((result) => (result.result.case === "count" ? result.result.value : result.result.value!.code))).toEqual([
        2,
        Code.NotFound,
        1,
        1,
        Code.InvalidArgument,
        0,
        2,
      ]);
    });

    it("BatchGetFeed answers each page alone (a bad one fails alone), with one subscriber lookup for the batch", async () => {
      const { call, scope, subscriber } = setUp();
      const bob = subscribers.add(scope, "bob");
      const created = await client.createMessages({ messages: [newMessage(subscriber), newMessage(subscriber), newMessage(bob)] }, call);
      const before = subscribers.calls.length;
      const reply = await client.batchGetFeed(
        {
          feeds: [
            { subscriberId: "ada", limit: 1 },
            { subscriberId: "ghost", limit: 10 },
            { subscriberId: "bob", limit: 10 },
            { subscriberId: "ada", limit: 101 },
            { subscriberId: "ada", limit: 10, feedIdentifiers: ["news\u0000"] },
          ],
        },
        call,
      );
      expect(subscribers.calls.length - before).toBe(1);
      const [ada, ghost, bobFeed, tooLong, nul] = reply.results.map((result) => result.result);
      expect(nul?.case === "error" && nul.value.code).toBe(Code.InvalidArgument);
      expect(ada?.case === "feed" && ada.value.messages.map((message) => message.id)).toEqual([created.messages[1]!.id]);
      expect(ada?.case === "feed" && [ada.value.hasMore, ada.value.totalCount, ada.value.subscriber?.subscriberId]).toEqual([true, 1, "ada"]);
      expect(ghost?.case === "error" && ghost.value.code).toBe(Code.NotFound);
      expect(bobFeed?.case === "feed" && bobFeed.value.messages.map((message) => message.id)).toEqual([created.messages[2]!.id]);
      expect(tooLong?.case === "error" && tooLong.value.code).toBe(Code.InvalidArgument);
    });

    it("keep answering feeds and counts after a migration adds a column to the table they read", async () => {
      const { call, subscriber } = setUp();
      await client.createMessages({ messages: [newMessage(subscriber), newMessage(subscriber)] }, call);
      const read = async () => {
        const feed = await feedOne(client, { subscriberId: "ada", limit: 10 }, call);
        const count = await countOne(client, { subscriberId: "ada", limit: 10 }, call);
        return [feed.messages.length, feed.totalCount, count];
      };
      // Each prepared-read connection holds its statements from here on.
      await Promise.all([read(), read(), read()]);
      await fixture.pool.query("ALTER TABLE messages.messages ADD COLUMN rolling_deploy_probe text");
      try {
        for (let index = 0; index < 3; index++) expect(await read()).toEqual([2, 2, 2]);
      } finally {
        await fixture.pool.query("ALTER TABLE messages.messages DROP COLUMN rolling_deploy_probe");
      }
    });

    it("BatchGetFeed and ListMessages carry the workflows of their messages, one lookup per reply, deleted ones absent and not asked for again", async () => {
      const { call, scope, subscriber } = setUp();
      const bob = subscribers.add(scope, "bob");
      const welcome = workflows.add(scope, "Welcome");
      const digest = workflows.add(scope, "Digest");
      const gone = "64b7f0c2a1b2c3d4e5f6dead";
      await client.createMessages(
        {
          messages: [
            newMessage(subscriber, { templateId: welcome.id }),
            newMessage(subscriber, { templateId: digest.id }),
            newMessage(subscriber, { templateId: welcome.id }),
            newMessage(bob, { templateId: gone }),
            newMessage(bob, { templateId: digest.id }),
          ],
        },
        call,
      );
      const before = workflows.calls.length;
      const feeds = [
        { subscriberId: "ada", limit: 10 },
        { subscriberId: "ghost", limit: 10 },
        { subscriberId: "bob", limit: 1 },
      ];
      const reply = await client.batchGetFeed({ feeds }, call);
      expect(workflows.calls.length - before).toBe(1);
      expect(new Set(workflows.calls.at(-1)!.ids)).toEqual(new Set([welcome.id, digest.id]));
      const [ada, , bobFeed] = reply.results.map((result) => (result.result.case === "feed" ? result.result.value : undefined));
      expect(ada!.workflows.map((workflow) => workflow.id).sort()).toEqual([welcome.id, digest.id].sort());
      expect(bobFeed!.messages.map((message) => message.templateId)).toEqual([digest.id]);
      expect(bobFeed!.workflows.map((workflow) => workflow.name)).toEqual(["Digest"]);

      const listed = await client.listMessages({ limit: 10, subscriberId: "bob" }, call);
      expect(workflows.calls.length - before).toBe(2);
      expect(listed.messages.map((message) => message.templateId)).toEqual([digest.id, gone]);
      expect(listed.workflows.map((workflow) => workflow.id)).toEqual([digest.id]);
      const empty = workflows.calls.length;
      await feedOne(client, { subscriberId: "ada", limit: 10, page: 5 }, call);
      expect(workflows.calls.length).toBe(empty);
      // A workflow found absent is not asked for again: deleted ones never come back.
      await client.listMessages({ limit: 10, subscriberId: "bob" }, call);
      expect(workflows.calls.at(-1)!.ids).toEqual([digest.id]);
    });

    it.each([
      ["markAs unspecified", { messageIds: ["64b7f0c2a1b2c3d4e5f60718"], markAs: MarkAs.UNSPECIFIED }, "markAs"],
      ["no ids", { messageIds: [], markAs: MarkAs.READ }, "messageId"],
      ["1001 ids", { messageIds: Array(1001).fill("64b7f0c2a1b2c3d4e5f60718"), markAs: MarkAs.READ }, "messageId"],
      ["a malformed id", { messageIds: ["nope"], markAs: MarkAs.READ }, "messageId"],
    ])("MarkMessages refuses %s", async (_, request, field) => {
      const { call } = setUp();
      const error = await rpcError(client.markMessages({ subscriberId: "ada", ...request }, call));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(fieldErrorsOf(error)).toHaveProperty(field);
    });

    type Call = ReturnType<typeof callAs>;
    // A batch item's error carries its code and message ("Validation failed"), not field errors.
    it.each([
      ["limit 0", (call: Call) => countOne(client, { subscriberId: "ada", limit: 0 }, call)],
      ["limit 1001", (call: Call) => countOne(client, { subscriberId: "ada", limit: 1001 }, call)],
      ["a feed page of 101", (call: Call) => feedOne(client, { subscriberId: "ada", limit: 101 }, call)],
      ["a feed page past the deepest offset", (call: Call) => feedOne(client, { subscriberId: "ada", limit: 100, page: MAX_OFFSET / 100 + 1 }, call)],
    ])("refuse a batch item of %s", async (_, attempt) => {
      const { call } = setUp();
      expect((await rpcError(attempt(call))).code).toBe(Code.InvalidArgument);
    });

    it.each([
      ["a list page of 1001", (call: Call) => client.listMessages({ limit: 1001 }, call), "limit"],
      [
        "31 feeds",
        (call: Call) => client.markAllMessages({ subscriberId: "ada", markAs: MarkAs.SEEN, feedIdentifiers: Array(31).fill("f") }, call),
        "feedIdentifier",
      ],
      ["an unknown channel", (call: Call) => client.deleteTransactionMessages({ transactionId: "t", channel: 9 as commonV1.Channel }, call), "channel"],
      ["a malformed message id", (call: Call) => client.deleteMessage({ messageId: "nope" }, call), "messageId"],
    ])("refuse %s", async (_, attempt, field) => {
      const { call } = setUp();
      const error = await rpcError(attempt(call));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(fieldErrorsOf(error)).toHaveProperty(field);
    });
  });

  describe("MarkAllMessages", () => {
    it("walks many chunks and counts every changed message exactly once", async () => {
      const { call, subscriber } = setUp();
      const created = await client.createMessages({ messages: Array.from({ length: 50 }, () => newMessage(subscriber)) }, call);
      await client.markMessages({ subscriberId: "ada", messageIds: created.messages.slice(0, 5).map((message) => message.id), markAs: MarkAs.SEEN }, call);
      expect((await chunked.markAllMessages({ subscriberId: "ada", markAs: MarkAs.SEEN }, call)).changed).toBe(45);
      expect((await chunked.markAllMessages({ subscriberId: "ada", markAs: MarkAs.SEEN }, call)).changed).toBe(0);
      expect((await chunked.markAllMessages({ subscriberId: "ada", markAs: MarkAs.READ }, call)).changed).toBe(50);
      expect(await countOne(client, { subscriberId: "ada", seen: true, limit: 1000 }, call)).toBe(50);
    });

    it("splits the work exactly between concurrent mark-alls of the same subscriber", async () => {
      const { call, subscriber } = setUp();
      await client.createMessages({ messages: Array.from({ length: 300 }, () => newMessage(subscriber)) }, call);
      const replies = await Promise.all(Array.from({ length: 4 }, () => chunked.markAllMessages({ subscriberId: "ada", markAs: MarkAs.READ }, call)));
      expect(replies.reduce((sum, reply) => sum + reply.changed, 0)).toBe(300);
    });

    it("keeps other feeds and other channels as they are", async () => {
      const { call, subscriber } = setUp();
      await client.createMessages(
        {
          messages: [
            ...Array.from({ length: 10 }, () => newMessage(subscriber, { feedIdentifier: "news" })),
            ...Array.from({ length: 10 }, () => newMessage(subscriber, { feedIdentifier: "alerts" })),
            newMessage(subscriber, { channel: Channel.EMAIL, stepId: "email", feedIdentifier: "news" }),
          ],
        },
        call,
      );
      expect((await chunked.markAllMessages({ subscriberId: "ada", markAs: MarkAs.READ, feedIdentifiers: ["news"] }, call)).changed).toBe(10);
      expect(await countOne(client, { subscriberId: "ada", limit: 100 }, call)).toBe(10);
      const email = await client.listMessages({ limit: 10, channel: Channel.EMAIL, subscriberId: "ada" }, call);
      expect(email.messages[0]).toMatchObject({ read: false, seen: false });
    });
  });
  describe("DeleteSubscriberMessages", () => {
    it("deletes the subscriber's messages of every channel a batch at a time, and nobody else's", async () => {
      const { call, subscriber, scope } = setUp();
      const bob = subscribers.add(scope, "bob");
      const inApp = SUBSCRIBER_DELETE_BATCH + 5;
      await client.createMessages(
        {
          messages: [
            ...Array.from({ length: inApp }, () => newMessage(subscriber)),
            ...Array.from({ length: 3 }, () => newMessage(subscriber, { channel: Channel.EMAIL, stepId: "email" })),
            newMessage(bob),
            newMessage(bob, { channel: Channel.SMS, stepId: "sms" }),
          ],
        },
        call,
      );
      const request = { internalSubscriberId: subscriber.id, subscriberId: "ada" };
      const first = await client.deleteSubscriberMessages(request, call);
      expect(first).toMatchObject({ deleted: SUBSCRIBER_DELETE_BATCH + 3, hasMore: true });
      expect(await client.deleteSubscriberMessages({ ...request, after: first.next! }, call)).toMatchObject({ deleted: 5, hasMore: false });
      expect(await client.deleteSubscriberMessages(request, call)).toMatchObject({ deleted: 0, hasMore: false });
      const left = await fixture.pool.query<{ external_subscriber_id: string; channel: string }>(
        "SELECT external_subscriber_id, channel FROM messages.messages WHERE environment_id = $1 ORDER BY channel",
        [scope.environmentId],
      );
      expect(left.rows).toEqual([
        { external_subscriber_id: "bob", channel: "in_app" },
        { external_subscriber_id: "bob", channel: "sms" },
      ]);
    });

    it("walks the subscriber's other messages on from where the call before stopped", async () => {
      const { call, subscriber, scope } = setUp();
      const emails = SUBSCRIBER_DELETE_BATCH + 3;
      await client.createMessages(
        { messages: Array.from({ length: emails }, () => newMessage(subscriber, { channel: Channel.EMAIL, stepId: "email" })) },
        call,
      );
      const request = { internalSubscriberId: subscriber.id, subscriberId: "ada" };
      const first = await client.deleteSubscriberMessages(request, call);
      expect(first).toMatchObject({ deleted: SUBSCRIBER_DELETE_BATCH, hasMore: true, next: expect.stringMatching(/^[0-9a-f]{24}@/) });
      const second = await client.deleteSubscriberMessages({ ...request, after: first.next! }, call);
      expect(second).toMatchObject({ deleted: 3, hasMore: false });
      const left = await fixture.pool.query("SELECT count(*)::int AS n FROM messages.messages WHERE environment_id = $1", [scope.environmentId]);
      expect(left.rows[0].n).toBe(0);
      const malformed = await rpcError(client.deleteSubscriberMessages({ ...request, after: "somewhere" }, call));
      expect(malformed.code).toBe(Code.InvalidArgument);
    });

    it("deletes nothing of another environment, and refuses an id no subscriber has", async () => {
      const { call, subscriber } = setUp();
      await client.createMessages({ messages: [newMessage(subscriber)] }, call);
      const other = setUp();
      expect(await client.deleteSubscriberMessages({ internalSubscriberId: subscriber.id, subscriberId: "ada" }, other.call)).toMatchObject({ deleted: 0 });
      expect(await countOne(client, { subscriberId: "ada", limit: 10 }, call)).toBe(1);
      const refused = await rpcError(client.deleteSubscriberMessages({ internalSubscriberId: "ada", subscriberId: "ada" }, call));
      expect(refused.code).toBe(Code.InvalidArgument);
    });
  });
});
