import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { createFollowedCache, ENVIRONMENT_HEADER, EVERY_KEY, type ChangedKeys, type FollowedCache } from "@notify/runtime";
import { batched, scopeHeaderOf } from "./coalesce.js";
import type { JsonBytes } from "./route.js";

type MessagesClient = Client<typeof messagesV1.MessageService>;

/**
 * Feed pages kept between polls as the bytes answered, by subscriber (external id) and request.
 * Kept only while the changes that would make them wrong are followed (server.ts): the messages
 * service announces the feeds it changes, the subscribers service changed subscribers, the
 * triggers process changed workflows (a page embeds both). Bytes, not the decoded reply: a page
 * held as objects takes several times its JSON, and objects kept are what every full GC walks.
 */
export type FeedPages = FollowedCache<JsonBytes>;

/** Subscribers whose pages are kept at most. */
const KEPT_FEEDS = 10_000;
/** What a kept page costs beyond its memory: the JsonBytes, the Buffer and the map entry. */
const PAGE_OVERHEAD_BYTES = 300;

export function createFeedPages(maxBytes: number): FeedPages {
  return createFollowedCache<JsonBytes>({
    max: KEPT_FEEDS,
    maxSize: maxBytes,
    // The memory the bytes keep: a small Buffer is a slice of an 8 KB pool it keeps whole.
    sizeOf: (page) => page.bytes.buffer.byteLength + PAGE_OVERHEAD_BYTES,
  });
}

export interface PagingMessagesClient extends MessagesClient {
  /**
   * The feed page `request` asks for, as `render` writes it: the page kept for this request if
   * nothing changed it since, else what `render` makes of a (batched) GetFeed, kept for the next
   * poll. Callers of one batch share a reply, so `render` should make one JsonBytes per reply
   * (jsonOnce).
   */
  feedPage(request: MessageInitShape<typeof messagesV1.GetFeedRequestSchema>, options: CallOptions, render: (reply: messagesV1.GetFeedResponse) => JsonBytes): Promise<JsonBytes>;
}

/** A batch item's answer, or the error its own call would have thrown. */
function answerOf<T>(result: { case: string; value: T | messagesV1.BatchError } | { case: undefined }, answer: string): T {
  if (result.case === answer) return result.value as T;
  if (result.case === "error") {
    const { message, code } = result.value as messagesV1.BatchError;
    throw new ConnectError(message, code as Code);
  }
  throw new ConnectError("the batch answered nothing for this request", Code.Internal);
}

/**
 * The messages client the routes use. The two reads every open inbox polls, the unseen count and
 * the first feed page, are batched (DESIGN §5: a hot read must not cost one RPC per request);
 * each caller still gets its own answer or its own error. Feed pages are also kept in
 * `feedPages` when given, so a page polled again unchanged costs no hop at all.
 */
export function coalescingMessagesClient(client: MessagesClient, feedPages?: FeedPages): PagingMessagesClient {
  const count = batched(async (counts: MessageInitShape<typeof messagesV1.CountMessagesRequestSchema>[], headers) => {
    const reply = await client.batchCountMessages({ counts }, { headers });
    return reply.results;
  });
  const feed = batched(async (feeds: MessageInitShape<typeof messagesV1.GetFeedRequestSchema>[], headers) => {
    const reply = await client.batchGetFeed({ feeds }, { headers });
    return reply.results;
  });
  /**
   * Runs a write of this process, then drops the pages it may have changed: the messages
   * service announces them too, but a client reading right after its own write through this
   * gateway must not depend on which of the two answers arrives first.
   */
  function forgetting<Request, Answer>(write: (request: Request, options?: CallOptions) => Promise<Answer>, changed: (request: Request) => ChangedKeys) {
    return async (request: Request, options?: CallOptions): Promise<Answer> => {
      try {
        return await write(request, options);
      } finally {
        const environmentId = scopeHeaderOf(options, ENVIRONMENT_HEADER);
        if (environmentId !== undefined) feedPages?.forget(environmentId, changed(request));
      }
    };
  }
  const getFeed: MessagesClient["getFeed"] = async (request, options) => {
    const { result } = await feed(request, options);
    return answerOf<messagesV1.GetFeedResponse>(result, "feed");
  };
  const bySubscriberId = (request: { subscriberId?: string }) => [request.subscriberId ?? ""];
  const everyFeed = () => EVERY_KEY;
  return {
    ...client,
    async countMessages(request, options) {
      const { result } = await count(request, options);
      return create(messagesV1.CountMessagesResponseSchema, { count: answerOf<number>(result, "count") });
    },
    getFeed,
    async feedPage(request, options, render) {
      const environmentId = scopeHeaderOf(options, ENVIRONMENT_HEADER);
      const subscriberId = request.subscriberId ?? "";
      // The routes build a request's fields in one order, so equal requests have equal JSON.
      const part = JSON.stringify(request);
      const kept = environmentId === undefined ? undefined : feedPages?.get(environmentId, subscriberId, part);
      if (kept) return kept;
      const ticket = feedPages?.ticket();
      const page = render(await getFeed(request, options));
      if (ticket && environmentId !== undefined) feedPages!.set(ticket, environmentId, subscriberId, page, part);
      return page;
    },
    markMessages: forgetting(client.markMessages, bySubscriberId),
    markAllMessages: forgetting(client.markAllMessages, bySubscriberId),
    deleteMessage: forgetting(client.deleteMessage, everyFeed),
    deleteTransactionMessages: forgetting(client.deleteTransactionMessages, everyFeed),
  };
}
