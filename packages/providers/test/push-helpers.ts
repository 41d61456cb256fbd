import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, type OutboundHttp } from "../src/outbound.js";
import type { ProviderCredentials, PushMessage, SendContext } from "../src/types.js";

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact body bytes as text. */
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** A local HTTP receiver standing in for a vendor: records every request and answers through `answer`. */
export interface Receiver {
  url: string;
  received: Received[];
  answer: (request: Received) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(answer: (request: Received) => Answer): Promise<Receiver> {
  const receiver: Receiver = { url: "", received: [], answer, close: () => Promise.resolve() };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const received = { method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") };
      receiver.received.push(received);
      const { status, headers = {}, body } = receiver.answer(received);
      response.writeHead(status, { "content-type": "application/json", ...headers }).end(body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

/** The outbound guard as the project's tests run it: local receivers allowed. */
export const localOutbound = (): OutboundHttp => createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });

export function contextFor(http: OutboundHttp, credentials: ProviderCredentials, integrationId = "integration-1"): SendContext {
  return { integrationId, credentials, http, idempotencyKey: "message-1" };
}

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
