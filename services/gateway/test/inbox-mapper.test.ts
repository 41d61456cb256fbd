import { parse } from "node:querystring";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { commonV1, messagesV1, subscribersV1, workflowsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { HttpError } from "../src/errors.js";
import { bulkBody, countQuery, inboxFilterOf, inboxNotificationToJson, listFilterToJson, listQuery } from "../src/mappers/inbox.js";
import { listsJoined, parseOrThrow } from "../src/validation.js";

const { Severity } = commonV1;

/** The query as a route reads it: as Koa hands it over (Node's querystring), its bracketed lists joined. */
const query = (text: string) => listsJoined({ ...parse(text) });

describe("the Inbox's list query", () => {
  it("reads the client's encoding of every filter", () => {
    // The request @novu/js sends for list({ read: false, tags: ['a', 'b'], data: { k: 'v' }, severity: ['high'], limit: 5 }).
    const parsed = parseOrThrow(listQuery, query("limit=5&tags%5B%5D=a&tags%5B%5D=b&read=false&data=%7B%22k%22%3A%22v%22%7D&severity%5B%5D=high"));
    expect(parsed).toMatchObject({ limit: 5, offset: 0, read: false, tags: [["a", "b"]], data: { k: "v" }, severity: ["high"] });
    expect(listFilterToJson(parsed)).toEqual({ tags: ["a", "b"], read: false, data: { k: "v" }, severity: ["high"] });
    expect(inboxFilterOf(parsed)).toMatchObject({ tags: [{ anyOf: ["a", "b"] }], read: false, severities: [Severity.HIGH], data: { k: "v" } });

    const grouped = parseOrThrow(listQuery, query("tags%5B0%5D%5B%5D=a&tags%5B0%5D%5B%5D=b&tags%5B1%5D%5B%5D=c&severity=low&createdGte=1700000000000"));
    expect(grouped.tags).toEqual([["a", "b"], ["c"]]);
    expect(listFilterToJson(grouped)).toEqual({ tags: { and: [{ or: ["a", "b"] }, { or: ["c"] }] }, severity: ["low"], createdGte: 1700000000000 });
    expect(parseOrThrow(listQuery, query("")).limit).toBe(10);
  });

  it("refuses what it cannot read with a 422 naming the field", () => {
    for (const [text, field] of [
      ["limit=101", "limit"],
      ["after=zz", "after"],
      ["read=maybe", "read"],
      ["data=%7Bnope", "data"],
      ["data=%5B1%5D", "data"],
      ["severity=urgent", "severity[0]"],
      ["createdGte=yesterday", "createdGte"],
    ] as const) {
      const error = (() => {
        try {
          parseOrThrow(listQuery, query(text));
          return undefined;
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error, text).toBeInstanceOf(HttpError);
      expect(Object.keys((error as HttpError).extra.errors as object), text).toEqual([field]);
    }
  });
});

describe("the Inbox's count query", () => {
  it("keeps each filter as sent, to echo it, beside its parsed form", () => {
    const filters = [{}, { read: false, archived: false, snoozed: false, severity: "high" }, { tags: { and: [{ or: ["x"] }] }, data: { a: 1 } }];
    const parsed = parseOrThrow(countQuery, { filters: JSON.stringify(filters) });
    expect(parsed.filters.map((filter) => filter.raw)).toEqual(filters);
    expect(parsed.filters[1]!.parsed).toMatchObject({ read: false, severity: ["high"] });
    expect(parsed.filters[2]!.parsed.tags).toEqual([["x"]]);
    for (const bad of ["nope", "{}", "[]", JSON.stringify([{ read: "yes" }]), JSON.stringify([1])]) {
      expect(() => parseOrThrow(countQuery, { filters: bad }), bad).toThrow(HttpError);
    }
  });
});

describe("the Inbox's bulk body", () => {
  it("takes ids, tags in any of the client's shapes and data as a JSON text", () => {
    expect(parseOrThrow(bulkBody, { tags: { and: [{ or: ["x"] }] }, data: '{"k":1}' })).toEqual({ tags: [["x"]], data: { k: 1 } });
    expect(parseOrThrow(bulkBody, {})).toEqual({});
    expect(() => parseOrThrow(bulkBody, { notificationIds: ["x"] })).toThrow(HttpError);
  });
});

describe("InboxNotification", () => {
  it("maps a message with its recipient, workflow, actions and state", () => {
    const message = create(messagesV1.MessageSchema, {
      id: "6a0000000000000000000001",
      transactionId: "txn",
      templateId: "w1",
      content: { case: "text", value: "Hello **Ada**" },
      read: true,
      seen: true,
      tags: ["billing"],
      severity: Severity.HIGH,
      data: { order: 7 },
      cta: {
        url: "/orders/7",
        action: {
          status: "done",
          result: { type: "secondary" },
          buttons: [
            { type: "primary", content: "Open" },
            { type: "secondary", content: "Dismiss" },
          ],
        },
      },
      snoozedUntil: timestampFromDate(new Date(Date.now() - 1000)),
      createdAt: timestampFromDate(new Date("2026-01-01T00:00:00Z")),
    });
    const subscriber = create(subscribersV1.SubscriberSchema, { id: "s1", subscriberId: "ada", firstName: "Ada" });
    const workflow = create(workflowsV1.WorkflowSchema, { id: "w1", identifier: "orders", name: "Orders", tags: ["billing"] });
    expect(inboxNotificationToJson(message, subscriber, workflow)).toEqual({
      id: "6a0000000000000000000001",
      transactionId: "txn",
      body: "Hello **Ada**",
      to: { id: "s1", subscriberId: "ada", firstName: "Ada" },
      isRead: true,
      isSeen: true,
      isArchived: false,
      // A snooze that is due is over, though its return has not run yet.
      isSnoozed: false,
      createdAt: "2026-01-01T00:00:00.000Z",
      readAt: null,
      firstSeenAt: null,
      archivedAt: null,
      primaryAction: { label: "Open", isCompleted: false },
      secondaryAction: { label: "Dismiss", isCompleted: true },
      channelType: "in_app",
      tags: ["billing"],
      redirect: { url: "/orders/7" },
      data: { order: 7 },
      workflow: { id: "w1", identifier: "orders", name: "Orders", critical: false, tags: ["billing"], severity: "none" },
      severity: "high",
    });
  });
});
