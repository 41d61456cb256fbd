import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { deliveriesV1, messagesV1, type connectionsV1, type integrationsV1, type subscribersV1, type triggersV1 } from "@notify/proto";
import {
  OutboundRefused,
  OutboundTimeout,
  renderEmailBody,
  ProviderError,
  type DeliveryChannel,
  type MessageByChannel,
  type OutboundHttp,
  type ChatMessage,
  type ProviderCredentials,
  type Providers,
  type SendResult,
} from "@notify/providers";
import {
  cacheLookups,
  channelName,
  Counter,
  createCoalescer,
  keptLoads,
  Histogram,
  inSpan,
  SpanKind,
  metricsRegistry,
  scopeHeaders,
  storableText,
  type Channel,
  type JobStream,
  type JsMsg,
  type Later,
  type Logger,
  type Pool,
} from "@notify/runtime";
import { FAILURE_ERROR_IDS, isPageSubject, pagesOf, pageSubject, type PublishDeliveries } from "./deliveries.js";
import { createLanes, createRoom, type LaneTicket } from "./lanes.js";
import * as store from "./store.js";

export interface DeliveryStageDeps {
  /** The worker's own schema: send leases, and the dead letters of sends refused outright. */
  pool: Pool;
  /** The deliveries stream the stage consumes. */
  stream: JobStream;
  /** Puts sends to come back later on the stream, as pages of their own. */
  handBack: PublishDeliveries;
  providers: Providers;
  outbound: OutboundHttp;
  integrations: Client<typeof integrationsV1.IntegrationService>;
  /** Opens the channel connection a Slack endpoint posts with, when it is sent. */
  connections: Client<typeof connectionsV1.ChannelConnectionService>;
  messages: Client<typeof messagesV1.MessageService>;
  /** Schedules the rest of a run that waited for a send. */
  triggers: Client<typeof triggersV1.TriggerService>;
  /** Drops push tokens a provider reported invalid. */
  subscribers: Client<typeof subscribersV1.SubscriberService>;
  log: Logger;
  /** How long after its message was written a send may still be retried. */
  budgetMs: number;
  /** Sends held at once (waiting for a place, claiming, calling, recording); more wait on their page. */
  held: number;
  /** Sends under way at once per integration; more wait, and past a bound come back later. */
  perIntegration: number;
  /** How long a lease may stay 'sending' before its worker is taken for dead (the jobs' ack wait). */
  orphanAfterMs: number;
  /** DELIVERY_MAX_AGE_MS: a send whose message is older is not made (its lease may be gone). */
  maxAgeMs: number;
}

/** The channel a job sends on; in-app is never sent through a provider. */
function deliveryChannelOf(channel: Channel): DeliveryChannel | undefined {
  const name = channelName(channel);
  return name === "in_app" ? undefined : name;
}

/** When a send's message was written (the budget and the max age count from it); unset in jobs of old builds. */
function writtenAtMs(job: deliveriesV1.DeliveryJob): number | undefined {
  return job.createdAt ? timestampDate(job.createdAt).getTime() : undefined;
}

export const OUTCOME_UNKNOWN = "delivery_outcome_unknown";
export const TOO_OLD = "delivery_too_old";

const providerSends = new Counter<"channel" | "provider" | "outcome">({
  name: "notify_provider_sends_total",
  help: "Provider calls by channel, provider and outcome (sent; retrying: failed, to be retried; failed; unknown: the worker died during the call)",
  labelNames: ["channel", "provider", "outcome"],
  registers: [metricsRegistry],
});

const providerSendDuration = new Histogram<"channel" | "provider">({
  name: "notify_provider_send_duration_seconds",
  help: "Time a provider took to answer a send, by channel and provider",
  labelNames: ["channel", "provider"],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

/** Why a send goes back on the stream for later. */
const HAND_BACK_REASONS = ["retry", "busy", "lease", "error"] as const;
type HandBackReason = (typeof HAND_BACK_REASONS)[number];

/** A send to come back later: a retry of a failed call, its integration busy, its lease held elsewhere, or a service that failed. */
interface Back {
  retryInMs: number;
  reason: HandBackReason;
}

const sendsHandedBack = new Counter<"reason">({
  name: "notify_delivery_sends_handed_back_total",
  help: "Sends the delivery stage put back on the stream for later, by reason (retry: a failed call; busy: their integration; lease: held elsewhere; error: a service failed)",
  labelNames: ["reason"],
  registers: [metricsRegistry],
});

const handedBackSeries = Object.fromEntries(HAND_BACK_REASONS.map((reason) => [reason, sendsHandedBack.labels(reason)])) as Record<
  HandBackReason,
  Counter.Internal
>;

const sendsDeadLettered = new Counter({
  name: "notify_delivery_sends_dead_lettered_total",
  help: "Sends the delivery stage dead-lettered on their own, a service having refused their data, while the rest of their page went on",
  registers: [metricsRegistry],
});

const sendsTooOld = new Counter({
  name: "notify_delivery_sends_too_old_total",
  help: "Sends not made because their message was written longer ago than DELIVERY_MAX_AGE_MS",
  registers: [metricsRegistry],
});

const SEND_OUTCOMES = ["sent", "retrying", "failed", "unknown"] as const;
type SendOutcome = (typeof SEND_OUTCOMES)[number];

interface SendSeries {
  outcomes: Record<SendOutcome, Counter.Internal>;
  duration: Histogram.Internal<"channel" | "provider">;
}

const sendSeries = new Map<string, SendSeries>();

/** The series of one channel's provider, made on its first send. */
function sendSeriesOf(channel: DeliveryChannel, providerId: string): SendSeries {
  const key = `${channel}/${providerId}`;
  let series = sendSeries.get(key);
  if (!series) {
    series = {
      outcomes: Object.fromEntries(SEND_OUTCOMES.map((outcome) => [outcome, providerSends.labels(channel, providerId, outcome)])) as Record<
        SendOutcome,
        Counter.Internal
      >,
      duration: providerSendDuration.labels(channel, providerId),
    };
    sendSeries.set(key, series);
  }
  return series;
}

/** Units a length of time is named in, largest first. */
const TIME_UNITS = [
  { unit: "day", ms: 86_400_000 },
  { unit: "hour", ms: 3_600_000 },
  { unit: "minute", ms: 60_000 },
  { unit: "second", ms: 1_000 },
] as const;

/** A length of time in words, in the largest unit it holds one of ("30 days", "1.5 hours"). */
export function durationText(ms: number): string {
  const { unit, ms: unitMs } = TIME_UNITS.find((candidate) => ms >= candidate.ms) ?? TIME_UNITS.at(-1)!;
  return new Intl.NumberFormat("en", { style: "unit", unit, unitDisplay: "long", maximumFractionDigits: 1 }).format(ms / unitMs);
}

/** Waits before the 2nd, 3rd, … attempt when the provider names no time of its own. */
const BACKOFF_MS = [1_000, 5_000, 15_000, 30_000, 60_000, 120_000];
/** The least wait before another attempt, whatever a provider's Retry-After says. */
const MIN_RETRY_MS = 1_000;
/** A job given back (its integration busy, its lease held elsewhere) comes back after about this long. */
const BUSY_RETRY_MS = 1_000;
/** The first wait of a job given back by an integration none of whose calls has finished yet; doubled at each return. */
const UNPACED_RETRY_MS = 50;
/**
 * How long a job over its integration's bound may expect to wait in memory for a place: what
 * going back to the stream would cost it anyway, without the redelivery.
 */
const ADMISSION_WAIT_MS = BUSY_RETRY_MS;

/** Waits before writing a send's outcome again when Postgres refused it. */
const FINISH_RETRIES_MS = [100, 500, 2_000, 5_000];

/** Errors of the connection rather than of the request: worth another attempt. */
const TRANSIENT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ESOCKET",
  "ECONNECTION",
]);

interface Failure {
  transient: boolean;
  retryAfterMs: number | undefined;
  text: string;
}

function failureOf(error: unknown): Failure {
  if (error instanceof ProviderError) return { transient: error.transient, retryAfterMs: error.retryAfterMs, text: error.message };
  if (error instanceof OutboundRefused) return { transient: false, retryAfterMs: undefined, text: error.message };
  if (error instanceof OutboundTimeout) return { transient: true, retryAfterMs: undefined, text: error.message };
  const text = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  const name = (error as { name?: unknown } | undefined)?.name;
  const transient = (typeof code === "string" && (TRANSIENT_CODES.has(code) || code.startsWith("UND_ERR"))) || name === "TimeoutError" || name === "AbortError";
  return { transient, retryAfterMs: undefined, text };
}

/** Replaces every credential value found in a text: a provider may echo what it was sent. */
export function redact(text: string, credentials: ProviderCredentials, secrets: readonly string[] = []): string {
  // A provider's text is stored: one NUL in it would fail the statement of every send of its batch.
  let redacted = storableText(text);
  for (const value of [...Object.values(credentials), ...secrets]) {
    if (typeof value === "string" && value.length >= 4) redacted = redacted.split(value).join("[redacted]");
  }
  return redacted.length > 2_000 ? `${redacted.slice(0, 2_000)}…` : redacted;
}

/**
 * The integration's credentials as providers take them: a Struct of TLS options becomes a plain
 * object, and a field left blank ("", as dashboards and SDKs send one) is not set, so a provider
 * falls back to its default (a vendor's API address, the integration's sender) as for a field never set.
 */
export function credentialsOf(integration: integrationsV1.Integration): ProviderCredentials {
  const { $typeName: _type, tlsOptions, ...rest } = integration.credentials ?? ({} as integrationsV1.IntegrationCredentials);
  const set = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== "")) as Omit<ProviderCredentials, "tlsOptions">;
  return { ...set, ...(tlsOptions ? { tlsOptions } : {}) };
}

function messageFor(job: deliveriesV1.DeliveryJob): MessageByChannel[DeliveryChannel] | undefined {
  const content = job.content;
  switch (content.case) {
    case "email": {
      const email = content.value;
      const body = renderEmailBody(email.body.case === "blocks" ? email.body.value.blocks : (email.body.value ?? ""), email.branding);
      return {
        to: email.to,
        cc: email.cc,
        bcc: email.bcc,
        from: email.from,
        senderName: email.senderName,
        replyTo: email.replyTo,
        subject: email.subject,
        html: body.html,
        text: body.text,
        attachments: email.attachments.map((attachment) => ({ name: attachment.name, content: attachment.content, mime: attachment.mime })),
        ...(Object.keys(email.headers).length > 0 ? { headers: email.headers } : {}),
        customData: email.customData,
        ipPoolName: email.ipPoolName,
        notification: {
          messageId: job.messageId,
          transactionId: job.transactionId,
          subscriberId: job.externalSubscriberId,
          workflowIdentifier: email.workflowIdentifier,
        },
      };
    }
    case "sms":
      return {
        to: content.value.to,
        content: content.value.content,
        from: content.value.from,
        messageId: job.messageId,
        ...(content.value.customData ? { customData: content.value.customData } : {}),
      };
    case "chat":
      return {
        webhookUrl: content.value.webhookUrl,
        channel: content.value.channel,
        phone: content.value.phone,
        conversation: content.value.conversation,
        direct: content.value.direct,
        teamId: content.value.teamId,
        content: content.value.content,
        title: content.value.title,
        customData: content.value.customData,
      };
    case "push":
      return {
        tokens: content.value.tokens,
        title: content.value.title,
        content: content.value.content,
        // As Novu hands it to every push provider: the payload names the message it delivers.
        payload: { ...content.value.payload, __nvMessageId: job.messageId },
        overrides: content.value.overrides ?? {},
        subscriber: {
          ...(content.value.subscriber ?? { email: content.value.subscriberEmail, phone: content.value.subscriberPhone }),
          subscriberId: job.externalSubscriberId,
        },
        ...(content.value.step ? { step: content.value.step } : {}),
        messageId: job.messageId,
      };
    default:
      return undefined;
  }
}

/** What a send needs besides its lease: its integration (undefined once gone) and a Slack endpoint's channel connection. */
interface SendNeeds {
  integration: integrationsV1.Integration | undefined;
  connection: connectionsV1.ResolvedChannelConnection | null | undefined;
}

/** One send's part of a lease batch: the lease to claim before its call, or how its call ended. */
type LeaseChange = { claim: store.LeaseRequest; outcome?: undefined } | { claim?: undefined; outcome: store.LeaseOutcome };

interface Attempt {
  job: deliveriesV1.DeliveryJob;
  attempt: number;
  status: messagesV1.AttemptStatus;
  startedAt: Date;
  durationMs: number;
  detail: string;
  errorId?: string | undefined;
  errorText?: string | undefined;
  providerMessageId?: string | undefined;
}

/**
 * The delivery stage: takes pages of sends from JetStream and hands each send's message to the
 * provider at most once. The send lease is claimed in Postgres before the call; a job seen again
 * after its send finished only records the outcome again, and one whose worker died mid-call is
 * sent again only through a provider that deduplicates (same idempotency key), otherwise ends as
 * an error whose outcome is unknown. Lease claims, lease outcomes and attempt records of
 * concurrent jobs travel in batches.
 */
export function createDeliveryStage(deps: DeliveryStageDeps) {
  const { log } = deps;
  const lanes = createLanes({ slots: deps.perIntegration, places: deps.held, admissionWaitMs: ADMISSION_WAIT_MS });
  // A worker that dies leaves unknown at most the sends it held: a page's sends beyond the bound wait here.
  const room = createRoom(deps.held);
  /**
   * Messages whose job this process is handling. A second copy of one (JetStream delivers a job
   * again when its heartbeat came late) waits until the first is done: seeing the first's lease
   * 'sending', it would take it for a dead worker's.
   */
  const inHand = new Set<string>();
  const integrations = keptLoads<integrationsV1.Integration>({ max: 10_000, ttlMs: 5_000, lookups: cacheLookups("worker_integrations") });

  // Claims and outcomes of concurrent sends share one statement: a batch commits the outcomes of
  // the sends that just ended with the claims of those about to start. One batch at a time (here
  // and for the records): what arrives meanwhile makes the next one larger, and a busy machine
  // spends less on few large statements (each planned, each a round trip) than on many small ones.
  const leases = createCoalescer<LeaseChange, store.Lease | undefined>({
    maxBatch: 500,
    maxInFlight: 1,
    run: async (_, changes) => {
      const outcomes = changes.flatMap((change) => (change.outcome ? [change.outcome] : []));
      const finishing = new Set(outcomes.map((outcome) => outcome.messageId));
      // A message twice in one batch (a duplicate publish), or claimed while its send is being
      // finished, is claimed once or not at all; the other copy comes back later and finds it as it stands.
      const claimed = new Set<string>();
      const requests = changes.flatMap((change) => {
        const request = change.claim;
        if (!request || finishing.has(request.messageId) || claimed.has(request.messageId)) return [];
        claimed.add(request.messageId);
        return [request];
      });
      const answers = new Map((await store.finishAndClaimLeases(deps.pool, outcomes, requests)).map((lease) => [lease.message_id, lease]));
      return changes.map((change) => {
        if (!change.claim) return undefined;
        const lease = answers.get(change.claim.messageId);
        answers.delete(change.claim.messageId);
        return lease;
      });
    },
  });
  const claim = async (request: store.LeaseRequest) => {
    const started = performance.now();
    const lease = await leases.submit("", { claim: request });
    lanes.claimTook(performance.now() - started);
    return lease;
  };
  /**
   * Once the provider has answered, its outcome is written again while Postgres refuses it, for a
   * while, rather than given up at once: a lease left 'sending' reads later as a dead worker's.
   */
  const finish = async (outcome: store.LeaseOutcome) => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await leases.submit("", { outcome });
        return;
      } catch (error) {
        const waitMs = FINISH_RETRIES_MS[attempt];
        if (waitMs === undefined) throw error;
        log.warn({ err: error, messageId: outcome.messageId, retryInMs: waitMs }, "send outcome not written; writing it again");
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  };
  const records = createCoalescer<Attempt, void>({
    maxBatch: 500,
    maxInFlight: 1,
    run: async (_, attempts) => {
      const { job } = attempts[0]!;
      await deps.messages.recordDeliveries(
        {
          attempts: attempts.map((attempt) => ({
            messageId: attempt.job.messageId,
            attempt: attempt.attempt,
            providerId: attempt.job.providerId,
            status: attempt.status,
            startedAt: timestampFromDate(attempt.startedAt),
            durationMs: Math.round(attempt.durationMs),
            detail: attempt.detail,
            ...(attempt.errorId !== undefined ? { errorId: attempt.errorId } : {}),
            ...(attempt.errorText !== undefined ? { errorText: attempt.errorText } : {}),
            ...(attempt.providerMessageId !== undefined ? { providerMessageId: attempt.providerMessageId } : {}),
          })),
        },
        { headers: scopeHeaders(job) },
      );
      return attempts.map(() => undefined);
    },
  });
  const record = (attempt: Attempt) => records.submit(`${attempt.job.organizationId}/${attempt.job.environmentId}`, attempt);

  /** An integration as its environment has it now, read at most every few seconds per process; undefined when it is gone. */
  function integrationOf(job: deliveriesV1.DeliveryJob): Promise<integrationsV1.Integration | undefined> {
    const lookup = integrations(`${job.environmentId}/${job.integrationId}`, () =>
      deps.integrations.getIntegration({ id: job.integrationId }, { headers: scopeHeaders(job) }),
    );
    return lookup.catch((error: unknown) => {
      if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
      throw error;
    });
  }

  /**
   * The channel connection a Slack endpoint's send posts with: undefined for every other send,
   * null when the environment no longer has it for the run's contexts. Read at each send, so a
   * token is never carried on the stream and a renewed one is used at once.
   */
  async function connectionOf(job: deliveriesV1.DeliveryJob): Promise<connectionsV1.ResolvedChannelConnection | null | undefined> {
    if (job.content.case !== "chat" || job.content.value.connectionIdentifier === undefined) return undefined;
    const { connectionIdentifier: identifier, contextKeys } = job.content.value;
    return deps.connections.resolveChannelConnection({ identifier, contextKeys }, { headers: scopeHeaders(job) }).catch((error: unknown) => {
      if (error instanceof ConnectError && error.code === Code.NotFound) return null;
      throw error;
    });
  }

  /** Ends a claimed send without a call (nothing to send with): final, recorded as a failed attempt. */
  async function refuse(job: deliveriesV1.DeliveryJob, lease: store.Lease, errorId: string, errorText: string): Promise<undefined> {
    await finish({ messageId: job.messageId, state: "failed", errorId, errorText });
    await record({
      job,
      attempt: lease.attempts,
      status: messagesV1.AttemptStatus.FAILED,
      startedAt: new Date(),
      durationMs: 0,
      detail: errorText,
      errorId,
      errorText,
    });
    return undefined;
  }

  /**
   * Releases the rest of a run that waited for this send's step. Only the first release of a key
   * does anything, so a job seen again after its send may release it again (the first may have
   * been lost), and the step's other sends succeeding later run nothing more.
   */
  async function goOn(job: deliveriesV1.DeliveryJob): Promise<void> {
    const call = { headers: scopeHeaders(job) };
    if (job.continuationKey) {
      await deps.triggers.releaseHeldJobs({ holdKeys: [job.continuationKey] }, call);
      return;
    }
    // A job written before runs were held carries the rest itself.
    if (job.continuation) await deps.triggers.scheduleJobs({ jobs: [{ runAt: timestampFromDate(new Date()), job: job.continuation }] }, call);
  }

  /** Removes the push tokens a provider reported invalid from the subscriber's channel; a failure here loses no send. */
  async function dropInvalidTokens(job: deliveriesV1.DeliveryJob, tokens: readonly string[] | undefined): Promise<void> {
    // Tokens the trigger named (no channel of the subscriber's) are not the subscriber's to lose.
    if (!tokens?.length || job.content.case !== "push" || !job.content.value.channelIntegrationId) return;
    const request = { subscriberId: job.externalSubscriberId, integrationId: job.content.value.channelIntegrationId, tokens: [...tokens] };
    await deps.subscribers.removeDeviceTokens(request, { headers: scopeHeaders(job) }).catch((error: unknown) => {
      log.warn({ err: error, messageId: job.messageId }, "invalid push tokens not removed");
    });
  }

  /** A lease that was not claimed: its send finished (record it again, in case that record was lost) or is under way elsewhere. */
  async function settled(job: deliveriesV1.DeliveryJob, lease: store.Lease): Promise<Back | undefined> {
    const base = { job, attempt: lease.attempts, startedAt: lease.updated_at, durationMs: 0 };
    if (lease.state === "sent") {
      await goOn(job);
      await record({ ...base, status: messagesV1.AttemptStatus.SUCCESS, detail: "Message sent", providerMessageId: lease.provider_message_id ?? undefined });
      return undefined;
    }
    if (lease.state === "failed" || lease.state === "unknown") {
      const errorText = lease.error_text ?? "";
      await record({ ...base, status: messagesV1.AttemptStatus.FAILED, detail: errorText, errorId: lease.error_id ?? undefined, errorText });
      return undefined;
    }
    if (lease.state === "retrying") {
      // Its retry is due later than this copy came: the copy waits for it.
      return { retryInMs: Math.max(lease.retry_due_in_ms ?? 0, BUSY_RETRY_MS), reason: "lease" };
    }
    return undefined;
  }

  /**
   * Records again the failed attempt a retry follows (kept on its lease): its record may have been
   * lost after the lease was written. A failure recorded again changes nothing recorded already.
   */
  async function recordRetried(job: deliveriesV1.DeliveryJob, lease: store.Lease): Promise<void> {
    if (lease.attempts < 2 || lease.error_id === null) return;
    const errorText = lease.error_text ?? "";
    await record({
      job,
      attempt: lease.attempts - 1,
      status: messagesV1.AttemptStatus.FAILED,
      startedAt: lease.updated_at,
      durationMs: 0,
      detail: errorText,
      errorId: lease.error_id,
      errorText,
    });
  }

  /**
   * The call takes one of the integration's slots, given back once the provider has answered
   * (`ticket.done()`): recording the outcome does not hold it.
   */
  async function send(
    job: deliveriesV1.DeliveryJob,
    lease: store.Lease,
    channel: DeliveryChannel,
    ticket: LaneTicket,
    { integration, connection }: SendNeeds,
  ): Promise<Back | undefined> {
    if (!integration || integration.deleted || !integration.active) {
      return refuse(job, lease, "integration_not_active", `The ${job.providerId} integration is deleted or not active`);
    }
    const provider = deps.providers.get(channel, integration.providerId);
    const message = messageFor(job);
    if (!provider || !message) return refuse(job, lease, "provider_not_supported", `notify has no ${channel} sender for provider "${integration.providerId}"`);
    const credentials = credentialsOf(integration);
    if (connection === null) {
      const { connectionIdentifier } = job.content.value as deliveriesV1.ChatContent;
      return refuse(job, lease, "chat_connection_missing", `The channel connection "${connectionIdentifier}" of the trigger's contexts is gone`);
    }
    if (connection) Object.assign(message as ChatMessage, { accessToken: connection.accessToken, workspaceId: connection.workspaceId });

    const series = sendSeriesOf(channel, integration.providerId);
    await ticket.slot();
    const startedAt = new Date();
    let result: SendResult;
    try {
      result = await inSpan(
        {
          name: `${channel} send`,
          kind: SpanKind.CLIENT,
          attributes: { "notify.channel": channel, "notify.provider": integration.providerId, "notify.message_id": job.messageId },
        },
        () =>
          provider.send(message as never, {
            integrationId: integration.id,
            credentials,
            configurations: { configurationSetName: integration.configurations?.configurationSetName },
            http: deps.outbound,
            idempotencyKey: job.messageId,
            providerData: job.providerData,
          }),
      );
    } catch (error) {
      ticket.done();
      const durationMs = Date.now() - startedAt.getTime();
      series.duration.observe(durationMs / 1000);
      if (error instanceof ProviderError) await dropInvalidTokens(job, error.invalidTokens);
      const failure = failureOf(error);
      // The connection's token is a secret like the integration's: redacted from whatever a failure says.
      const errorText = redact(failure.text, credentials, connection ? [connection.accessToken] : []);
      const errorId = FAILURE_ERROR_IDS[channel];
      // A Retry-After of nothing or near it is not taken as leave to call again at once, again and again.
      const delay = Math.max(failure.retryAfterMs ?? BACKOFF_MS[Math.min(lease.attempts - 1, BACKOFF_MS.length - 1)]!, MIN_RETRY_MS);
      const written = writtenAtMs(job) ?? lease.first_attempt_at.getTime();
      const retry = failure.transient && Date.now() + delay - written < deps.budgetMs;
      series.outcomes[retry ? "retrying" : "failed"].inc();
      await finish({ messageId: job.messageId, state: retry ? "retrying" : "failed", errorId, errorText, retryInMs: retry ? delay : undefined });
      await record({ job, attempt: lease.attempts, status: messagesV1.AttemptStatus.FAILED, startedAt, durationMs, detail: errorText, errorId, errorText });
      log.warn(
        { messageId: job.messageId, providerId: job.providerId, attempt: lease.attempts, retryInMs: retry ? delay : undefined, error: errorText },
        "send failed",
      );
      return retry ? { retryInMs: delay, reason: "retry" } : undefined;
    }
    ticket.done();
    const durationMs = Date.now() - startedAt.getTime();
    series.duration.observe(durationMs / 1000);
    series.outcomes.sent.inc();
    const providerMessageId = result.id === undefined ? undefined : storableText(result.id);
    await finish({ messageId: job.messageId, state: "sent", providerMessageId });
    await dropInvalidTokens(job, result.invalidTokens);
    await goOn(job);
    await record({
      job,
      attempt: lease.attempts,
      status: messagesV1.AttemptStatus.SUCCESS,
      startedAt,
      durationMs,
      detail: `Message sent by ${integration.providerId}`,
      providerMessageId,
    });
    return undefined;
  }

  async function deliver(job: deliveriesV1.DeliveryJob, ticket: LaneTicket): Promise<Back | undefined> {
    const channel = deliveryChannelOf(job.channel);
    if (!channel) throw new ConnectError(`a delivery job of channel ${job.channel}`, Code.InvalidArgument);
    // Read before the lease is claimed: a service that does not answer sends the job back with
    // its lease untouched, where a claimed lease would read as a dead worker's when it came back.
    const needs: SendNeeds = { integration: await integrationOf(job), connection: await connectionOf(job) };
    await ticket.claimTurn();
    const lease = await claim({
      messageId: job.messageId,
      organizationId: job.organizationId,
      environmentId: job.environmentId,
      providerId: job.providerId,
    });
    if (!lease) return { retryInMs: BUSY_RETRY_MS, reason: "lease" };
    if (lease.claimed) {
      await recordRetried(job, lease);
      return send(job, lease, channel, ticket, needs);
    }
    if (lease.state !== "sending") return settled(job, lease);
    // Another worker holds it: under way (its lease is fresh) or dead mid-call.
    if (Date.now() - lease.updated_at.getTime() < deps.orphanAfterMs) return { retryInMs: deps.orphanAfterMs, reason: "lease" };
    const provider = deps.providers.get(channel, job.providerId);
    if (provider?.idempotent) {
      const taken = await store.takeOverLease(deps.pool, job.messageId, lease.attempts);
      return taken ? send(job, taken, channel, ticket, needs) : { retryInMs: BUSY_RETRY_MS, reason: "lease" };
    }
    const errorText = "The worker stopped while the provider was being called: the message may or may not have been delivered, and is not sent again";
    log.error({ messageId: job.messageId, environmentId: job.environmentId, providerId: job.providerId }, "send outcome unknown");
    sendSeriesOf(channel, job.providerId).outcomes.unknown.inc();
    await finish({ messageId: job.messageId, state: "unknown", errorId: OUTCOME_UNKNOWN, errorText });
    await record({
      job,
      attempt: lease.attempts,
      status: messagesV1.AttemptStatus.FAILED,
      startedAt: lease.updated_at,
      durationMs: 0,
      detail: errorText,
      errorId: OUTCOME_UNKNOWN,
      errorText,
    });
    return undefined;
  }

  const maxAgeText = durationText(deps.maxAgeMs);

  /**
   * Ends a send whose message is older than the max age without a call: its lease may have been
   * deleted, so whether it went out before cannot be known. Recorded as the first attempt, which
   * changes nothing for a message tried before (its first attempt is recorded already).
   */
  async function tooOld(job: deliveriesV1.DeliveryJob): Promise<undefined> {
    const errorText = `The message was written more than ${maxAgeText} ago and is not sent`;
    sendsTooOld.inc();
    log.warn({ messageId: job.messageId, environmentId: job.environmentId, providerId: job.providerId }, "send too old; not made");
    await record({
      job,
      attempt: 1,
      status: messagesV1.AttemptStatus.FAILED,
      startedAt: new Date(),
      durationMs: 0,
      detail: errorText,
      errorId: TOO_OLD,
      errorText,
    });
    return undefined;
  }

  /** A send as its page's other sends see it: done, or to come back later (a retry, or its integration is busy). */
  async function handleSend(job: deliveriesV1.DeliveryJob): Promise<Back | undefined> {
    await room.take();
    try {
      return await handleHeld(job);
    } finally {
      room.give();
    }
  }

  async function handleHeld(job: deliveriesV1.DeliveryJob): Promise<Back | undefined> {
    const written = writtenAtMs(job);
    if (written !== undefined && Date.now() - written > deps.maxAgeMs) return tooOld(job);
    if (inHand.has(job.messageId)) return { retryInMs: BUSY_RETRY_MS, reason: "lease" };
    inHand.add(job.messageId);
    try {
      const ticket = await lanes.enter(job.integrationId);
      if (!ticket) {
        // Back when the integration has got through what it holds. While its first calls are under
        // way its pace is unknown (a burst to a new integration finds it so): soon, and later at
        // each return, rather than a whole second for a provider that may answer in milliseconds.
        // Spread so the sends handed back do not all return at once.
        const backlog = lanes.backlogMs(job.integrationId);
        const backIn = backlog === undefined ? Math.min(BUSY_RETRY_MS, UNPACED_RETRY_MS * 2 ** job.handedBack) : Math.max(BUSY_RETRY_MS, backlog);
        return { retryInMs: Math.round(backIn * (1 + Math.random())), reason: "busy" };
      }
      try {
        return await deliver(job, ticket);
      } finally {
        ticket.done();
      }
    } finally {
      inHand.delete(job.messageId);
    }
  }

  /**
   * A send that failed before its outcome was known (a service did not answer): back later, by
   * the back-off of its returns; one whose own data a service refused becomes a dead letter of its own.
   */
  async function failed(job: deliveriesV1.DeliveryJob, error: unknown): Promise<Back | undefined> {
    if (error instanceof ConnectError && error.code === Code.InvalidArgument) {
      log.error({ err: error, messageId: job.messageId }, "send refused; dead-lettered");
      await store.insertDeadLetter(deps.pool, job.environmentId, {
        organizationId: job.organizationId,
        subject: pageSubject(deps.stream, job.channel),
        job: toBinary(deliveriesV1.DeliveryPageSchema, create(deliveriesV1.DeliveryPageSchema, { jobs: [job] })),
        error: error.message,
        deliveries: job.handedBack + 1,
      });
      sendsDeadLettered.inc();
      return undefined;
    }
    const retryInMs = BACKOFF_MS[Math.min(job.handedBack, BACKOFF_MS.length - 1)]!;
    log.warn({ err: error, messageId: job.messageId, retryInMs }, "send failed before its outcome was known; will retry");
    return { retryInMs, reason: "error" };
  }

  /**
   * Puts the sends to come back on the stream: pages of sends due at about the same time, each
   * due when the last of its sends is, so none comes back before its time.
   */
  async function handBack(sends: (Back & { job: deliveriesV1.DeliveryJob })[]): Promise<void> {
    sends.sort((a, b) => a.retryInMs - b.retryInMs);
    const pages: deliveriesV1.DeliveryPage[] = [];
    for (let start = 0; start < sends.length; ) {
      let end = start + 1;
      while (end < sends.length && sends[end]!.retryInMs <= sends[start]!.retryInMs * 1.25) end += 1;
      const jobs = sends.slice(start, end).map(({ job }) => {
        job.handedBack += 1;
        return job;
      });
      pages.push(...pagesOf(jobs, timestampFromMs(Date.now() + sends[end - 1]!.retryInMs)));
      start = end;
    }
    // Each of these sends was handed over with room kept for what handing it back adds (HAND_BACK_GROWTH_BYTES).
    const unfit = await deps.handBack(pages);
    if (unfit.length > 0) throw new Error(`${unfit.length} sends handed back do not fit a stream message`);
    for (const { reason } of sends) handedBackSeries[reason].inc();
  }

  /** The sends a message of the stream holds: a page, or one send published before pages. */
  function pageOf(message: JsMsg): deliveriesV1.DeliveryPage {
    try {
      if (isPageSubject(deps.stream, message.subject)) return fromBinary(deliveriesV1.DeliveryPageSchema, message.data);
      return create(deliveriesV1.DeliveryPageSchema, { jobs: [fromBinary(deliveriesV1.DeliveryJobSchema, message.data)] });
    } catch (error) {
      throw new ConnectError(`an unreadable delivery page: ${error instanceof Error ? error.message : String(error)}`, Code.InvalidArgument);
    }
  }

  return {
    /** Resolves when the stage has a place for another page's sends. */
    ready: () => room.ready(),
    /**
     * Handles one consumed page of sends: later if it is not due yet, else each send, those to
     * come back going back as pages of their own before the page is acknowledged.
     */
    async handle(message: JsMsg): Promise<Later | undefined> {
      const page = pageOf(message);
      const dueInMs = page.notBefore ? timestampDate(page.notBefore).getTime() - Date.now() : 0;
      if (dueInMs > 0) return { retryInMs: dueInMs };
      const laters = await Promise.all(page.jobs.map((job) => handleSend(job).catch((error: unknown) => failed(job, error))));
      const back = page.jobs.flatMap((job, index) => {
        const later = laters[index];
        return later ? [{ job, ...later }] : [];
      });
      if (back.length > 0) await handBack(back);
      return undefined;
    },
  };
}
