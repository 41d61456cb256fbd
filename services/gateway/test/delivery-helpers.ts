import { eventually, type Receiver, type SmtpSink } from "@notify/testing";
import { expect } from "vitest";
import type { Data, Requester } from "./stack.js";

/** A message as GET /v1/messages answers it, the fields delivery tests read. */
export interface Message {
  _id: string;
  _notificationId: string;
  _subscriberId: string;
  channel: string;
  status: string;
  deliveredAt: string[];
  providerId?: string;
  errorId?: string;
  errorText?: string;
  email?: string;
  phone?: string;
  deviceTokens?: string[];
}

/** One row of GET /v1/execution-details. */
export interface ExecutionDetail {
  _messageId: string;
  status: string;
  providerId: string;
  detail: string;
  isRetry: boolean;
  raw: string;
}

/** Creates an active workflow and answers its trigger identifier. */
export async function createWorkflow(stack: Requester, name: string, steps: unknown[]): Promise<string> {
  const reply = await stack.request<Data<{ triggers: { identifier: string }[] }>>("POST", "/v1/workflows", { name, active: true, steps });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.data.triggers[0].identifier;
}

/** A nodemailer integration's credentials for a local SMTP sink (plain SMTP, no TLS). */
export const sinkCredentials = (sink: Pick<SmtpSink, "port">, more: Record<string, string> = {}) => ({
  host: "localhost",
  port: String(sink.port),
  secure: false,
  ignoreTls: true,
  from: "notify@example.com",
  ...more,
});

/** Creates an active integration (unless the body says otherwise) and answers its id. */
export async function createIntegration(stack: Requester, body: Record<string, unknown>): Promise<string> {
  const reply = await stack.request<Data<{ _id: string }>>("POST", "/v1/integrations", { active: true, ...body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.data._id;
}

export async function messagesOf(stack: Requester, transactionId: string, channel: string): Promise<Message[]> {
  const reply = await stack.request<Data<Message[]>>("GET", `/v1/messages?transactionId=${encodeURIComponent(transactionId)}&channel=${channel}&limit=100`);
  expect(reply.status).toBe(200);
  return reply.body.data;
}

/** The transaction's one message of that channel, once `done` says its delivery has settled. */
export async function settledMessage(
  stack: Requester,
  transactionId: string,
  channel: string,
  done: (message: Message) => boolean,
  timeoutMs = 15_000,
): Promise<Message> {
  return eventually(async () => {
    const [message] = await messagesOf(stack, transactionId, channel);
    return message && done(message) ? message : undefined;
  }, timeoutMs);
}

export async function executionDetails(stack: Requester, message: Message, subscriberId: string): Promise<ExecutionDetail[]> {
  const reply = await stack.request<Data<ExecutionDetail[]>>(
    "GET",
    `/v1/execution-details?notificationId=${message._notificationId}&subscriberId=${encodeURIComponent(subscriberId)}`,
  );
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.data;
}

export const delivered = (message: Message) => message.deliveredAt.length > 0;

/** Recipients `${prefix}-0`… whose `providerId` channel posts to the receiver, each on its own path. */
export const webhookRecipients = (prefix: string, count: number, providerId: string, receiver: Receiver) =>
  Array.from({ length: count }, (_, index) => ({
    subscriberId: `${prefix}-${index}`,
    channels: [{ providerId, credentials: { webhookUrl: `${receiver.url}/${prefix}/${index}` } }],
  }));

/**
 * Triggers the chat workflow for `count` recipients whose chat webhook is the (slow) receiver, a
 * hundred per trigger, each hundred on the next of `providerIds` (Slack by default), and waits
 * until every message is written and `busy` says the receiver is at work: what a test measures
 * next is the slow providers, not the fan-out. Answers the transaction ids, comma-separated as GET
 * /v1/messages takes them.
 */
export async function loadSlowChat(
  stack: Requester,
  workflow: string,
  receiver: Receiver,
  count: number,
  busy: () => boolean,
  providerIds: readonly string[] = ["slack"],
): Promise<string> {
  const transactionIds: string[] = [];
  for (let start = 0; start < count; start += 100) {
    const transactionId = `slow-${start}`;
    const providerId = providerIds[(start / 100) % providerIds.length]!;
    const to = webhookRecipients(transactionId, Math.min(100, count - start), providerId, receiver);
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, transactionId });
    expect(reply.body.data.status).toBe("processed");
    transactionIds.push(transactionId);
  }
  const joined = transactionIds.join(",");
  await eventually(
    async () => {
      const written = await stack.request("GET", `/v1/messages?channel=chat&transactionId=${joined}&limit=1000`);
      return written.body.data.length === count && busy() ? true : undefined;
    },
    30_000,
    20,
  );
  return joined;
}
