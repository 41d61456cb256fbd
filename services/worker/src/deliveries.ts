import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { CallOptions, Client } from "@connectrpc/connect";
import { deliveriesV1, messagesV1 } from "@notify/proto";
import type { DeliveryChannel } from "@notify/providers";
import { channelName, jobSubject, maxJobBytes, publishJobs, type Channel, type JobStream, type Origin, type OutgoingJob } from "@notify/runtime";
import type { NatsConnection } from "nats";
import type { Composed } from "./compose.js";
import { writeMessages } from "./message-groups.js";

/** Novu's errorId for a send that failed, per channel. */
export const FAILURE_ERROR_IDS: Record<DeliveryChannel, string> = {
  email: "mail_unexpected_error",
  sms: "unexpected_sms_error",
  chat: "unexpected_chat_error",
  push: "unexpected_push_error",
};

/** Messages with a send per CreateMessages call (each answers its id, so they are not grouped). */
const SENDS_PER_CALL = 1_000;

/**
 * Sends per stream message: a page's sends share one publish, one delivery, one acknowledgement
 * and the statements that claim and record them, where one send each paid all of those.
 */
export const SENDS_PER_PAGE = 50;

/** The subject of the pages of sends on a channel. */
export const pageSubject = (stream: JobStream, channel: Channel) => jobSubject(stream, `pages.${channelName(channel) ?? "unspecified"}`);

/** Whether a subject of the deliveries stream holds pages (else one DeliveryJob, as published before pages). */
export const isPageSubject = (stream: JobStream, subject: string) => subject.startsWith(`${stream.subjectPrefix}.pages.`);

/**
 * Hands pages of sends to the delivery stage: resolves once the stream has them, with the sends
 * too large for a stream message on their own, which were not handed over.
 */
export type PublishDeliveries = (pages: readonly deliveriesV1.DeliveryPage[]) => Promise<deliveriesV1.DeliveryJob[]>;

/**
 * The pages as stream messages of at most `maxBytes`: a page over it is split in halves until each
 * part fits (a page of big emails or push payloads), and a send that does not fit on its own is
 * answered apart.
 */
export function encodePages(
  pages: readonly deliveriesV1.DeliveryPage[],
  maxBytes: number,
): { encoded: { page: deliveriesV1.DeliveryPage; data: Uint8Array }[]; tooLarge: deliveriesV1.DeliveryJob[] } {
  const encoded: { page: deliveriesV1.DeliveryPage; data: Uint8Array }[] = [];
  const tooLarge: deliveriesV1.DeliveryJob[] = [];
  const place = (page: deliveriesV1.DeliveryPage) => {
    const data = toBinary(deliveriesV1.DeliveryPageSchema, page);
    if (data.length <= maxBytes) encoded.push({ page, data });
    else if (page.jobs.length === 1) tooLarge.push(page.jobs[0]!);
    else {
      const half = Math.ceil(page.jobs.length / 2);
      for (const jobs of [page.jobs.slice(0, half), page.jobs.slice(half)]) place(create(deliveriesV1.DeliveryPageSchema, { ...page, jobs }));
    }
  };
  for (const page of pages) place(page);
  return { encoded, tooLarge };
}

/** The origin of the work a send comes from (its request id and trace), if it has one. */
export type OriginOfSend = (job: deliveriesV1.DeliveryJob) => Origin | undefined;

/**
 * The most a send's page grows by when it is handed back: its due time and its count of returns.
 * Sends are handed over within this much less than a stream message takes, so that each fits
 * again on its own when it comes back.
 */
export const HAND_BACK_GROWTH_BYTES = 32;

/** Why pages are published: handed over from fan-out, or handed back by the delivery stage. */
export type PageUse = "hand-over" | "hand-back";

export function deliveryPublisher(nats: NatsConnection, stream: JobStream, use: PageUse, originOf: OriginOfSend): PublishDeliveries {
  return async (pages) => {
    const { encoded, tooLarge } = encodePages(pages, maxJobBytes(nats) - (use === "hand-over" ? HAND_BACK_GROWTH_BYTES : 0));
    await publishJobs(
      nats,
      encoded.map(({ page, data }): OutgoingJob => {
        const first = page.jobs[0]!;
        const handedBack = Math.max(...page.jobs.map((job) => job.handedBack));
        return {
          subject: pageSubject(stream, first.channel),
          data,
          // The same page published again (by a redelivered trigger job, or handed back again by
          // a second copy of its page) is absorbed here, and past the stream's window by the send leases.
          msgID: `${first.messageId}.${page.jobs.at(-1)!.messageId}.${page.jobs.length}.${handedBack}`,
          origin: originOf(first),
        };
      }),
    );
    return tooLarge;
  };
}

/**
 * The sends in pages of at most SENDS_PER_PAGE, each to one integration for one transaction (one
 * trace), in their order.
 */
export function pagesOf(jobs: readonly deliveriesV1.DeliveryJob[], notBefore?: Timestamp): deliveriesV1.DeliveryPage[] {
  const filling = new Map<string, deliveriesV1.DeliveryJob[]>();
  const pages: deliveriesV1.DeliveryJob[][] = [];
  for (const job of jobs) {
    const key = `${job.integrationId}/${job.transactionId}`;
    let page = filling.get(key);
    if (!page) {
      page = [];
      filling.set(key, page);
      pages.push(page);
    }
    page.push(job);
    if (page.length === SENDS_PER_PAGE) filling.delete(key);
  }
  return pages.map((page) => create(deliveriesV1.DeliveryPageSchema, { jobs: page, ...(notBefore ? { notBefore } : {}) }));
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
    // A message this call wrote was written about now; one written by an earlier run of the job keeps its time.
    const now = timestampNow();
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
        createdAt: written.writtenAt ?? now,
        content: delivery!.content,
        ...(delivery!.continuationKey ? { continuationKey: delivery!.continuationKey } : {}),
        ...(delivery!.providerData ? { providerData: delivery!.providerData } : {}),
      });
    });
    await refuseTooLarge(await publish(pagesOf(jobs)), client, call);
  }
  return created;
}

/**
 * Ends as an error each message whose send is larger than a stream message may be (an email with
 * large attachments, or a body near the rendering bound): it cannot reach the delivery stage, and
 * the other sends of its page go on without it.
 */
async function refuseTooLarge(jobs: readonly deliveriesV1.DeliveryJob[], client: Client<typeof messagesV1.MessageService>, call: CallOptions) {
  if (jobs.length === 0) return;
  const startedAt = timestampNow();
  const attempts = jobs.map((job) => {
    const errorText = `The message is ${toBinary(deliveriesV1.DeliveryJobSchema, job).length} bytes to send: more than the message stream carries, so it is not sent`;
    const channel = channelName(job.channel) as DeliveryChannel;
    return {
      messageId: job.messageId,
      attempt: 1,
      providerId: job.providerId,
      status: messagesV1.AttemptStatus.FAILED,
      startedAt,
      durationMs: 0,
      detail: errorText,
      errorId: FAILURE_ERROR_IDS[channel],
      errorText,
    };
  });
  await client.recordDeliveries({ attempts }, call);
}
