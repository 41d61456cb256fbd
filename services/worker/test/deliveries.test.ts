import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { commonV1, deliveriesV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { isPageSubject, pagesOf, pageSubject, SENDS_PER_PAGE } from "../src/deliveries.js";

const send = (messageId: string, integrationId: string, transactionId = "txn-1") =>
  create(deliveriesV1.DeliveryJobSchema, { messageId, integrationId, transactionId, channel: commonV1.Channel.CHAT });

describe("pages of sends", () => {
  it("puts each integration's sends of a transaction on pages of their own, ordered by their first send, none larger than a page", () => {
    const jobs = [
      ...Array.from({ length: SENDS_PER_PAGE + 3 }, (_, index) => send(`a${index}`, "slack")),
      send("b0", "discord"),
      send("c0", "slack", "txn-2"),
      send("b1", "discord"),
    ];
    const pages = pagesOf(jobs);
    expect(pages.map((page) => page.jobs.map((job) => job.messageId))).toEqual([
      jobs.slice(0, SENDS_PER_PAGE).map((job) => job.messageId),
      [`a${SENDS_PER_PAGE}`, `a${SENDS_PER_PAGE + 1}`, `a${SENDS_PER_PAGE + 2}`],
      ["b0", "b1"],
      ["c0"],
    ]);
    expect(pages.every((page) => page.notBefore === undefined)).toBe(true);
    const later = timestampFromMs(Date.now() + 1_000);
    expect(pagesOf([send("d0", "slack")], later)[0]!.notBefore).toEqual(later);
  });

  it("publishes pages on a subject of their own, apart from the single sends of before", () => {
    const stream = { name: "S", subjectPrefix: "notify.deliveries" };
    expect(pageSubject(stream, commonV1.Channel.EMAIL)).toBe("notify.deliveries.pages.email");
    expect(isPageSubject(stream, "notify.deliveries.pages.email")).toBe(true);
    expect(isPageSubject(stream, "notify.deliveries.email")).toBe(false);
  });
});
