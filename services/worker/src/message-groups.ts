import { create } from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import { messagesV1 } from "@notify/proto";

/** Messages per CreateMessages call, counting every recipient of every group. */
const MESSAGES_PER_CALL = 2_000;

/** Whether an object has no keys of its own (without listing them). */
function isEmpty(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/**
 * Payloads and overrides are shared by every message of a job (one object each), so they are
 * told apart by identity rather than by content: comparing them by value would cost what grouping
 * saves. Empty ones are all alike: a job without a payload may give each message an `{}` of its own.
 */
function identities() {
  const ids = new WeakMap<object, number>();
  let next = 2;
  return (value: object | undefined) => {
    if (value === undefined) return 0;
    if (isEmpty(value)) return 1;
    let id = ids.get(value);
    if (id === undefined) {
      id = next++;
      ids.set(value, id);
    }
    return id;
  };
}

/** Everything that tells two messages apart but their recipient, as one string. */
function keyOf(message: messagesV1.NewMessage, identityOf: (value: object | undefined) => number): string {
  const content = message.content.case === "blocks" ? JSON.stringify(message.content.value.blocks) : (message.content.value ?? "");
  return [
    identityOf(message.payload),
    identityOf(message.overrides),
    message.transactionId,
    message.templateId,
    message.templateIdentifier,
    message.messageTemplateId,
    message.stepId,
    message.jobId,
    message.channel,
    message.content.case,
    content,
    message.subject,
    message.title,
    message.email,
    message.phone,
    message.directWebhookUrl,
    message.providerId,
    message.deviceTokens.join(","),
    message.cta ? JSON.stringify(message.cta) : "",
    message.feedId,
    message.feedIdentifier,
    message.status,
    message.errorId,
    message.errorText,
    message.deliveredAt.map((at) => `${at.seconds}.${at.nanos}`).join(","),
    message.severity,
    message.data ? JSON.stringify(message.data) : "",
    message.contextKeys.join(","),
    message.destination,
  ].join("\u0000");
}

/**
 * The messages as groups of messages alike but for their recipient, in first-seen order. A
 * broadcast page whose content does not depend on the subscriber becomes one group of a
 * thousand recipients; messages that differ (personalised content, addresses) stay alone.
 */
export function groupMessages(messages: readonly messagesV1.NewMessage[]): messagesV1.MessageGroup[] {
  const identityOf = identities();
  const groups = new Map<string, messagesV1.MessageGroup>();
  for (const message of messages) {
    const key = keyOf(message, identityOf);
    let group = groups.get(key);
    if (!group) {
      group = create(messagesV1.MessageGroupSchema, { message });
      groups.set(key, group);
    }
    // A literal, as for the message itself (compose.ts): one per recipient of a broadcast.
    group.recipients.push({
      $typeName: "notify.messages.v1.MessageRecipient",
      subscriberId: message.subscriberId,
      externalSubscriberId: message.externalSubscriberId,
    });
  }
  return [...groups.values()];
}

/** Writes the messages, grouped, in calls of at most MESSAGES_PER_CALL; answers how many were new. */
export async function writeMessages(
  client: Client<typeof messagesV1.MessageService>,
  messages: readonly messagesV1.NewMessage[],
  call: CallOptions,
): Promise<number> {
  const calls: messagesV1.MessageGroup[][] = [];
  let current: messagesV1.MessageGroup[] = [];
  let size = 0;
  for (const group of groupMessages(messages)) {
    for (let start = 0; start < group.recipients.length; ) {
      const recipients = group.recipients.slice(start, start + MESSAGES_PER_CALL - size);
      start += recipients.length;
      current.push(create(messagesV1.MessageGroupSchema, { message: group.message!, recipients }));
      size += recipients.length;
      if (size === MESSAGES_PER_CALL) {
        calls.push(current);
        current = [];
        size = 0;
      }
    }
  }
  if (current.length > 0) calls.push(current);
  let created = 0;
  for (const groups of calls) {
    created += (await client.createMessages({ groups, countOnly: true }, call)).createdCount;
  }
  return created;
}
