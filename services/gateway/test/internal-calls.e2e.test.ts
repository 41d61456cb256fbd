import { Code, ConnectError } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";
import { createClient, createRpcTransport, scopeHeaders } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSubscriber, seeder } from "./messages-fixtures.js";
import { INTERNAL_RPC_TOKEN, startStack, type Stack } from "./stack.js";

// A pod that reaches a service's port cannot act for a tenant by sending its scope headers: the
// service asks for the token every notify process carries (INTERNAL_RPC_TOKEN).

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(() => stack?.stop());

describe("internal calls", () => {
  it("are refused without the process token, whatever scope they name, and served with it", async () => {
    const ada = await createSubscriber(stack, "internal-ada");
    const seed = seeder(stack, ada.scope);
    await seed.inApp(ada, 1);
    seed.close();
    const request = { subscriberIds: [ada.subscriberId], limit: 100 };
    const call = { headers: scopeHeaders(ada.scope) };
    for (const internalToken of [undefined, "a-guessed-internal-rpc-token-0123456789"]) {
      const stranger = createRpcTransport(stack.messagesUrl, 5_000, { internalToken });
      try {
        const refused = await createClient(messagesV1.MessageService, stranger.transport)
          .batchGetInboxCounts(request, call)
          .catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(ConnectError);
        expect((refused as ConnectError).code).toBe(Code.Unauthenticated);
      } finally {
        stranger.close();
      }
    }
    const notify = createRpcTransport(stack.messagesUrl, 5_000, { internalToken: INTERNAL_RPC_TOKEN });
    try {
      const { results } = await createClient(messagesV1.MessageService, notify.transport).batchGetInboxCounts(request, call);
      expect(results[0]?.result).toMatchObject({ case: "counts", value: { unread: { count: 1 } } });
    } finally {
      notify.close();
    }
    // The gateway, which carries the token, is served as before.
    expect((await stack.request("GET", `/v1/subscribers/${ada.subscriberId}/notifications/unseen`)).body).toEqual({ data: { count: 1 } });
  });
});
