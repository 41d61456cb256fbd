import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { scopeHeaders } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { coalescingMessagesClient } from "../src/messages-client.js";

type MessagesClient = Client<typeof messagesV1.MessageService>;

/** A messages client whose batch calls answer from the request and record what they were sent. */
function recordingClient() {
  const countBatches: messagesV1.CountMessagesRequest[][] = [];
  const feedBatches: messagesV1.GetFeedRequest[][] = [];
  const client = {
    async batchCountMessages(request: { counts: messagesV1.CountMessagesRequest[] }) {
      countBatches.push(request.counts);
      return create(messagesV1.BatchCountMessagesResponseSchema, {
        results: request.counts.map((count) =>
          count.subscriberId === "ghost"
            ? { result: { case: "error", value: { code: Code.NotFound, message: "Subscriber 'ghost' was not found" } } }
            : { result: { case: "count", value: count.limit } },
        ),
      });
    },
    async batchGetFeed(request: { feeds: messagesV1.GetFeedRequest[] }) {
      feedBatches.push(request.feeds);
      await new Promise((resolve) => setTimeout(resolve, 30));
      return create(messagesV1.BatchGetFeedResponseSchema, {
        results: request.feeds.map((feed) => ({ result: { case: "feed", value: { totalCount: feed.page } } })),
      });
    },
  } as unknown as MessagesClient;
  return { client: coalescingMessagesClient(client), countBatches, feedBatches };
}

const environment = (environmentId: string) => ({ headers: scopeHeaders({ organizationId: "org", environmentId }) });

describe("coalescingMessagesClient", () => {
  it("sends concurrent counts of one environment as one batch, identical ones as one item", async () => {
    const { client, countBatches } = recordingClient();
    const call = environment("env-a");
    const replies = await Promise.all([
      client.countMessages({ subscriberId: "ada", limit: 5 }, call),
      client.countMessages({ subscriberId: "ada", limit: 5 }, call),
      client.countMessages({ subscriberId: "bob", limit: 7 }, call),
      client.countMessages({ subscriberId: "ada", limit: 5 }, environment("env-b")),
    ]);
    expect(replies.map((reply) => reply.count)).toEqual([5, 5, 7, 5]);
    expect(countBatches.map((batch) => batch.map((count) => count.subscriberId))).toEqual([["ada", "bob"], ["ada"]]);
  });

  it("fails only the caller whose item failed, with that item's code", async () => {
    const { client } = recordingClient();
    const call = environment("env-a");
    const [ok, failed] = await Promise.allSettled([
      client.countMessages({ subscriberId: "ada", limit: 3 }, call),
      client.countMessages({ subscriberId: "ghost", limit: 3 }, call),
    ]);
    expect(ok).toMatchObject({ status: "fulfilled", value: { count: 3 } });
    expect(failed.status).toBe("rejected");
    expect(ConnectError.from((failed as PromiseRejectedResult).reason).code).toBe(Code.NotFound);
  });

  it("never lets a request join a batch that was already sent, even before it is answered", async () => {
    const { client, feedBatches } = recordingClient();
    const call = environment("env-a");
    const first = client.getFeed({ subscriberId: "ada", limit: 10, page: 1 }, call);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = client.getFeed({ subscriberId: "ada", limit: 10, page: 1 }, call);
    expect((await first).totalCount).toBe(1);
    expect((await second).totalCount).toBe(1);
    expect(feedBatches).toHaveLength(2);
  });
});
