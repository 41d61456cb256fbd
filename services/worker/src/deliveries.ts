import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import type { CallOptions, Client } from "@connectrpc/connect";
import { deliveriesV1, type messagesV1 } from "@notify/proto";
import { channelName, jobSubject, publishJobs, type JobStream, type Origin, type OutgoingJob } from "@notify/runtime";
import type { NatsConnection } from "nats";
import type { Composed } from "./compose.js";
import { writeMessages } from "./message-groups.js";

/** Messages with a send per CreateMessages call (each answers its id, so they are not grouped). */
const SENDS_PER_CALL = 1_000;

/** Hands sends to the delivery stage: resolves once the stream has them. */
export type PublishDeliveries = (jobs: readonly deliveriesV1.DeliveryJob[]) => Promise<void>;

/** The origin of the trigger job a send comes from (its request id and trace), if it has one. */
export type OriginOfSend = (job: deliveriesV1.DeliveryJob) => Origin | undefined;

export function deliveryPublisher(nats: NatsConnection, stream: JobStream, originOf: OriginOfSend): PublishDeliveries {
  return (jobs) =>
    publishJobs(
      nats,
      jobs.map(
        (job): OutgoingJob => ({
          subject: jobSubject(stream, channelName(job.channel) ?? "unspecified"),
          data: toBinary(deliveriesV1.DeliveryJobSchema, job),
          // A redelivered trigger job writes nothing new and publishes the same ids: absorbed here,
          // and past the stream's window by the send lease.
          msgID: job.messageId,
          origin: originOf(job),
        }),
      ),
    );
}

/**
 * Writes composed messages and hands those with a send to the delivery stage once they are
 * written, so no send ever waits on fan-out and no message is sent before it exists. Answers how
 * many messages were new. A message written by an earlier run of the same job is handed over
 * again: its send lease makes sure it is sent once.
 */
export async function writeAndHandOver(
  composed: readonly Composed[],
  scope: { organizationId: string; environmentId: string },
  client: Client<typeof messagesV1.MessageService>,
  publish: PublishDeliveries,
  call: CallOptions,
): Promise<number> {
  const plain = composed.filter((item) => !item.delivery).map((item) => item.message);
  const sending = composed.filter((item) => item.delivery);
  let created = await writeMessages(client, plain, call);
  for (let start = 0; start < sending.length; start += SENDS_PER_CALL) {
    const part = sending.slice(start, start + SENDS_PER_CALL);
    const reply = await client.createMessages({ messages: part.map((item) => item.message) }, call);
    created += reply.createdCount;
    const createdAt = timestampNow();
    const jobs = reply.messages.map((written, index) => {
      const { message, delivery } = part[index]!;
      return create(deliveriesV1.DeliveryJobSchema, {
        organizationId: scope.organizationId,
        environmentId: scope.environmentId,
        messageId: written.id,
        transactionId: message.transactionId,
        externalSubscriberId: message.externalSubscriberId,
        subscriberId: message.subscriberId,
        channel: message.channel,
        integrationId: delivery!.integration.id,
        providerId: delivery!.integration.providerId,
        createdAt,
        content: delivery!.content,
        ...(delivery!.continuation ? { continuation: delivery!.continuation } : {}),
      });
    });
    await publish(jobs);
  }
  return created;
}
