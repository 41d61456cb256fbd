import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { createCoalescer, scopeKeyOf } from "./coalesce.js";

type MessagesClient = Client<typeof messagesV1.MessageService>;

interface PendingCount {
  request: Parameters<MessagesClient["countMessages"]>[0];
  headers: CallOptions["headers"];
}

/**
 * The messages client the routes use: CountMessages (the unseen badge, polled by every open
 * inbox) is coalesced, so the counts of one environment that arrive within a millisecond travel
 * as one BatchCountMessages call instead of one RPC each. Each caller still gets its own answer
 * or its own error.
 */
export function coalescingMessagesClient(client: MessagesClient): MessagesClient {
  const counts = createCoalescer<PendingCount, messagesV1.CountResult>({
    maxBatch: 500,
    maxWaitMs: 1,
    run: async (_, items) => {
      const reply = await client.batchCountMessages({ counts: items.map((item) => item.request) }, { headers: items[0]!.headers });
      return reply.results;
    },
  });
  return {
    ...client,
    async countMessages(request, options) {
      const { result } = await counts.submit(scopeKeyOf(options), { request, headers: options?.headers });
      if (result.case === "count") return create(messagesV1.CountMessagesResponseSchema, { count: result.value });
      if (result.case === "error") throw new ConnectError(result.value.message, result.value.code as Code);
      throw new ConnectError("the batch answered no result for this count", Code.Internal);
    },
  };
}
