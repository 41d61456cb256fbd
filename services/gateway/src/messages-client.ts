import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import type { messagesV1 } from "@notify/proto";
import { createFollowedCache, ENVIRONMENT_HEADER, type FollowedCache } from "@notify/runtime";
import { batched, scopeHeaderOf } from "./coalesce.js";
import type { JsonBytes } from "./route.js";

type MessagesClient = Client<typeof messagesV1.MessageService>;

/**
 * Feed pages kept between polls as the bytes answered, by subscriber (external id) and request.
 * Kept only while the changes that would make them wrong are followed (FEED_PAGES_FOLLOW): the messages
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
    name: "gateway_feed_pages",
    max: KEPT_FEEDS,
    maxSize: maxBytes,
    // The memory the bytes keep: a small Buffer is a slice of an 8 KB pool it keeps whole.
    sizeOf: (page) => page.bytes.buffer.byteLength + PAGE_OVERHEAD_BYTES,
  });
}

export type UnseenQuery = MessageInitShape<typeof messagesV1.CountMessagesRequestSchema>;
export type FeedQuery = MessageInitShape<typeof messagesV1.GetFeedRequestSchema>;

/** One subscriber's unseen (or seen) count; travels in a BatchCountMessages with its concurrent peers. */
export type CountUnseen = (query: UnseenQuery, call: CallOptions) => Promise<number>;

/**
 * One feed page as `render` writes it: the page kept for this request if nothing changed it
 * since, else what `render` makes of the page a BatchGetFeed (shared with concurrent peers)
 * answered, kept for the next poll. Callers of one batch share a reply, so `render` should make
 * one JsonBytes per reply (jsonOnce). Routes that render a page differently name their rendering.
 */
export type FeedPage = (
  query: FeedQuery,
  call: CallOptions,
  render: (reply: messagesV1.GetFeedResponse) => JsonBytes,
  renderName?: string,
) => Promise<JsonBytes>;

/** A batch item's answer, or the error the item failed with. */
function answerOf<T>(result: { case: string; value: T | messagesV1.BatchError } | { case: undefined }, answer: string): T {
  if (result.case === answer) return result.value as T;
  if (result.case === "error") {
    const { message, code } = result.value as messagesV1.BatchError;
    throw new ConnectError(message, code as Code);
  }
  throw new ConnectError("the batch answered nothing for this request", Code.Internal);
}

/**
 * The unseen count every open inbox polls, batched (DESIGN §5: a hot read must not cost one RPC
 * per request); each caller still gets its own answer or its own error.
 */
export function countUnseenBatched(client: MessagesClient): CountUnseen {
  const count = batched(async (counts: UnseenQuery[], headers) => (await client.batchCountMessages({ counts }, { headers })).results);
  return async (query, call) => answerOf<number>((await count(query, call)).result, "count");
}

/**
 * The first feed page every open inbox polls, batched like the unseen count, and kept in
 * `feedPages` when given, so a page polled again unchanged costs no hop at all.
 */
export function feedPageBatched(client: MessagesClient, feedPages?: FeedPages): FeedPage {
  const feed = batched(async (feeds: FeedQuery[], headers) => (await client.batchGetFeed({ feeds }, { headers })).results);
  return async (query, call, render, renderName = "") => {
    const environmentId = scopeHeaderOf(call, ENVIRONMENT_HEADER);
    const subscriberId = query.subscriberId ?? "";
    // The routes build a request's fields in one order, so equal requests have equal JSON; a page
    // rendered another way is kept apart.
    const part = renderName + JSON.stringify(query);
    const kept = environmentId === undefined ? undefined : feedPages?.get(environmentId, subscriberId, part);
    if (kept) return kept;
    const ticket = feedPages?.ticket();
    const page = render(answerOf<messagesV1.GetFeedResponse>((await feed(query, call)).result, "feed"));
    if (ticket && environmentId !== undefined) feedPages!.set(ticket, environmentId, subscriberId, page, part);
    return page;
  };
}

export type InboxListQuery = MessageInitShape<typeof messagesV1.ListInboxMessagesRequestSchema>;

/** One subscriber's Inbox page; travels in a BatchListInboxMessages with its concurrent peers. */
export type InboxPage = (query: InboxListQuery, call: CallOptions) => Promise<messagesV1.ListInboxMessagesResponse>;

/** The Inbox list every open `<Inbox />` reads, batched like the feed (a hot read must not cost one RPC per request). */
export function inboxPageBatched(client: MessagesClient): InboxPage {
  const list = batched(
    async (lists: InboxListQuery[], headers) => (await client.batchListInboxMessages({ lists }, { headers })).results,
    // Its creation bounds are Timestamps, whose seconds are bigints.
    (query) => JSON.stringify(query, (_, value: unknown) => (typeof value === "bigint" ? value.toString() : value)),
  );
  return async (query, call) => answerOf<messagesV1.ListInboxMessagesResponse>((await list(query, call)).result, "page");
}
