import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { commonV1, messagesV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { groupMessages } from "../src/message-groups.js";

const payload = { order: 7 };
const message = (subscriberId: string, fields: MessageInitShape<typeof messagesV1.NewMessageSchema> = {}) =>
  create(messagesV1.NewMessageSchema, {
    transactionId: "txn-1",
    subscriberId,
    externalSubscriberId: `ext-${subscriberId}`,
    stepId: "step",
    channel: commonV1.Channel.IN_APP,
    content: { case: "text", value: "Hello" },
    payload,
    ...fields,
  });

describe("groupMessages", () => {
  it("groups messages alike but for their recipient, in first-seen order", () => {
    const groups = groupMessages([
      message("a"),
      message("b", { content: { case: "text", value: "Hello b" } }),
      message("c"),
      message("d", { email: "d@example.com" }),
      message("e", { payload: { order: 7 } }),
    ]);
    expect(groups.map((group) => group.recipients.map((recipient) => recipient.subscriberId))).toEqual([["a", "c"], ["b"], ["d"], ["e"]]);
    expect(groups[0]!.recipients[1]).toMatchObject({ subscriberId: "c", externalSubscriberId: "ext-c" });
    expect(groups[2]!.message!.email).toBe("d@example.com");
  });

  it("keeps a step's messages to different destinations of one subscriber apart", () => {
    const groups = groupMessages([message("a", { destination: "slack" }), message("b", { destination: "discord" }), message("c", { destination: "slack" })]);
    expect(groups.map((group) => [group.message!.destination, group.recipients.length])).toEqual([
      ["slack", 2],
      ["discord", 1],
    ]);
  });

  it("keeps messages with delivery dates (bigint seconds) apart by value", () => {
    const at = (seconds: bigint) => [create(TimestampSchema, { seconds })];
    const groups = groupMessages([message("a", { deliveredAt: at(1n) }), message("b", { deliveredAt: at(2n) }), message("c", { deliveredAt: at(1n) })]);
    expect(groups.map((group) => group.recipients.length)).toEqual([2, 1]);
  });

  it("takes empty payloads and overrides as alike, whichever object holds them, and apart from none", () => {
    const groups = groupMessages([
      message("a", { payload: {}, overrides: {} }),
      message("b", { payload: {}, overrides: {} }),
      message("c", { payload: undefined, overrides: {} }),
    ]);
    expect(groups.map((group) => group.recipients.map((recipient) => recipient.subscriberId))).toEqual([["a", "b"], ["c"]]);
  });

  it("keeps messages apart whose rendered data or severity differ", () => {
    const groups = groupMessages([
      message("a", { data: { name: "Ada" } }),
      message("b", { data: { name: "Bob" } }),
      message("c", { data: { name: "Ada" } }),
      message("d", { data: { name: "Ada" }, severity: commonV1.Severity.HIGH }),
    ]);
    expect(groups.map((group) => group.recipients.map((recipient) => recipient.subscriberId))).toEqual([["a", "c"], ["b"], ["d"]]);
  });
});
