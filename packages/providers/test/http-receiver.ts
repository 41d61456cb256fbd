import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, type OutboundHttp } from "../src/outbound.js";
import type { ProviderCredentials, SendContext } from "../src/types.js";

/** One request as the receiver saw it. */
export interface Received {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON. */
  body?: string | object;
}

/** A local stand-in for a vendor's API: records every request and answers what `respond` says. */
export interface Receiver {
  url: string;
  received: Received[];
  respond: (request: Received) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(respond: (request: Received) => Answer = () => ({})): Promise<Receiver> {
  const receiver: Receiver = {
    url: "",
    received: [],
    respond,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const seen: Received = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") };
      receiver.received.push(seen);
      const answer = receiver.respond(seen);
      const json = typeof answer.body === "object";
      response.writeHead(answer.status ?? 200, { "content-type": json ? "application/json" : "text/plain", ...answer.headers });
      response.end(json ? JSON.stringify(answer.body) : (answer.body ?? ""));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** The outbound guard as the project's tests run it: local receivers allowed. */
export const testOutbound = (): OutboundHttp => createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });

export function sendContext(http: OutboundHttp, credentials: ProviderCredentials): SendContext {
  return { integrationId: "integration-1", credentials, http, idempotencyKey: "message-1" };
}

/** The value of an application/x-www-form-urlencoded body as an object. */
export const formOf = (body: string) => Object.fromEntries(new URLSearchParams(body));

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
