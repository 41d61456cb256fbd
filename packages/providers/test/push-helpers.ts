import type { Received } from "@notify/testing";
import type { PushMessage } from "../src/types.js";

export function pushMessage(tokens: string[], extra: Partial<PushMessage> = {}): PushMessage {
  return {
    tokens,
    title: "Order shipped",
    content: "Your order 42 is on its way",
    payload: { orderId: 42, carrier: "ups" },
    overrides: {},
    subscriber: { subscriberId: "subscriber-1", email: "ada@example.com" },
    ...extra,
  };
}

export const json = (request: Received) => JSON.parse(request.body) as Record<string, unknown>;
