import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { batched } from "./coalesce.js";

type MessagesClient = Client<typeof messagesV1.MessageService>;

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
 * each caller still gets its own answer or its own error.
 */
export function coalescingMessagesClient(client: MessagesClient): MessagesClient {
  const count = batched(async (counts: MessageInitShape<typeof messagesV1.CountMessagesRequestSchema>[], headers) => {
    const reply = await client.batchCountMessages({ counts }, { headers });
    return reply.results;
  });
  const feed = batched(async (feeds: MessageInitShape<typeof messagesV1.GetFeedRequestSchema>[], headers) => {
    const reply = await client.batchGetFeed({ feeds }, { headers });
    return reply.results;
  });
  return {
    ...client,
    async countMessages(request, options) {
      const { result } = await count(request, options);
      return create(messagesV1.CountMessagesResponseSchema, { count: answerOf<number>(result, "count") });
    },
    async getFeed(request, options) {
      const { result } = await feed(request, options);
      return answerOf<messagesV1.GetFeedResponse>(result, "feed");
    },
  };
}
