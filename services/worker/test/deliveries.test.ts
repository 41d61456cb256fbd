import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { TimestampSchema, timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { commonV1, deliveriesV1, integrationsV1, messagesV1 } from "@notify/proto";
import { scopeHeaders, type ServiceRegistry } from "@notify/runtime";
import { inMemoryTransport } from "@notify/testing";
import { describe, expect, it } from "vitest";
import { encodePages, HAND_BACK_GROWTH_BYTES, isPageSubject, pagesOf, pageSubject, SENDS_PER_PAGE, writeAndHandOver } from "../src/deliveries.js";

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

  it("splits a page into halves until each fits a stream message, keeping order and due time, and answers a send too large on its own apart", () => {
    const sized = (messageId: string, bytes: number) =>
      create(deliveriesV1.DeliveryJobSchema, {
        messageId,
        integrationId: "smtp",
        transactionId: "txn-1",
        channel: commonV1.Channel.EMAIL,
        content: { case: "email", value: { to: ["a@example.com"], body: { case: "html", value: "x".repeat(bytes) } } },
      });
    const later = timestampFromMs(Date.now() + 1_000);
    const jobs = [...Array.from({ length: 10 }, (_, index) => sized(`m${index}`, 30_000)), sized("huge", 200_000)];
    const { encoded, tooLarge } = encodePages(pagesOf(jobs, later), 100_000);
    expect(tooLarge.map((job) => job.messageId)).toEqual(["huge"]);
    expect(encoded.flatMap(({ page }) => page.jobs.map((job) => job.messageId))).toEqual(jobs.slice(0, 10).map((job) => job.messageId));
    expect(encoded.every(({ data }) => data.length <= 100_000)).toBe(true);
    expect(encoded.length).toBeGreaterThan(1);
    expect(
      encoded.every(
        ({ page, data }) => page.notBefore?.seconds === later.seconds && fromBinary(deliveriesV1.DeliveryPageSchema, data).jobs.length === page.jobs.length,
      ),
    ).toBe(true);
    // Pages that fit are encoded once, as they are.
    const small = pagesOf([send("s0", "slack"), send("s1", "slack")]);
    expect(encodePages(small, 100_000)).toEqual({ encoded: [{ page: small[0], data: toBinary(deliveriesV1.DeliveryPageSchema, small[0]!) }], tooLarge: [] });
  });

  it("keeps room for what a send's page gains when handed back: one that was handed over fits again", () => {
    const limit = 100_000;
    const email = (bytes: number) =>
      create(deliveriesV1.DeliveryJobSchema, {
        messageId: "m0",
        integrationId: "smtp",
        transactionId: "txn-1",
        channel: commonV1.Channel.EMAIL,
        content: { case: "email", value: { to: ["a@example.com"], body: { case: "html", value: "x".repeat(bytes) } } },
      });
    // The largest send handed over: its page takes all a stream message may, less the room kept.
    const framing = toBinary(deliveriesV1.DeliveryPageSchema, pagesOf([email(limit)])[0]!).length - limit;
    const largest = email(limit - HAND_BACK_GROWTH_BYTES - framing);
    const handedOver = encodePages(pagesOf([largest]), limit - HAND_BACK_GROWTH_BYTES).encoded;
    expect(handedOver.map(({ data }) => data.length)).toEqual([limit - HAND_BACK_GROWTH_BYTES]);
    // Handed back as often as its count holds, due as late as a timestamp goes: it fits still.
    largest.handedBack = 2 ** 32 - 1;
    const due = create(TimestampSchema, { seconds: 253_402_300_799n, nanos: 999_999_999 });
    const { encoded, tooLarge } = encodePages(pagesOf([largest], due), limit);
    expect(tooLarge).toEqual([]);
    expect(encoded).toHaveLength(1);
  });

  it("publishes pages on a subject of their own, apart from the single sends of before", () => {
    const stream = { name: "S", subjectPrefix: "notify.deliveries" };
    expect(pageSubject(stream, commonV1.Channel.EMAIL)).toBe("notify.deliveries.pages.email");
    expect(isPageSubject(stream, "notify.deliveries.pages.email")).toBe(true);
    expect(isPageSubject(stream, "notify.deliveries.email")).toBe(false);
  });
});

describe("handing sends over", () => {
  it("dates each send from when its message was written: now for a new one, its first write for one an earlier run wrote", async () => {
    const earlier = new Date(Date.now() - 86_400_000);
    const routes = (router: ServiceRegistry) =>
      router.service(messagesV1.MessageService, {
        createMessages: (request) => ({
          createdCount: 1,
          messages: request.messages.map((_, index) =>
            index === 0
              ? { id: "m-new", notificationId: "n-1", created: true }
              : { id: "m-old", notificationId: "n-2", created: false, writtenAt: timestampFromMs(earlier.getTime()) },
          ),
        }),
      });
    const messages = createClient(messagesV1.MessageService, inMemoryTransport(routes));
    const integration = create(integrationsV1.IntegrationSchema, { id: "slack-1", providerId: "slack" });
    const composed = ["ada", "bob"].map((subscriberId) => ({
      message: create(messagesV1.NewMessageSchema, {
        subscriberId,
        externalSubscriberId: subscriberId,
        transactionId: "txn-1",
        channel: commonV1.Channel.CHAT,
      }),
      delivery: {
        integration,
        content: { case: "chat" as const, value: create(deliveriesV1.ChatContentSchema, { webhookUrl: "https://hooks.example/x", content: "hi" }) },
      },
    }));
    const published: deliveriesV1.DeliveryPage[] = [];
    const before = Date.now();
    const scope = { organizationId: "org-1", environmentId: "env-1" };
    await writeAndHandOver(
      composed,
      scope,
      messages,
      async (pages) => {
        published.push(...pages);
        return [];
      },
      { headers: scopeHeaders(scope) },
    );
    const jobs = published.flatMap((page) => page.jobs);
    expect(jobs.map((job) => job.messageId)).toEqual(["m-new", "m-old"]);
    expect(timestampDate(jobs[0]!.createdAt!).getTime()).toBeGreaterThanOrEqual(before);
    expect(timestampDate(jobs[1]!.createdAt!)).toEqual(earlier);
  });
});
