import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { commonV1, messagesV1 } from "@notify/proto";
import { createClient, createRpcTransport, objectId, scopeHeaders, type Scope } from "@notify/runtime";
import { INTERNAL_RPC_TOKEN, type Data, type Stack } from "./stack.js";

/** Fields of a new message, as an init object. */
export type NewMessageInit = Exclude<MessageInitShape<typeof messagesV1.NewMessageSchema>, messagesV1.NewMessage>;

export interface Seeder {
  readonly scope: Scope;
  /** Creates the given messages through the batch RPC (the worker's write path); returns their ids. */
  create(messages: messagesV1.NewMessage[]): Promise<messagesV1.CreateMessagesResponse>;
  /** Creates `count` in-app messages for the subscriber, each of its own transaction; returns their ids, oldest first. */
  inApp(subscriber: SeededSubscriber, count: number, fields?: NewMessageInit): Promise<string[]>;
  close(): void;
}

export interface SeededSubscriber {
  id: string;
  subscriberId: string;
}

let transactions = 0;
export const nextTransactionId = () => `txn-${process.pid}-${++transactions}`;

/** A new message as the worker would send it, with every field of the spec's Message set. */
export function newMessage(subscriber: SeededSubscriber, fields: NewMessageInit = {}): messagesV1.NewMessage {
  return create(messagesV1.NewMessageSchema, {
    transactionId: nextTransactionId(),
    subscriberId: subscriber.id,
    externalSubscriberId: subscriber.subscriberId,
    templateId: "64b7f0c2a1b2c3d4e5f60718",
    templateIdentifier: "welcome",
    messageTemplateId: "64b7f0c2a1b2c3d4e5f60719",
    stepId: "step-in-app",
    channel: commonV1.Channel.IN_APP,
    content: { case: "text", value: "Hello" },
    providerId: "novu",
    cta: {
      type: "redirect",
      url: "https://example.com/welcome",
      action: { status: "pending", buttons: [{ type: "primary", content: "Open", resultContent: "Opened" }] },
    },
    feedId: "64b7f0c2a1b2c3d4e5f60720",
    feedIdentifier: "general",
    payload: { name: "Ada" },
    overrides: { email: { subject: "x" } },
    ...fields,
  });
}

/** Creates a subscriber through the API and a client of the messages service in its environment. */
export async function createSubscriber(stack: Stack, subscriberId: string, key = stack.key): Promise<SeededSubscriber & { scope: Scope }> {
  const reply = await stack.request<Data<{ _id: string; _organizationId: string; _environmentId: string }>>(
    "POST",
    "/v1/subscribers",
    { subscriberId, firstName: "First", lastName: "Last" },
    { authorization: `ApiKey ${key}` },
  );
  if (reply.status !== 201) throw new Error(`creating ${subscriberId}: ${reply.status} ${JSON.stringify(reply.body)}`);
  const { _id, _organizationId, _environmentId } = reply.body.data;
  return { id: _id, subscriberId, scope: { organizationId: _organizationId, environmentId: _environmentId } };
}

export function seeder(stack: Stack, scope: Scope): Seeder {
  const transport = createRpcTransport(stack.messagesUrl, 10_000, { internalToken: INTERNAL_RPC_TOKEN });
  const client = createClient(messagesV1.MessageService, transport.transport);
  const call = { headers: scopeHeaders(scope) };
  const seed: Seeder = {
    scope,
    create: (messages) => client.createMessages({ messages }, call),
    async inApp(subscriber, count, fields = {}) {
      const reply = await seed.create(Array.from({ length: count }, () => newMessage(subscriber, fields)));
      return reply.messages.map((message) => message.id);
    },
    close: () => transport.close(),
  };
  return seed;
}

export const unknownMessageId = () => objectId();
