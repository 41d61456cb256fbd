import { commonV1, messagesV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSubscriber, newMessage, nextTransactionId, seeder, unknownMessageId, type Seeder, type SeededSubscriber } from "./messages-fixtures.js";
import { startStack, type Data, type Stack } from "./stack.js";

const OBJECT_ID = /^[0-9a-f]{24}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let stack: Stack;
let seed: Seeder;
let subscriberCount = 0;

beforeAll(async () => {
  stack = await startStack();
  const first = await createSubscriber(stack, "seed-scope");
  seed = seeder(stack, first.scope);
});
afterAll(async () => {
  seed?.close();
  await stack?.stop();
});

/** A fresh subscriber per test, so tests do not see each other's messages. */
const freshSubscriber = () => createSubscriber(stack, `subscriber-${++subscriberCount}`);

const unseen = async (subscriberId: string, query = "") => {
  const reply = await stack.request<Data<{ count: number }>>("GET", `/v1/subscribers/${subscriberId}/notifications/unseen${query}`);
  expect(reply.status).toBe(200);
  return reply.body.data.count;
};

const markAs = (subscriberId: string, body: unknown) => stack.request("POST", `/v1/subscribers/${subscriberId}/messages/mark-as`, body);
const markAll = (subscriberId: string, body: unknown) => stack.request("POST", `/v1/subscribers/${subscriberId}/messages/mark-all`, body);

async function messageOf(subscriber: SeededSubscriber, id: string) {
  const reply = await stack.request<Data<{ _id: string }[]>>("GET", `/v1/messages?subscriberId=${subscriber.subscriberId}&limit=1000`);
  return reply.body.data.find((message) => message._id === id);
}

describe("creating messages through the batch RPC", () => {
  it("creates a batch in one call and creates nothing new when the call is repeated", async () => {
    const ada = await freshSubscriber();
    const batch = [newMessage(ada), newMessage(ada, { channel: commonV1.Channel.EMAIL, stepId: "step-email", email: "ada@example.com" })];
    const first = await seed.create(batch);
    expect(first.messages.map((message) => message.created)).toEqual([true, true]);
    const again = await seed.create(batch);
    expect(again.messages).toEqual(first.messages.map((message) => ({ ...message, created: false, writtenAt: expect.anything() })));
    const listed = await stack.request("GET", `/v1/messages?subscriberId=${ada.subscriberId}`);
    expect(listed.body.totalCount).toBe(2);
  });

  it("maps every field of the spec's Message", async () => {
    const ada = await freshSubscriber();
    const transactionId = nextTransactionId();
    await seed.create([
      newMessage(ada, {
        transactionId,
        channel: commonV1.Channel.EMAIL,
        stepId: "step-email",
        content: {
          case: "blocks",
          value: {
            blocks: [
              { type: "text", content: "Hi", textAlign: "left" },
              { type: "button", content: "Go", url: "https://x.test" },
            ],
          },
        },
        subject: "Welcome",
        email: "ada@example.com",
        status: messagesV1.MessageStatus.WARNING,
        errorId: "mail_unexpected_error",
        errorText: "Subscriber does not have an email address",
        deliveredAt: [{ seconds: 1_700_000_000n, nanos: 0 }],
        deviceTokens: ["t1"],
      }),
    ]);
    const reply = await stack.request("GET", `/v1/messages?transactionId=${transactionId}`);
    expect(reply.status).toBe(200);
    const [message] = reply.body.data;
    expect(message).toMatchObject({
      _templateId: "64b7f0c2a1b2c3d4e5f60718",
      _messageTemplateId: "64b7f0c2a1b2c3d4e5f60719",
      _subscriberId: ada.id,
      templateIdentifier: "welcome",
      transactionId,
      channel: "email",
      content: [
        { type: "text", content: "Hi", styles: { textAlign: "left" } },
        { type: "button", content: "Go", url: "https://x.test" },
      ],
      subject: "Welcome",
      email: "ada@example.com",
      providerId: "novu",
      deviceTokens: ["t1"],
      read: false,
      seen: false,
      status: "warning",
      errorId: "mail_unexpected_error",
      errorText: "Subscriber does not have an email address",
      deliveredAt: ["2023-11-14T22:13:20.000Z"],
      cta: {
        type: "redirect",
        data: { url: "https://example.com/welcome" },
        action: { status: "pending", buttons: [{ type: "primary", content: "Open", resultContent: "Opened" }] },
      },
      _feedId: "64b7f0c2a1b2c3d4e5f60720",
      payload: { name: "Ada" },
      overrides: { email: { subject: "x" } },
      subscriber: { _id: ada.id, subscriberId: ada.subscriberId, firstName: "First" },
    });
    for (const field of ["_id", "_environmentId", "_organizationId", "_notificationId"]) expect(message[field]).toMatch(OBJECT_ID);
    expect(message.createdAt).toMatch(ISO);
    expect(message).not.toHaveProperty("lastSeenDate");
    expect(message).not.toHaveProperty("template");
  });
});

describe("POST /v1/subscribers/{subscriberId}/messages/mark-as", () => {
  it("read sets read and seen and stamps both dates", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    const reply = await markAs(ada.subscriberId, { messageId: id, markAs: "read" });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toHaveLength(1);
    expect(reply.body.data[0]).toMatchObject({ _id: id, read: true, seen: true });
    expect(reply.body.data[0].lastReadDate).toMatch(ISO);
    expect(reply.body.data[0].lastSeenDate).toMatch(ISO);
  });

  it("seen sets seen only", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    const [message] = (await markAs(ada.subscriberId, { messageId: id, markAs: "seen" })).body.data;
    expect(message).toMatchObject({ read: false, seen: true });
    expect(message.lastSeenDate).toMatch(ISO);
    expect(message).not.toHaveProperty("lastReadDate");
  });

  it("unread clears read and leaves the message seen", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    await markAs(ada.subscriberId, { messageId: id, markAs: "read" });
    const [message] = (await markAs(ada.subscriberId, { messageId: id, markAs: "unread" })).body.data;
    expect(message).toMatchObject({ read: false, seen: true });
    const [fresh] = (await markAs(ada.subscriberId, { messageId: (await seed.inApp(ada, 1))[0], markAs: "unread" })).body.data;
    expect(fresh).toMatchObject({ read: false, seen: true });
    expect(fresh.lastSeenDate).toMatch(ISO);
  });

  it("unseen clears seen and read", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    await markAs(ada.subscriberId, { messageId: id, markAs: "read" });
    const [message] = (await markAs(ada.subscriberId, { messageId: id, markAs: "unseen" })).body.data;
    expect(message).toMatchObject({ read: false, seen: false });
  });

  it("takes an array or a comma-separated list, in any channel, and returns them in the order given", async () => {
    const ada = await freshSubscriber();
    const [first, second] = await seed.inApp(ada, 2);
    const email = (await seed.create([newMessage(ada, { channel: commonV1.Channel.EMAIL, stepId: "email" })])).messages[0]!.id;
    const array = await markAs(ada.subscriberId, { messageId: [second, first, email], markAs: "seen" });
    expect(array.body.data.map((message) => message._id)).toEqual([second, first, email]);
    const list = await markAs(ada.subscriberId, { messageId: `${first}, ${second}`, markAs: "read" });
    expect(list.body.data.map((message) => [message._id, message.read])).toEqual([
      [first, true],
      [second, true],
    ]);
  });

  it("ignores ids of other subscribers, of other environments and unknown ones", async () => {
    const ada = await freshSubscriber();
    const bob = await freshSubscriber();
    const [adaMessage] = await seed.inApp(ada, 1);
    const [bobMessage] = await seed.inApp(bob, 1);
    const production = await stack.createKey("Production");
    const carol = await createSubscriber(stack, ada.subscriberId, production);
    const productionSeed = seeder(stack, carol.scope);
    const [productionMessage] = await productionSeed.inApp(carol, 1);
    productionSeed.close();

    const reply = await markAs(ada.subscriberId, { messageId: [adaMessage, bobMessage, productionMessage, unknownMessageId()], markAs: "read" });
    expect(reply.status).toBe(201);
    expect(reply.body.data.map((message) => message._id)).toEqual([adaMessage]);
    expect(await unseen(bob.subscriberId)).toBe(1);
    const productionCount = await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/unseen`, undefined, {
      authorization: `ApiKey ${production}`,
    });
    expect(productionCount.body.data.count).toBe(1);
    expect((await markAs(ada.subscriberId, { messageId: bobMessage, markAs: "read" })).body.data).toEqual([]);
  });

  it.each([
    ["an unknown markAs", { messageId: "64b7f0c2a1b2c3d4e5f60718", markAs: "archived" }, "markAs"],
    ["no markAs", { messageId: "64b7f0c2a1b2c3d4e5f60718" }, "markAs"],
    ["no messageId", { markAs: "read" }, "messageId"],
    ["an empty messageId", { messageId: "", markAs: "read" }, "messageId"],
    ["an empty array", { messageId: [], markAs: "read" }, "messageId"],
    ["a number", { messageId: 5, markAs: "read" }, "messageId"],
    ["1001 ids", { messageId: Array.from({ length: 1001 }, () => "64b7f0c2a1b2c3d4e5f60718"), markAs: "read" }, "messageId"],
  ])("answers 422 for %s and changes nothing", async (_, body, field) => {
    const ada = await freshSubscriber();
    await seed.inApp(ada, 2);
    const reply = await markAs(ada.subscriberId, body);
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toHaveProperty(field);
    expect(await unseen(ada.subscriberId)).toBe(2);
  });

  it("answers 422 for a malformed id even beside valid ones, changing nothing", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    const reply = await markAs(ada.subscriberId, { messageId: [id, "not-an-id"], markAs: "read" });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.messageId.value).toBe("not-an-id");
    expect(await unseen(ada.subscriberId)).toBe(1);
  });

  it("answers a repeat with the same idempotency key with the first answer, byte for byte", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    const send = () =>
      fetch(`${stack.url}/v1/subscribers/${ada.subscriberId}/messages/mark-as`, {
        method: "POST",
        headers: { authorization: `ApiKey ${stack.key}`, "content-type": "application/json", "idempotency-key": `mark-${id}` },
        body: JSON.stringify({ messageId: id, markAs: "read" }),
      });
    const first = await send();
    const firstText = await first.text();
    expect(JSON.parse(firstText).data[0]).toMatchObject({ _id: id, read: true, payload: { name: "Ada" }, overrides: { email: { subject: "x" } } });
    await markAs(ada.subscriberId, { messageId: id, markAs: "unread" });
    const repeat = await send();
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get("idempotency-replay")).toBe("true");
    expect(repeat.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await repeat.text()).toBe(firstText);
  });

  it("answers 400 for a body that is not JSON", async () => {
    const ada = await freshSubscriber();
    const reply = await stack.request("POST", `/v1/subscribers/${ada.subscriberId}/messages/mark-as`, "{not json");
    expect(reply.status).toBe(400);
  });
});

describe("POST /v1/subscribers/{subscriberId}/messages/mark-all", () => {
  it("changes only in-app messages in the opposite state and returns how many changed (0 on a repeat)", async () => {
    const ada = await freshSubscriber();
    const ids = await seed.inApp(ada, 4);
    await seed.create([newMessage(ada, { channel: commonV1.Channel.SMS, stepId: "sms" })]);
    await markAs(ada.subscriberId, { messageId: ids[0], markAs: "seen" });

    const seen = await markAll(ada.subscriberId, { markAs: "seen" });
    expect(seen.status).toBe(201);
    expect(seen.body).toEqual({ data: 3 });
    expect((await markAll(ada.subscriberId, { markAs: "seen" })).body).toEqual({ data: 0 });

    expect((await markAll(ada.subscriberId, { markAs: "read" })).body).toEqual({ data: 4 });
    expect((await markAll(ada.subscriberId, { markAs: "read" })).body).toEqual({ data: 0 });
    expect((await markAll(ada.subscriberId, { markAs: "unread" })).body).toEqual({ data: 4 });
    expect((await markAll(ada.subscriberId, { markAs: "unseen" })).body).toEqual({ data: 4 });
    expect((await markAll(ada.subscriberId, { markAs: "unseen" })).body).toEqual({ data: 0 });
    const sms = (await stack.request("GET", `/v1/messages?subscriberId=${ada.subscriberId}&channel=sms`)).body.data[0];
    expect(sms).toMatchObject({ seen: false, read: false });
  });

  it("restricts to the given feed identifiers (string, comma list or array)", async () => {
    const ada = await freshSubscriber();
    await seed.inApp(ada, 2, { feedIdentifier: "news" });
    await seed.inApp(ada, 3, { feedIdentifier: "alerts" });
    await seed.inApp(ada, 1, { feedIdentifier: "billing" });
    expect((await markAll(ada.subscriberId, { markAs: "seen", feedIdentifier: "news" })).body.data).toBe(2);
    expect(await unseen(ada.subscriberId)).toBe(4);
    expect((await markAll(ada.subscriberId, { markAs: "seen", feedIdentifier: "alerts,unknown" })).body.data).toBe(3);
    expect((await markAll(ada.subscriberId, { markAs: "read", feedIdentifier: ["news", "billing"] })).body.data).toBe(3);
    expect(await unseen(ada.subscriberId)).toBe(0);
  });

  it("counts exactly over thousands of messages", async () => {
    const ada = await freshSubscriber();
    await seed.inApp(ada, 2_500);
    expect((await markAll(ada.subscriberId, { markAs: "seen" })).body.data).toBe(2_500);
    expect(await unseen(ada.subscriberId, "?seen=true&limit=1000")).toBe(1_000);
    expect(await unseen(ada.subscriberId)).toBe(0);
  });

  it.each([
    ["an unknown markAs", { markAs: "everything" }, "markAs"],
    ["no markAs", {}, "markAs"],
    ["31 feed identifiers", { markAs: "seen", feedIdentifier: Array.from({ length: 31 }, (_, index) => `feed-${index}`) }, "feedIdentifier"],
    ["a feedIdentifier that is not a string", { markAs: "seen", feedIdentifier: 3 }, "feedIdentifier"],
  ])("answers 422 for %s and changes nothing", async (_, body, field) => {
    const ada = await freshSubscriber();
    await seed.inApp(ada, 2);
    const reply = await markAll(ada.subscriberId, body);
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toHaveProperty(field);
    expect(await unseen(ada.subscriberId)).toBe(2);
  });
});

describe("GET /v1/subscribers/{subscriberId}/notifications/unseen", () => {
  it("counts in-app messages with seen = false by default, seen = true on request, capped at limit", async () => {
    const ada = await freshSubscriber();
    const ids = await seed.inApp(ada, 5);
    await seed.create([newMessage(ada, { channel: commonV1.Channel.PUSH, stepId: "push" })]);
    await markAs(ada.subscriberId, { messageId: ids.slice(0, 2), markAs: "seen" });
    expect(await unseen(ada.subscriberId)).toBe(3);
    expect(await unseen(ada.subscriberId, "?seen=false")).toBe(3);
    expect(await unseen(ada.subscriberId, "?seen=true")).toBe(2);
    expect(await unseen(ada.subscriberId, "?limit=2")).toBe(2);
    expect(await unseen(ada.subscriberId, "?limit=1000")).toBe(3);
    const reply = await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/unseen`);
    expect(reply.body).toEqual({ data: { count: 3 } });
  });

  it("is exact right after every mark-as, mark-all, new message and delete", async () => {
    const ada = await freshSubscriber();
    const ids = await seed.inApp(ada, 3);
    expect(await unseen(ada.subscriberId)).toBe(3);
    await markAs(ada.subscriberId, { messageId: ids[0], markAs: "read" });
    expect(await unseen(ada.subscriberId)).toBe(2);
    await markAs(ada.subscriberId, { messageId: ids[0], markAs: "unseen" });
    expect(await unseen(ada.subscriberId)).toBe(3);
    await seed.inApp(ada, 1);
    expect(await unseen(ada.subscriberId)).toBe(4);
    await markAll(ada.subscriberId, { markAs: "seen" });
    expect(await unseen(ada.subscriberId)).toBe(0);
    const [late] = await seed.inApp(ada, 1);
    expect(await unseen(ada.subscriberId)).toBe(1);
    await stack.request("DELETE", `/v1/messages/${late}`);
    expect(await unseen(ada.subscriberId)).toBe(0);
  });

  it("answers counts requested together each on its own, an unknown subscriber among them", async () => {
    const subscribers = await Promise.all(Array.from({ length: 6 }, () => freshSubscriber()));
    await Promise.all(subscribers.map((subscriber, index) => seed.inApp(subscriber, index)));
    const replies = await Promise.all(
      [...subscribers.map((subscriber) => subscriber.subscriberId), "nobody"].flatMap((subscriberId) => [
        stack.request("GET", `/v1/subscribers/${subscriberId}/notifications/unseen`),
        stack.request("GET", `/v1/subscribers/${subscriberId}/notifications/unseen?limit=2`),
      ]),
    );
    expect(replies.map((reply) => reply.body.data?.count ?? reply.status)).toEqual([0, 0, 1, 1, 2, 2, 3, 2, 4, 2, 5, 2, 404, 404]);
  });

  it.each([
    ["?limit=0", "limit", "must not be less than 1"],
    ["?limit=1001", "limit", "must not be greater than 1000"],
    ["?limit=abc", "limit", "must be a number"],
    ["?limit=1.5", "limit", "must be an integer"],
    ["?seen=maybe", "seen", "must be true or false"],
  ])("answers 422 for %s, saying what is wrong", async (query, field, message) => {
    const ada = await freshSubscriber();
    const reply = await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/unseen${query}`);
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toEqual({ [field]: { messages: [message], value: query.split("=")[1] } });
  });
});

describe("unknown subscribers", () => {
  it.each([
    ["POST", "/messages/mark-as", { messageId: "64b7f0c2a1b2c3d4e5f60718", markAs: "read" }],
    ["POST", "/messages/mark-all", { markAs: "read" }],
    ["GET", "/notifications/unseen", undefined],
    ["GET", "/notifications/feed", undefined],
  ])("answer 404 on %s %s", async (method, suffix, body) => {
    const reply = await stack.request(method, `/v1/subscribers/nobody${suffix}`, body);
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ statusCode: 404, message: "Subscriber 'nobody' was not found" });
  });
});

describe("text Postgres cannot hold", () => {
  it("answers 422 for a NUL character in a path, a query or a body, and changes nothing", async () => {
    const ada = await freshSubscriber();
    await seed.inApp(ada, 2);
    for (const [method, path, body] of [
      ["GET", "/v1/subscribers/%00/notifications/unseen"],
      ["GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed?feedIdentifier=%00`],
      ["GET", "/v1/messages?subscriberId=a%00"],
      ["DELETE", "/v1/messages/transaction/%00"],
      ["POST", `/v1/subscribers/${ada.subscriberId}/messages/mark-all`, { markAs: "seen", feedIdentifier: ["\u0000"] }],
    ] as const) {
      const reply = await stack.request(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(422);
    }
    expect(await unseen(ada.subscriberId)).toBe(2);
  });

  it("answers a mark-as naming a 100,000-character id with 422, at once, and the next request too", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    // The service's field error echoes the value: travelling back whole, its trailer was larger
    // than an HTTP/2 session takes, and this call and the next one waited for their deadlines.
    const started = Date.now();
    const reply = await markAs(ada.subscriberId, { messageId: "x".repeat(100_000), markAs: "read" });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.messageId.messages).toEqual(["each messageId must be a message id (24 hex characters)"]);
    expect((await markAs(ada.subscriberId, { messageId: id, markAs: "read" })).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("subscribers the messages service has already looked up", () => {
  // The messages service keeps subscribers it found; the subscribers service's change
  // announcements must make every one of these answers current at once, with no wait.
  it("are current right after the subscriber is changed, deleted and created again", async () => {
    const ada = await freshSubscriber();
    await seed.inApp(ada, 2);
    const feed = () => stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed`);
    expect(await unseen(ada.subscriberId)).toBe(2);
    expect((await feed()).body.data[0].subscriber.firstName).toBe("First");

    expect((await stack.request("PUT", `/v1/subscribers/${ada.subscriberId}`, { firstName: "Renamed" })).status).toBe(200);
    expect((await feed()).body.data[0].subscriber.firstName).toBe("Renamed");

    expect((await stack.request("DELETE", `/v1/subscribers/${ada.subscriberId}`)).status).toBe(200);
    expect((await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/unseen`)).status).toBe(404);
    expect((await feed()).status).toBe(404);

    // Created again under the same subscriberId: a new subscriber, without the old one's messages.
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: ada.subscriberId })).status).toBe(201);
    expect(await unseen(ada.subscriberId)).toBe(0);
    expect((await feed()).body.totalCount).toBe(0);
  });
});

describe("DELETE /v1/messages/transaction/{transactionId}", () => {
  async function transaction(subscribers: SeededSubscriber[]) {
    const transactionId = nextTransactionId();
    await seed.create(
      subscribers.flatMap((subscriber) => [
        newMessage(subscriber, { transactionId }),
        newMessage(subscriber, { transactionId, channel: commonV1.Channel.EMAIL, stepId: "email" }),
      ]),
    );
    return transactionId;
  }
  const listed = async (transactionId: string) =>
    (await stack.request<Data<{ channel: string }[]>>("GET", `/v1/messages?transactionId=${transactionId}`)).body.data;

  it("deletes the messages of one channel when a channel is given", async () => {
    const transactionId = await transaction([await freshSubscriber(), await freshSubscriber()]);
    const reply = await stack.request("DELETE", `/v1/messages/transaction/${transactionId}?channel=email`);
    expect(reply.status).toBe(204);
    expect(reply.body).toBeUndefined();
    expect((await listed(transactionId)).map((message) => message.channel)).toEqual(["in_app", "in_app"]);
  });

  it("deletes every message of the transaction without a channel, then answers 404", async () => {
    const transactionId = await transaction([await freshSubscriber()]);
    expect((await stack.request("DELETE", `/v1/messages/transaction/${transactionId}`)).status).toBe(204);
    expect(await listed(transactionId)).toEqual([]);
    const again = await stack.request("DELETE", `/v1/messages/transaction/${transactionId}`);
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ statusCode: 404, message: "Invalid transactionId or channel" });
  });

  it("answers 204 when the transaction has messages but none of that channel, deleting nothing, as Novu does", async () => {
    const transactionId = await transaction([await freshSubscriber()]);
    expect((await stack.request("DELETE", `/v1/messages/transaction/${transactionId}?channel=push`)).status).toBe(204);
    expect(await listed(transactionId)).toHaveLength(2);
    // A transaction without any message is not found, whatever the channel.
    expect((await stack.request("DELETE", `/v1/messages/transaction/${nextTransactionId()}?channel=push`)).status).toBe(404);
  });

  it("answers 422 for another channel value, deleting nothing", async () => {
    const transactionId = await transaction([await freshSubscriber()]);
    const reply = await stack.request("DELETE", `/v1/messages/transaction/${transactionId}?channel=fax`);
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toHaveProperty("channel");
    expect(await listed(transactionId)).toHaveLength(2);
  });

  it("does not delete another environment's messages", async () => {
    const transactionId = await transaction([await freshSubscriber()]);
    const production = await stack.createKey("Production");
    const reply = await stack.request("DELETE", `/v1/messages/transaction/${transactionId}`, undefined, { authorization: `ApiKey ${production}` });
    expect(reply.status).toBe(404);
    expect(await listed(transactionId)).toHaveLength(2);
  });
});

describe("DELETE /v1/messages/{messageId}", () => {
  it("deletes one message, then answers 404; a malformed id is 422", async () => {
    const ada = await freshSubscriber();
    const [id] = await seed.inApp(ada, 1);
    const reply = await stack.request("DELETE", `/v1/messages/${id}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ data: { acknowledged: true, status: "deleted" } });
    expect(await messageOf(ada, id!)).toBeUndefined();
    expect((await stack.request("DELETE", `/v1/messages/${id}`)).status).toBe(404);
    expect((await stack.request("DELETE", "/v1/messages/xyz")).status).toBe(422);
  });
});

describe("GET /v1/messages", () => {
  it("pages newest first with page, pageSize, totalCount and hasMore", async () => {
    const ada = await freshSubscriber();
    const ids = await seed.inApp(ada, 5);
    const newestFirst = [...ids].reverse();
    const page = async (query: string) => (await stack.request("GET", `/v1/messages?subscriberId=${ada.subscriberId}${query}`)).body;
    expect(await page("&limit=2")).toMatchObject({ page: 0, pageSize: 2, totalCount: 5, hasMore: true });
    expect((await page("&limit=2")).data.map((message) => message._id)).toEqual(newestFirst.slice(0, 2));
    expect((await page("&limit=2&page=2")).data.map((message) => message._id)).toEqual(newestFirst.slice(4));
    expect(await page("&limit=2&page=2")).toMatchObject({ page: 2, hasMore: false });
    expect(await page("&limit=5")).toMatchObject({ hasMore: false });
    expect((await page("&limit=2&page=3")).data).toEqual([]);
    expect((await page("")).pageSize).toBe(10);
  });

  it("filters by channel, subscriber and one or more transactions", async () => {
    const ada = await freshSubscriber();
    const bob = await freshSubscriber();
    const [first, second] = [nextTransactionId(), nextTransactionId()];
    await seed.create([
      newMessage(ada, { transactionId: first }),
      newMessage(ada, { transactionId: first, channel: commonV1.Channel.CHAT, stepId: "chat" }),
      newMessage(bob, { transactionId: second }),
    ]);
    const count = async (query: string) => (await stack.request("GET", `/v1/messages?${query}`)).body.data.length;
    expect(await count(`transactionId=${first}`)).toBe(2);
    expect(await count(`transactionId=${first}&transactionId=${second}`)).toBe(3);
    expect(await count(`transactionId=${first}&channel=chat`)).toBe(1);
    expect(await count(`transactionId=${first}&transactionId=${second}&subscriberId=${bob.subscriberId}`)).toBe(1);
    // A subscriber that does not exist is not found, as Novu answers it.
    expect(await stack.request("GET", "/v1/messages?subscriberId=nobody")).toMatchObject({
      status: 404,
      body: { message: "Subscriber 'nobody' was not found" },
    });
  });

  it.each([["limit=1001"], ["limit=0"], ["page=-1"], ["channel=fax"]])("answers 422 for %s", async (query) => {
    expect((await stack.request("GET", `/v1/messages?${query}`)).status).toBe(422);
  });

  it("accepts limit 1000", async () => {
    expect((await stack.request("GET", "/v1/messages?limit=1000")).status).toBe(200);
  });
});

describe("GET /v1/subscribers/{subscriberId}/notifications/feed", () => {
  it("lists in-app messages only, newest first, with paging and the subscriber", async () => {
    const ada = await freshSubscriber();
    const ids = await seed.inApp(ada, 12);
    await seed.create([newMessage(ada, { channel: commonV1.Channel.EMAIL, stepId: "email" })]);
    const first = await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed`);
    expect(first.status).toBe(200);
    // As the reference service counts a feed: totalCount stops at the page's limit.
    expect(first.body).toMatchObject({ page: 0, pageSize: 10, totalCount: 10, hasMore: true });
    expect(first.body.data.map((message) => message._id)).toEqual([...ids].reverse().slice(0, 10));
    expect(first.body.data[0]).toMatchObject({ channel: "in_app", subscriber: { _id: ada.id, subscriberId: ada.subscriberId, firstName: "First" } });
    const second = await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed?page=1`);
    expect(second.body).toMatchObject({ page: 1, totalCount: 2, hasMore: false });
    expect(second.body.data.map((message) => message._id)).toEqual([ids[1], ids[0]]);
  });

  it("filters by feed identifiers, read and seen", async () => {
    const ada = await freshSubscriber();
    const news = await seed.inApp(ada, 2, { feedIdentifier: "news" });
    await seed.inApp(ada, 3, { feedIdentifier: "alerts" });
    await markAs(ada.subscriberId, { messageId: news[0], markAs: "read" });
    await markAs(ada.subscriberId, { messageId: news[1], markAs: "seen" });
    const total = async (query: string) => (await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed?${query}`)).body.totalCount;
    expect(await total("feedIdentifier=news")).toBe(2);
    expect(await total("feedIdentifier=news&feedIdentifier=alerts")).toBe(5);
    expect(await total("feedIdentifier=unknown")).toBe(0);
    expect(await total("read=true")).toBe(1);
    expect(await total("seen=true")).toBe(2);
    expect(await total("seen=false&feedIdentifier=news")).toBe(0);
    expect(await total("read=false&seen=true")).toBe(1);
  });

  it("answers feed pages requested together each on its own", async () => {
    const ada = await freshSubscriber();
    const bob = await freshSubscriber();
    const adaIds = await seed.inApp(ada, 3);
    const bobIds = await seed.inApp(bob, 2);
    const feed = (subscriberId: string, query = "") =>
      stack.request<Data<{ _id: string }[]>>("GET", `/v1/subscribers/${subscriberId}/notifications/feed${query}`);
    const replies = await Promise.all([
      feed(ada.subscriberId),
      feed(bob.subscriberId),
      feed(ada.subscriberId, "?limit=1"),
      feed(ada.subscriberId),
      feed("nobody"),
    ]);
    const ids = (reply: { body: { data: { _id: string }[] } }) => reply.body.data.map((message) => message._id);
    expect(ids(replies[0]!)).toEqual([...adaIds].reverse());
    expect(ids(replies[1]!)).toEqual([...bobIds].reverse());
    expect(ids(replies[2]!)).toEqual([adaIds[2]]);
    expect(replies[3]!.body).toEqual(replies[0]!.body);
    expect(replies[4]!.status).toBe(404);
  });

  it.each([["limit=101"], ["limit=0"], ["page=-1"], ["read=yes"]])("answers 422 for %s", async (query) => {
    const ada = await freshSubscriber();
    expect((await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed?${query}`)).status).toBe(422);
  });
});

describe("feed pages the gateway keeps between polls", () => {
  // Each check polls first, so the page is kept, then changes what the page shows in the way a
  // real client would, and polls again at once: no change may leave an old page behind.
  it("are current right after a new message, a mark, a mark-all and deletes", async () => {
    const ada = await freshSubscriber();
    const bob = await freshSubscriber();
    const transactionId = nextTransactionId();
    await seed.create([newMessage(ada, { transactionId }), newMessage(bob, { transactionId })]);
    const feed = async (subscriber: SeededSubscriber) => {
      const reply = await stack.request<Data<{ _id: string; read: boolean; seen: boolean }[]>>(
        "GET",
        `/v1/subscribers/${subscriber.subscriberId}/notifications/feed`,
      );
      expect(reply.status).toBe(200);
      return reply.body.data;
    };
    expect(await feed(ada)).toHaveLength(1);
    expect(await feed(bob)).toHaveLength(1);

    // Created by the messages service's own callers (the worker), not through this gateway.
    const [newest] = await seed.inApp(ada, 1);
    expect((await feed(ada)).map((message) => message._id)[0]).toBe(newest);

    expect((await markAs(ada.subscriberId, { messageId: newest, markAs: "read" })).status).toBe(201);
    expect((await feed(ada))[0]).toMatchObject({ _id: newest, read: true, seen: true });
    expect((await markAll(ada.subscriberId, { markAs: "seen" })).status).toBe(201);
    expect((await feed(ada)).map((message) => message.seen)).toEqual([true, true]);

    expect((await stack.request("DELETE", `/v1/messages/${newest}`)).status).toBe(200);
    expect(await feed(ada)).toHaveLength(1);
    // One transaction, two subscribers' feeds.
    expect((await stack.request("DELETE", `/v1/messages/transaction/${transactionId}`)).status).toBe(204);
    expect(await feed(ada)).toEqual([]);
    expect(await feed(bob)).toEqual([]);
  });

  it("are current right after their workflow changes", async () => {
    const ada = await freshSubscriber();
    const steps = [{ template: { type: "in_app", content: "Hi" } }];
    const created = (await stack.request<Data<{ _id: string }>>("POST", "/v1/workflows", { name: "Kept page", steps })).body.data;
    await seed.create([newMessage(ada, { templateId: created._id })]);
    const templateName = async () => (await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed`)).body.data[0].template.name;
    expect(await templateName()).toBe("Kept page");
    expect((await stack.request("PUT", `/v1/workflows/${created._id}`, { name: "Renamed page", steps })).status).toBe(200);
    expect(await templateName()).toBe("Renamed page");
  });
});

describe("the message's workflow (template)", () => {
  it("is the workflow as GET /v1/workflows/{id} shows it, in the list and in the feed, and absent once deleted", async () => {
    const ada = await freshSubscriber();
    const created = await stack.request("POST", "/v1/workflows", {
      name: "Template embed",
      tags: ["news"],
      steps: [{ template: { type: "in_app", content: "Hi" } }],
    });
    const workflow = (await stack.request<Data<{ _id: string }>>("GET", `/v1/workflows/${created.body.data._id}`)).body.data;
    const foreignKey = await stack.createKey("Staging");
    const foreign = await stack.request<Data<{ _id: string }>>(
      "POST",
      "/v1/workflows",
      { name: "Elsewhere", steps: [] },
      { authorization: `ApiKey ${foreignKey}` },
    );
    const [embedded, unknown, otherEnvironment] = await seed
      .create([newMessage(ada, { templateId: workflow._id }), newMessage(ada), newMessage(ada, { templateId: foreign.body.data._id })])
      .then((reply) => reply.messages.map((message) => message.id));
    type Listed = Data<{ _id: string; template?: unknown }[]>;
    const templates = (data: Listed["data"]) => Object.fromEntries(data.map((message) => [message._id, message.template]));

    const listed = templates((await stack.request<Listed>("GET", `/v1/messages?subscriberId=${ada.subscriberId}`)).body.data);
    expect(listed[embedded!]).toEqual(workflow);
    expect(listed[unknown!]).toBeUndefined();
    // A workflow id of another environment embeds nothing.
    expect(listed[otherEnvironment!]).toBeUndefined();
    const feed = await stack.request<Listed>("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed`);
    expect(templates(feed.body.data)[embedded!]).toEqual(workflow);

    expect((await stack.request("DELETE", `/v1/workflows/${workflow._id}`)).status).toBe(200);
    const afterDelete = await stack.request("GET", `/v1/messages?subscriberId=${ada.subscriberId}`);
    expect(afterDelete.status).toBe(200);
    expect(afterDelete.body.data.map((message) => message.template)).toEqual([undefined, undefined, undefined]);
    const feedAfter = await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/feed`);
    expect(feedAfter.status).toBe(200);
    expect(feedAfter.body.data[0]).not.toHaveProperty("template");
  });
});
