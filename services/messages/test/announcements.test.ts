import { commonV1, messagesV1 } from "@notify/proto";
import type { ChangedKeys } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callAs, feedOne, fakeSubscribers, fakeWorkflows, inMemoryClient, newMessage, newScope, openDatabase, type Fixture } from "./fixtures.js";

const { MarkAs } = messagesV1;
const { Channel } = commonV1;

let fixture: Fixture;
const subscribers = fakeSubscribers();
const announced: { environmentId: string; keys: ChangedKeys }[] = [];
let client: ReturnType<typeof inMemoryClient>;

beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture, subscribers, 10_000, fakeWorkflows(), async (environmentId, keys) => {
    announced.push({ environmentId, keys });
  });
});
afterAll(() => fixture?.close());

/** What the calls in `act` announced. */
async function announcements(act: () => Promise<unknown>) {
  announced.length = 0;
  await act().catch(() => undefined);
  return [...announced];
}

describe("announcements of changed feeds", () => {
  it("name the subscribers whose in-app feed each write may change", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const { environmentId } = scope;
    const [ada, bob, cy] = ["ada", "bob", "cy"].map((id) => subscribers.add(scope, id));
    const transactionId = "txn-announced";

    const created = await announcements(() =>
      client.createMessages(
        {
          messages: [newMessage(ada!, { transactionId }), newMessage(bob!, { transactionId, channel: Channel.EMAIL, stepId: "email" })],
          groups: [
            { message: newMessage(ada!, { transactionId, stepId: "group" }), recipients: [{ subscriberId: cy!.id, externalSubscriberId: "cy" }] },
            {
              message: newMessage(ada!, { transactionId, stepId: "sms", channel: Channel.SMS }),
              recipients: [{ subscriberId: bob!.id, externalSubscriberId: "bob" }],
            },
          ],
        },
        call,
      ),
    );
    expect(created).toEqual([{ environmentId, keys: ["ada", "cy"] }]);

    expect(await announcements(() => client.markMessages({ subscriberId: "ada", messageIds: [], markAs: MarkAs.READ }, call))).toEqual([
      { environmentId, keys: ["ada"] },
    ]);
    expect(await announcements(() => client.markAllMessages({ subscriberId: "cy", markAs: MarkAs.SEEN }, call))).toEqual([{ environmentId, keys: ["cy"] }]);
    // Deletes name the feeds that lost in-app messages; an email or SMS is in none.
    const [emailMessage] = (await client.listMessages({ transactionIds: [transactionId], channel: Channel.EMAIL, limit: 10 }, call)).messages;
    expect(await announcements(() => client.deleteMessage({ messageId: emailMessage!.id }, call))).toEqual([{ environmentId, keys: [] }]);
    expect(await announcements(() => client.deleteTransactionMessages({ transactionId, channel: Channel.SMS }, call))).toEqual([{ environmentId, keys: [] }]);
    expect(await announcements(() => client.deleteTransactionMessages({ transactionId }, call))).toEqual([{ environmentId, keys: ["ada", "cy"] }]);
    const [single] = (await client.createMessages({ messages: [newMessage(bob!, { transactionId: "txn-single" })] }, call)).messages;
    expect(await announcements(() => client.deleteMessage({ messageId: single!.id }, call))).toEqual([{ environmentId, keys: ["bob"] }]);
    expect(await announcements(() => client.deleteSubscriberMessages({ internalSubscriberId: bob!.id, subscriberId: "bob" }, call))).toEqual([
      { environmentId, keys: ["bob"] },
    ]);
    // A failed write (an unknown message: NOT_FOUND) is announced too, with what it changed: nothing.
    expect(await announcements(() => client.deleteMessage({ messageId: "0".repeat(24) }, call))).toEqual([{ environmentId, keys: [] }]);
    // Reads announce nothing.
    expect(await announcements(() => feedOne(client, { subscriberId: "ada", limit: 10 }, call))).toEqual([]);
    // The Inbox's writes name the session's subscriber, failed or not.
    const messageId = "0".repeat(24);
    expect(await announcements(() => client.updateInboxMessage({ subscriberId: "ada", messageId, change: messagesV1.InboxChange.READ }, call))).toEqual([
      { environmentId, keys: ["ada"] },
    ]);
    expect(await announcements(() => client.bulkUpdateInboxMessages({ subscriberId: "bob", change: messagesV1.InboxBulkChange.ARCHIVE }, call))).toEqual([
      { environmentId, keys: ["bob"] },
    ]);
    expect(await announcements(() => client.deleteInboxMessage({ subscriberId: "cy", messageId }, call))).toEqual([{ environmentId, keys: ["cy"] }]);
    expect(await announcements(() => client.listInboxMessages({ subscriberId: "ada", limit: 10 }, call))).toEqual([]);
  });
});
