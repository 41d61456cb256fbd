import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectionsV1, integrationsV1, messagesV1, subscribersV1, topicsV1, triggersV1, variablesV1 } from "@notify/proto";
import {
  connectNats,
  consumeJobs,
  createLogger,
  createPool,
  createRpcTransport,
  currentOrigin,
  ensureJobStream,
  JOB_KINDS,
  jobSubject,
  metricsHandler,
  migrate,
  originOfJob,
  processStopping,
  migrationsBeside,
  runWhenMain,
  retryUntilDone,
  type JobStream,
  type JsMsg,
} from "@notify/runtime";
import { createOutbound, createProviders, DEFAULT_OUTBOUND_POLICY } from "@notify/providers";
import { readConfig, type WorkerConfig } from "./config.js";
import { deliveryPublisher, SENDS_PER_PAGE } from "./deliveries.js";
import { startLeaseSweep } from "./lease-sweep.js";
import { decodeTriggerJob } from "./trigger-jobs.js";
import { runTriggerJobs } from "./pipeline.js";
import { createDeliveryStage } from "./send.js";
import { followSubscriberDeletion } from "./subscriber-deletions.js";
import { serveSnsEndpoints } from "./sns.js";
import { serveWebhookSetups } from "./webhook-setup.js";
import * as store from "./store.js";

export { readConfig };

export const migrations = migrationsBeside("worker", import.meta.url);

/** How long /readyz waits for NATS to answer a ping. */
const NATS_PROBE_TIMEOUT_MS = 1_000;

export interface RunningWorker {
  readonly healthPort: number;
  stop(): Promise<void>;
}

/** Composition root: NATS consumer → pipeline → services over RPC; an HTTP port for probes and /metrics only. */
export async function start(config: WorkerConfig): Promise<RunningWorker> {
  const log = createLogger("worker", config.LOG_LEVEL);
  // Enough connections that a claim rarely waits behind another batch: it holds a send slot. An
  // ordinary pool: the send leases table starts empty and grows with every send, and a plan made
  // once per connection while it was small kept scanning all of it (store.finishAndClaimLeases).
  const pool = createPool(config.DATABASE_URL, 4);
  await migrate(pool, migrations, log);
  const nats = await connectNats(config.NATS_URL, "worker");
  const stream: JobStream = { name: config.JOBS_STREAM, subjectPrefix: config.JOBS_SUBJECT_PREFIX };
  const deliveries: JobStream = { name: config.DELIVERIES_STREAM, subjectPrefix: config.DELIVERIES_SUBJECT_PREFIX };

  const subscribers = createRpcTransport(config.SUBSCRIBERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const topics = createRpcTransport(config.TOPICS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const integrations = createRpcTransport(config.INTEGRATIONS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const messages = createRpcTransport(config.MESSAGES_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const triggers = createRpcTransport(config.TRIGGERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const transports = [subscribers, topics, integrations, messages, triggers];
  const clients = {
    triggers: createClient(triggersV1.TriggerService, triggers.transport),
    subscribers: createClient(subscribersV1.SubscriberService, subscribers.transport),
    topics: createClient(topicsV1.TopicService, topics.transport),
    integrations: createClient(integrationsV1.IntegrationService, integrations.transport),
    variables: createClient(variablesV1.EnvironmentVariableService, integrations.transport),
    connections: createClient(connectionsV1.ChannelConnectionService, integrations.transport),
    messages: createClient(messagesV1.MessageService, messages.transport),
  };

  const deletionSubject = jobSubject(stream, JOB_KINDS.subscriberDeleted);
  const isDeletion = (message: JsMsg) => message.subject === deletionSubject;
  /** The scope a job acts in, read from whichever kind of job it is (for its dead letter). */
  const scopeOfJob = (message: JsMsg) =>
    isDeletion(message) ? fromBinary(subscribersV1.SubscriberDeletedJobSchema, message.data) : fromBinary(triggersV1.TriggerJobSchema, message.data);

  const run = async (messages: JsMsg[]) => {
    const deletions = messages.filter(isDeletion);
    await Promise.all(deletions.map((message) => followSubscriberDeletion(fromBinary(subscribersV1.SubscriberDeletedJobSchema, message.data), clients)));
    const triggerMessages = messages.filter((message) => !isDeletion(message));
    const jobs = triggerMessages.map((message) => decodeTriggerJob(message.data));
    if (jobs.length === 0) return;
    // Each send continues the request of the trigger it comes from.
    const origins = new Map(jobs.map((job, index) => [`${job.environmentId}/${job.transactionId}`, originOfJob(triggerMessages[index]!)]));
    const publishDeliveries = deliveryPublisher(nats, deliveries, "hand-over", (send) => origins.get(`${send.environmentId}/${send.transactionId}`));
    const started = performance.now();
    const totals = await runTriggerJobs(jobs, {
      clients,
      log,
      pageSize: config.WORKER_PAGE_SIZE,
      pagesInFlight: config.WORKER_PAGES_IN_FLIGHT,
      publishDeliveries,
    });
    log.debug({ jobs: jobs.length, ...totals, ms: Math.round(performance.now() - started) }, "trigger jobs done");
  };
  const consume = () =>
    consumeJobs(nats, {
      stream,
      durable: "worker",
      concurrency: config.WORKER_CONCURRENCY,
      maxBatch: config.WORKER_BATCH_SIZE,
      maxDeliver: config.WORKER_MAX_DELIVER,
      backoffMs: [500, 2_000, 10_000, 30_000, 120_000],
      ackWaitMs: config.WORKER_ACK_WAIT_MS,
      log,
      handle: (message) => run([message]),
      handleBatch: run,
      // A service refused what the job asks for: the job cannot change, so neither can the answer.
      isPermanent: (error) => error instanceof ConnectError && error.code === Code.InvalidArgument,
      async deadLetter(message, error) {
        let scope: { organizationId: string | null; environmentId: string | null } = { organizationId: null, environmentId: null };
        try {
          const job = scopeOfJob(message);
          scope = { organizationId: job.organizationId, environmentId: job.environmentId };
        } catch {
          // an undecodable job is dead-lettered too, without a scope
        }
        await store.insertDeadLetter(pool, scope.environmentId, {
          organizationId: scope.organizationId,
          subject: message.subject,
          job: message.data,
          error: error instanceof Error ? error.message : String(error),
          deliveries: message.info.redeliveryCount,
        });
      },
    });
  const providers = createProviders();
  const outbound = createOutbound({
    ...DEFAULT_OUTBOUND_POLICY,
    allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS,
    connectTimeoutMs: config.OUTBOUND_CONNECT_TIMEOUT_MS,
    timeoutMs: config.OUTBOUND_TIMEOUT_MS,
  });
  const stage = createDeliveryStage({
    pool,
    stream: deliveries,
    // Sends handed back continue the work of the page they were on.
    handBack: deliveryPublisher(nats, deliveries, "hand-back", () => currentOrigin()),
    providers,
    outbound,
    integrations: clients.integrations,
    connections: clients.connections,
    messages: clients.messages,
    triggers: clients.triggers,
    subscribers: clients.subscribers,
    log,
    budgetMs: config.DELIVERY_BUDGET_MS,
    held: config.DELIVERY_CONCURRENCY,
    perIntegration: config.DELIVERY_CONCURRENCY_PER_INTEGRATION,
    orphanAfterMs: config.WORKER_ACK_WAIT_MS,
    maxAgeMs: config.DELIVERY_MAX_AGE_MS,
  });
  const leaseSweep = startLeaseSweep({ pool, maxAgeMs: config.DELIVERY_MAX_AGE_MS, log });
  const snsEndpoints = serveSnsEndpoints({ nats, outbound, log, subject: config.SNS_REQUESTS_SUBJECT, origin: config.SNS_ENDPOINT_ORIGIN });
  const webhookSetups = serveWebhookSetups({ nats, pool, integrations: clients.integrations, providers, outbound, log, subject: config.WEBHOOK_SETUP_SUBJECT });
  const consumeDeliveries = () =>
    consumeJobs(nats, {
      stream: deliveries,
      durable: "deliveries",
      // Pages are taken while the stage has a place for a send; each page holds at least one.
      concurrency: config.DELIVERY_CONCURRENCY,
      prefetch: Math.ceil(config.DELIVERY_CONCURRENCY / SENDS_PER_PAGE) + 1,
      ready: () => stage.ready(),
      // Sends waiting for a retry (up to the delivery budget) stay unacknowledged until due: a
      // failing provider's could otherwise fill any bound and stop every other integration's sends.
      maxAckPending: -1,
      // The stage gives up by its own budget, not by a count of deliveries.
      maxDeliver: -1,
      backoffMs: [1_000, 5_000, 15_000, 30_000, 60_000],
      ackWaitMs: config.WORKER_ACK_WAIT_MS,
      log,
      handle: (message) => stage.handle(message),
      isPermanent: (error) => error instanceof ConnectError && error.code === Code.InvalidArgument,
      async deadLetter(message, error) {
        await store.insertDeadLetter(pool, null, {
          organizationId: null,
          subject: message.subject,
          job: message.data,
          error: error instanceof Error ? error.message : String(error),
          deliveries: message.info.redeliveryCount,
        });
      },
    });
  // NATS may be restarting while we start: keep trying rather than exit. Each stream is retried
  // on its own, so a consumer already running is never started a second time.
  const consumeOnce = (jobStream: JobStream, start: () => ReturnType<typeof consumeJobs>) =>
    retryUntilDone(
      async () => {
        await ensureJobStream(nats, jobStream);
        return start();
      },
      (error, delayMs) => log.warn({ err: error, stream: jobStream.name, retryInMs: delayMs }, "job stream not reachable yet"),
    );
  const consumption = await consumeOnce(stream, consume);
  const sending = await consumeOnce(deliveries, consumeDeliveries);

  // Live while both subscriptions run (a worker whose subscription ended takes no jobs: restart
  // it); ready while NATS also answers, so an outage shows without restarting anything.
  const consuming = () => consumption.active() && sending.active();
  const natsAnswers = () =>
    nats.isClosed()
      ? Promise.resolve(false)
      : Promise.race([nats.flush().then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), NATS_PROBE_TIMEOUT_MS).unref())]).catch(
          () => false,
        );
  const health = createServer((request, response) => {
    const answer = (ok: boolean) =>
      response.writeHead(ok ? 200 : 503, { "content-type": "application/json" }).end(JSON.stringify({ status: ok ? "ok" : "unavailable" }));
    if (request.url === "/metrics") metricsHandler(request, response);
    else if (request.url === "/livez") answer(consuming());
    else if (request.url === "/readyz") void natsAnswers().then((answers) => answer(answers && consuming() && !processStopping()));
    else answer(false);
  });
  await new Promise<void>((resolve) => health.listen(config.WORKER_PORT, config.WORKER_HOST, resolve));
  log.info({ stream: stream.name }, "worker consuming");

  return {
    healthPort: (health.address() as AddressInfo).port,
    async stop() {
      await consumption.stop();
      await sending.stop();
      await leaseSweep.stop();
      snsEndpoints.stop();
      webhookSetups.stop();
      await providers.close();
      await outbound.close();
      health.close();
      for (const rpc of transports) rpc.close();
      await nats.drain().catch(() => undefined);
      await pool.end();
    },
  };
}

runWhenMain(import.meta.url, "worker", readConfig, start);
