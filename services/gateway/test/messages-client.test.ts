import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { EVERY_KEY, scopeHeaders } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { forgettingWrites } from "../src/forgetting.js";
import { countUnseenBatched, createFeedPages, feedPageBatched, type FeedPages } from "../src/messages-client.js";
import { JsonBytes, jsonOnce } from "../src/route.js";

type MessagesClient = Client<typeof messagesV1.MessageService>;

/** A messages client whose batch calls answer from the request and record what they were sent. */
function recordingClient(feedPages?: FeedPages) {
  const countBatches: messagesV1.CountMessagesRequest[][] = [];
  const feedBatches: messagesV1.GetFeedRequest[][] = [];
  const client = {
    async batchCountMessages(request: { counts: messagesV1.CountMessagesRequest[] }) {
      countBatches.push(request.counts);
      return create(messagesV1.BatchCountMessagesResponseSchema, {
        results: request.counts.map((count) =>
          count.subscriberId === "ghost"
            ? { result: { case: "error" as const, value: { code: Code.NotFound, message: "Subscriber 'ghost' was not found" } } }
            : { result: { case: "count" as const, value: count.limit } },
        ),
      });
    },
    async batchGetFeed(request: { feeds: messagesV1.GetFeedRequest[] }) {
      feedBatches.push(request.feeds);
      await new Promise((resolve) => setTimeout(resolve, 30));
      return create(messagesV1.BatchGetFeedResponseSchema, {
        results: request.feeds.map((feed) => ({ result: { case: "feed" as const, value: { totalCount: feed.page } } })),
      });
    },
    async markMessages() {
      return create(messagesV1.MarkMessagesResponseSchema);
    },
    async deleteTransactionMessages() {
      throw new ConnectError("nothing to delete", Code.NotFound);
    },
  } as unknown as MessagesClient;
  return {
    countUnseen: countUnseenBatched(client),
    feedPage: feedPageBatched(client, feedPages),
    writes: forgettingWrites(messagesV1.MessageService, client, feedPages),
    countBatches,
    feedBatches,
  };
}

const environment = (environmentId: string) => ({ headers: scopeHeaders({ organizationId: "org", environmentId }) });

describe("the batched messages calls", () => {
  it("sends concurrent counts of one environment as one batch, identical ones as one item", async () => {
    const { countUnseen, countBatches } = recordingClient();
    const call = environment("env-a");
    const replies = await Promise.all([
      countUnseen({ subscriberId: "ada", limit: 5 }, call),
      countUnseen({ subscriberId: "ada", limit: 5 }, call),
      countUnseen({ subscriberId: "bob", limit: 7 }, call),
      countUnseen({ subscriberId: "ada", limit: 5 }, environment("env-b")),
    ]);
    expect(replies).toEqual([5, 5, 7, 5]);
    expect(countBatches.map((batch) => batch.map((count) => count.subscriberId))).toEqual([["ada", "bob"], ["ada"]]);
  });

  it("fails only the caller whose item failed, with that item's code", async () => {
    const { countUnseen } = recordingClient();
    const call = environment("env-a");
    const [ok, failed] = await Promise.allSettled([
      countUnseen({ subscriberId: "ada", limit: 3 }, call),
      countUnseen({ subscriberId: "ghost", limit: 3 }, call),
    ]);
    expect(ok).toMatchObject({ status: "fulfilled", value: 3 });
    expect(failed.status).toBe("rejected");
    expect(ConnectError.from((failed as PromiseRejectedResult).reason).code).toBe(Code.NotFound);
  });

  it("never lets a request join a batch that was already sent, even before it is answered", async () => {
    const { feedPage, feedBatches } = recordingClient();
    const call = environment("env-a");
    const render = (reply: messagesV1.GetFeedResponse) => new JsonBytes(String(reply.totalCount));
    const first = feedPage({ subscriberId: "ada", limit: 10, page: 1 }, call, render);
    // Until the first batch is sent, however long a loaded machine takes to get there (a fixed
    // wait could end first, and the second request then rightly joins the first's batch).
    while (feedBatches.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const second = feedPage({ subscriberId: "ada", limit: 10, page: 1 }, call, render);
    expect((await first).bytes.toString()).toBe("1");
    expect((await second).bytes.toString()).toBe("1");
    expect(feedBatches).toHaveLength(2);
  });

  describe("with feed pages kept", () => {
    const livePages = () => {
      const pages = createFeedPages(2 ** 20);
      pages.setLive(true);
      return pages;
    };
    const sentFor = (batches: messagesV1.GetFeedRequest[][]) => batches.map((batch) => batch.map((feed) => feed.subscriberId));
    const render = (reply: messagesV1.GetFeedResponse) => jsonOnce(reply, () => JSON.stringify({ totalCount: reply.totalCount }));

    it("answers a page polled again from the kept page until a change of its subscriber or environment is announced", async () => {
      const pages = livePages();
      const { feedPage, feedBatches } = recordingClient(pages);
      const call = environment("env-a");
      const poll = (subscriberId: string, options = call) => feedPage({ subscriberId, limit: 10, page: 1 }, options, render);
      const first = await poll("ada");
      expect(await poll("ada")).toBe(first);
      await poll("bob");
      await poll("bob");
      await poll("ada", environment("env-b"));
      expect(sentFor(feedBatches)).toEqual([["ada"], ["bob"], ["ada"]]);

      pages.forget("env-a", ["ada"]);
      await poll("ada");
      await poll("bob");
      expect(sentFor(feedBatches)).toEqual([["ada"], ["bob"], ["ada"], ["ada"]]);
      pages.forget("env-a", EVERY_KEY);
      await poll("bob");
      await poll("ada", environment("env-b"));
      expect(sentFor(feedBatches)).toEqual([["ada"], ["bob"], ["ada"], ["ada"], ["bob"]]);
    });

    it("drops the pages its own writes may have changed, as their contract declares, failed writes too", async () => {
      const { feedPage, writes, feedBatches } = recordingClient(livePages());
      const call = environment("env-a");
      const poll = (subscriberId: string) => feedPage({ subscriberId, limit: 10, page: 1 }, call, render);
      await poll("ada");
      await poll("bob");
      await writes.markMessages({ subscriberId: "ada", messageIds: [] }, call);
      await poll("ada");
      await poll("bob");
      expect(sentFor(feedBatches)).toEqual([["ada"], ["bob"], ["ada"]]);
      await expect(writes.deleteTransactionMessages({ transactionId: "t" }, call)).rejects.toThrow("nothing to delete");
      await poll("ada");
      await poll("bob");
      expect(sentFor(feedBatches)).toEqual([["ada"], ["bob"], ["ada"], ["ada"], ["bob"]]);
    });

    it("does not keep a page read while a change of it was announced", async () => {
      const pages = livePages();
      const { feedPage, feedBatches } = recordingClient(pages);
      const call = environment("env-a");
      const poll = () => feedPage({ subscriberId: "ada", limit: 10, page: 1 }, call, render);
      const raced = poll();
      // The batch is on its way (answered after 30 ms) when the change is announced.
      while (feedBatches.length === 0) await new Promise((resolve) => setImmediate(resolve));
      pages.forget("env-a", ["ada"]);
      await raced;
      await poll();
      expect(feedBatches).toHaveLength(2);
    });
  });
});
