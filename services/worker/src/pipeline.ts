import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import { clone, create, toBinary, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { messagesV1, type subscribersV1, triggersV1, type integrationsV1, type topicsV1, type variablesV1, type workflowsV1 } from "@notify/proto";
import { Channel, channelName, contextKeysOf, scopeHeaders, StepType, stepChannel, type KnownChannel, type Logger } from "@notify/runtime";
import { readsEnvironment, renderBudget, renderer, withinBudget, type Render, type RenderBudget } from "@notify/templates";
import { composeMessages, severityOf, subscriberVariables, type Composed, type DeliveryPlan, type RecipientProfile, type RunContext } from "./compose.js";
import { conditionsHold, subscriptionConditionHolds, type ConditionData } from "./conditions.js";
import { writeAndHandOver, type PublishDeliveries } from "./deliveries.js";
import { stepPasses, type StepFilter } from "./filters.js";
import { delayUntil } from "./delay.js";
import { digestPlan, digestVariables, type Digested, type DigestPlan } from "./digest.js";
import {
  delayed,
  delayFinished,
  digestEntered,
  digestTriggered,
  filteredByPreferences,
  misconfigured,
  recordStepJobs,
  skippedByConditions,
  type SkippedBy,
  type StepJobChange,
} from "./step-jobs.js";
import { throttlePlan, type ThrottlePlan } from "./throttle.js";

export interface PipelineClients {
  triggers: Client<typeof triggersV1.TriggerService>;
  subscribers: Client<typeof subscribersV1.SubscriberService>;
  topics: Client<typeof topicsV1.TopicService>;
  integrations: Client<typeof integrationsV1.IntegrationService>;
  variables: Client<typeof variablesV1.EnvironmentVariableService>;
  messages: Client<typeof messagesV1.MessageService>;
}

export interface PipelineDeps {
  clients: PipelineClients;
  log: Logger;
  /** Subscribers handled per round trip: one lookup and one message batch per page. */
  pageSize: number;
  /** Pages of a fan-out written at once: the next page is read while earlier ones are written. */
  pagesInFlight: number;
  /** Hands the sends of written messages to the delivery stage. */
  publishDeliveries: PublishDeliveries;
}

/** The credentials a recipient object carries, as entries of ApplyChannelCredentials (append rules). */
function credentialEntries(input: triggersV1.SubscriberInput) {
  return input.channels.map((channel) => ({
    subscriberId: input.subscriberId,
    providerId: channel.providerId,
    ...(channel.integrationIdentifier !== undefined ? { integrationIdentifier: channel.integrationIdentifier } : {}),
    credentials: {
      ...(channel.credentials?.webhookUrl !== undefined ? { webhookUrl: channel.credentials.webhookUrl } : {}),
      ...(channel.credentials?.channel !== undefined ? { channel: channel.credentials.channel } : {}),
      ...(channel.credentials && channel.credentials.deviceTokens.length > 0 ? { deviceTokens: { tokens: channel.credentials.deviceTokens } } : {}),
    },
  }));
}

/** Recipients named in `to`, de-duplicated (for a repeated id the last object wins), topics apart. */
export function splitRecipients(to: readonly triggersV1.Recipient[]) {
  const direct = new Map<string, { subscriberId: string; fields?: subscribersV1.SubscriberFields }>();
  const channels = new Map<string, ReturnType<typeof credentialEntries>>();
  const topicKeys = new Set<string>();
  for (const recipient of to) {
    const kind = recipient.kind;
    if (kind.case === "subscriberId") {
      if (!direct.has(kind.value)) direct.set(kind.value, { subscriberId: kind.value });
    } else if (kind.case === "subscriber") {
      direct.set(kind.value.subscriberId, { subscriberId: kind.value.subscriberId, ...(kind.value.fields ? { fields: kind.value.fields } : {}) });
      channels.set(kind.value.subscriberId, credentialEntries(kind.value));
    } else if (kind.case === "topicKey") {
      topicKeys.add(kind.value);
    }
  }
  return { direct: [...direct.values()], credentials: [...channels.values()].flat(), topicKeys: [...topicKeys] };
}

const PREFERENCE_KEYS: Record<KnownChannel, keyof subscribersV1.ChannelPreferences> = {
  [Channel.IN_APP]: "inApp",
  [Channel.EMAIL]: "email",
  [Channel.SMS]: "sms",
  [Channel.CHAT]: "chat",
  [Channel.PUSH]: "push",
};

/** A subscriber's channels for a run: their own resolution when they chose anything, else the workflow's defaults. */
interface RunPreferences {
  channels: subscribersV1.ChannelPreferences | undefined;
  own: subscribersV1.SubscriberChannelPreferences | undefined;
}

function channelEnabled(channels: subscribersV1.ChannelPreferences | undefined, channel: KnownChannel): boolean {
  return channels?.[PREFERENCE_KEYS[channel]] !== false;
}

/** Novu's detail of a channel step preferences turned off: the layer that did, the subscriber's choice for the workflow first. */
function preferenceFilter(preferences: RunPreferences, channel: KnownChannel): { detail: string; raw: string } {
  const key = PREFERENCE_KEYS[channel];
  const detail =
    preferences.own?.workflowChoices?.[key] !== undefined
      ? "Step filtered by subscriber workflow preferences"
      : preferences.own?.globalChoices?.[key] !== undefined
        ? "Step filtered by subscriber global preferences"
        : "Step filtered by workflow preferences";
  const channels = Object.fromEntries(
    (Object.entries(PREFERENCE_KEYS) as [string, keyof subscribersV1.ChannelPreferences][]).map(([known, field]) => [
      channelName(Number(known) as KnownChannel),
      preferences.channels?.[field] !== false,
    ]),
  );
  return { detail, raw: JSON.stringify({ channels }) };
}

/** The active steps, in order. */
function activeSteps(workflow: workflowsV1.Workflow): workflowsV1.Step[] {
  return workflow.steps.filter((step) => step.active !== false);
}

function filtersOf(step: workflowsV1.Step, render: Render): StepFilter[] {
  return step.filters.map((filter) => ({
    isNegated: filter.isNegated,
    type: filter.type,
    value: filter.value === "OR" ? "OR" : "AND",
    children: filter.children.map((part) => ({
      field: part.field,
      value: render(part.value),
      operator: part.operator as StepFilter["children"][number]["operator"],
      on: part.on === "subscriber" ? "subscriber" : "payload",
    })),
  }));
}

export interface JobRun {
  job: triggersV1.TriggerJob;
  actor?: subscribersV1.Subscriber | undefined;
  /** The rendering time all its subscribers' runs share (every page of a fan-out): a runaway template fails the job fast. */
  budget: RenderBudget;
  /** The trigger's contexts as templates read them (`context.<type>.id`, `.data`); undefined without any. */
  contexts: Record<string, unknown> | undefined;
  /** Their keys, sorted: stamped on every message of the job. */
  contextKeys: string[];
  /** The environment's variables (`env.KEY`), when its jobs' templates read them. */
  env: Record<string, string> | undefined;
  /** What its subscribers' notifications keep (notificationTraitsOf). */
  traits: messagesV1.NotificationTraits;
  /** The same with the trigger's topics, for the subscribers reached through them; unset without topics. */
  topicTraits?: messagesV1.NotificationTraits | undefined;
  /** The subscribers the trigger names itself (external ids): never reached through its topics. */
  named: ReadonlySet<string>;
}

/** A job's run, with what every subscriber's run of it shares. */
function jobRun(job: triggersV1.TriggerJob, actor: subscribersV1.Subscriber | undefined, env: Record<string, string> | undefined): JobRun {
  const hasContexts = job.contexts.length > 0;
  const workflow = job.workflow!;
  return {
    job,
    actor,
    budget: renderBudget(),
    contexts: hasContexts ? Object.fromEntries(job.contexts.map(({ type, id, data }) => [type, { id, data: data ?? {} }])) : undefined,
    contextKeys: hasContexts ? contextKeysOf(job.contexts) : [],
    env,
    traits: create(messagesV1.NotificationTraitsSchema, {
      severity: severityOf((job.event?.overrides ?? {}) as JsonObject, workflow),
      critical: workflow.critical,
      tags: workflow.tags,
    }),
    named: new Set(splitRecipients(job.event?.to ?? []).direct.map((entry) => entry.subscriberId)),
  };
}

/** What a subscriber's notification of a run keeps: the trigger's topics too when reached through them, as Novu's. */
function notificationTraitsOf(run: JobRun, subscriber: RecipientProfile): messagesV1.NotificationTraits {
  return run.topicTraits && !run.named.has(subscriber.subscriberId) ? run.topicTraits : run.traits;
}

/**
 * The topics a fan-out's trigger names, with their ids, on its run: a notification made through
 * them keeps them. Keys no topic has are left out, as they reach nobody.
 */
async function withTopics(run: JobRun, keys: readonly string[], clients: PipelineDeps["clients"], call: CallOptions): Promise<void> {
  const topics = await Promise.all(
    keys.map((key) =>
      clients.topics.getTopic({ key }, call).then(
        (topic) => create(messagesV1.NotificationTopicSchema, { topicId: topic.id, topicKey: topic.key }),
        (error: unknown) => {
          if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
          throw error;
        },
      ),
    ),
  );
  const found = topics.filter((topic) => topic !== undefined);
  if (found.length > 0) run.topicTraits = create(messagesV1.NotificationTraitsSchema, { ...run.traits, topics: found });
}

/** Whether a job's templates (its workflow's steps, the layouts its emails go in) read environment variables. */
const readsEnvironmentVariables = (job: triggersV1.TriggerJob) =>
  (job.workflow?.environmentVariables.length ?? 0) > 0 || job.layouts.some((layout) => layout.email !== undefined && readsEnvironment(layout.email.body));

/** What a run's subscribers' channel preferences are resolved for: its workflow in its context scope. */
const preferenceScopeOf = (run: JobRun) => `${run.job.workflow!.id} ${run.contextKeys.join(",")}`;

/** Some subscribers of one job: a fan-out page, the recipients a job names, or those a delay resumes. */
interface Share {
  run: JobRun;
  subscribers: RecipientProfile[];
}

/** Where a run of the steps stopped at a delay: the steps from `fromStep` run at `runAt`. */
interface Pause {
  fromStep: number;
  runAt: Date;
}

/** Where a run of the steps reached a digest step (at `index`, `step` the main one): the digest decides what follows. */
interface DigestStop {
  index: number;
  step: workflowsV1.Step;
  plan: DigestPlan;
}

type DigestOutcome = Parameters<typeof digestEntered>[3];

/** Where a run of the steps reached a throttle step (at `index`): the window decides whether it goes on. */
interface ThrottleStop {
  index: number;
  plan: ThrottlePlan;
}

/**
 * A step that stops on failure and has sends: the run goes on from `fromStep` once, when the
 * first of `sends` succeeds, as Novu's goes on when any device or channel of the step got the
 * message; never when all fail.
 */
interface WaitForSend {
  fromStep: number;
  sends: DeliveryPlan[];
}

/** One subscriber's run of a share's job, from step `from` with `step` as the template's `step`. */
interface SubscriberRun {
  share: Share;
  subscriber: RecipientProfile;
  from: number;
  /** The events of the digest this run goes on from, if it does. */
  digested?: Digested | undefined;
  /** The digest that resumed this run; a later delay carries it on. */
  digestId?: string | undefined;
}

/** The most ids or messages one RPC carries. */
const CHUNK = 1000;
/**
 * How long composing a page may hold the event loop before it lets waiting I/O through: the
 * delivery stage shares this process, and a provider's answer read late holds its send slot.
 */
const COMPOSE_SLICE_MS = 5;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

const callFor = (job: triggersV1.TriggerJob): CallOptions => ({ headers: scopeHeaders(job) });

/**
 * A broadcast or a trigger to topics fans out to its audience; its resumptions never do: they
 * name the subscribers they go on for.
 */
const fansOut = (job: triggersV1.TriggerJob) =>
  !job.resumption && ((job.event?.broadcast ?? false) || (job.event?.to.some((recipient) => recipient.kind.case === "topicKey") ?? false));

/**
 * Runs trigger jobs. Jobs of one environment that name their recipients go together: one cancel
 * check, one subscriber upsert, one preference call per workflow and one message batch for all
 * of them. Broadcasts and topic triggers then fan out page by page (one subscriber lookup and one
 * message batch per page, never one call per subscriber, never the whole list in memory). Safe to
 * run again: messages are created idempotently per (transaction, subscriber, step, channel).
 */
export async function runTriggerJobs(jobs: readonly triggersV1.TriggerJob[], deps: PipelineDeps): Promise<{ subscribers: number; messages: number }> {
  const byEnvironment = new Map<string, triggersV1.TriggerJob[]>();
  const returns: Promise<unknown>[] = [];
  for (const job of jobs) {
    // A snooze's end runs no step: its message comes back (a repeat finds it back already).
    if (job.snoozeReturn) {
      const { messageId, snoozedUntil } = job.snoozeReturn;
      returns.push(deps.clients.messages.returnSnoozedMessage({ messageId, ...(snoozedUntil ? { snoozedUntil } : {}) }, callFor(job)));
      continue;
    }
    const key = `${job.organizationId}/${job.environmentId}`;
    const group = byEnvironment.get(key);
    if (group) group.push(job);
    else byEnvironment.set(key, [job]);
  }
  const totals = { subscribers: 0, messages: 0 };
  await Promise.all([
    ...returns,
    ...[...byEnvironment.values()].map(async (group) => {
      const result = await runEnvironmentJobs(group, callFor(group[0]!), deps);
      totals.subscribers += result.subscribers;
      totals.messages += result.messages;
    }),
  ]);
  return totals;
}

async function runEnvironmentJobs(jobs: triggersV1.TriggerJob[], call: CallOptions, deps: PipelineDeps) {
  const { clients } = deps;
  const totals = { subscribers: 0, messages: 0 };
  // Triggers canceled after they were published are dropped here, before anything runs.
  const canceled = new Set<string>();
  for (const part of chunks(jobs.map((job) => job.transactionId))) {
    for (const id of (await clients.triggers.getCanceledTriggers({ transactionIds: part }, call)).transactionIds) canceled.add(id);
  }
  const live = jobs.filter((job) => !canceled.has(job.transactionId));
  // A canceled trigger's digest run that came due before the cancel holds other triggers' events
  // too: the digests pass to their next events' triggers, whose runs go on instead, and whose
  // merged digest jobs wait again.
  const passed = await Promise.all(
    jobs
      .filter((job) => canceled.has(job.transactionId) && job.resumption?.digestRun === true)
      .map((job) => clients.triggers.passCanceledDigests({ transactionId: job.transactionId, digestIds: job.resumption!.digestIds }, call)),
  );
  const resumedDigests = passed.flatMap((reply) =>
    reply.passedDigests.map(({ transactionId, subscriberId, stepId }) => ({ transactionId, subscriberId, stepId })),
  );
  for (const digests of chunks(resumedDigests)) await clients.messages.resumeDigestJobs({ digests }, call);
  // A resumption the cancel could not take back (it was under way): the wait it ends was
  // recorded after the cancel ended the trigger's waiting jobs, and ends canceled here.
  const stoppedWaits = new Set(jobs.filter((job) => canceled.has(job.transactionId) && job.resumption).map((job) => job.transactionId));
  for (const transactionId of stoppedWaits) await clients.messages.cancelStepJobs({ transactionId }, call);

  // Everyone named in these jobs (recipients and actors), upserted at once; the last mention wins.
  const named = new Map<string, { subscriberId: string; fields?: subscribersV1.SubscriberFields }>();
  const credentials: ReturnType<typeof splitRecipients>["credentials"] = [];
  const recipientsOf = new Map<triggersV1.TriggerJob, string[]>();
  for (const job of live) {
    const actor = job.event?.actor?.kind;
    if (actor?.case === "subscriberId" && !named.has(actor.value)) named.set(actor.value, { subscriberId: actor.value });
    if (actor?.case === "subscriber")
      named.set(actor.value.subscriberId, { subscriberId: actor.value.subscriberId, ...(actor.value.fields ? { fields: actor.value.fields } : {}) });
    if (job.event?.broadcast || job.resumption) continue;
    const split = splitRecipients(job.event?.to ?? []);
    for (const entry of split.direct) if (entry.fields || !named.has(entry.subscriberId)) named.set(entry.subscriberId, entry);
    credentials.push(...split.credentials);
    recipientsOf.set(
      job,
      split.direct.map((entry) => entry.subscriberId),
    );
  }
  const subscribers = new Map<string, subscribersV1.Subscriber>();
  for (const part of chunks([...named.values()])) {
    for (const subscriber of (await clients.subscribers.ensureSubscribers({ subscribers: part }, call)).subscribers)
      subscribers.set(subscriber.subscriberId, subscriber);
  }
  // Channels of recipient objects, by the credentials rules; entries that cannot bind are skipped.
  for (const part of chunks(credentials)) {
    for (const subscriber of (await clients.subscribers.applyChannelCredentials({ entries: part }, call)).subscribers)
      subscribers.set(subscriber.subscriberId, subscriber);
  }

  // Read when they start, once for the environment's jobs: a run sees the values of that moment.
  const env = live.some(readsEnvironmentVariables) ? (await clients.variables.resolveEnvironmentVariables({}, call)).values : undefined;
  const runs = live.map((job) => {
    const actor = job.event?.actor?.kind;
    const actorId = actor?.case === "subscriberId" ? actor.value : actor?.case === "subscriber" ? actor.value.subscriberId : undefined;
    return jobRun(job, actorId ? subscribers.get(actorId) : undefined, env);
  });
  // Subscribers a delay paused, by internal id.
  const resumed = new Map<string, RecipientProfile>();
  for (const part of chunks(live.flatMap((job) => job.resumption?.subscriberIds ?? []))) {
    for (const recipient of (await clients.subscribers.batchGetRecipients({ ids: part }, call)).recipients) resumed.set(recipient.id, recipient);
  }
  const shares: Share[] = runs.flatMap((run) => {
    const recipients = run.job.resumption
      ? run.job.resumption.subscriberIds.flatMap((id) => resumed.get(id) ?? [])
      : (recipientsOf.get(run.job) ?? []).flatMap((id) => subscribers.get(id) ?? []);
    return recipients.length > 0 ? [{ run, subscribers: recipients }] : [];
  });
  totals.subscribers += shares.reduce((sum, share) => sum + share.subscribers.length, 0);
  totals.messages += await deliverShares(shares, call, deps);

  for (const run of runs.filter((candidate) => fansOut(candidate.job))) {
    const fanned = await fanOut(run, recipientsOf.get(run.job) ?? [], call, deps);
    totals.subscribers += fanned.subscribers;
    totals.messages += fanned.messages;
  }
  return totals;
}

/** A broadcast (every subscriber) or a trigger's topics (members minus named recipients and the actor), page by page. */
async function fanOut(run: JobRun, namedIds: string[], call: CallOptions, deps: PipelineDeps) {
  const { clients } = deps;
  const totals = { subscribers: 0, messages: 0 };
  const writing = new Set<Promise<void>>();
  // The integrations are looked up once for the whole fan-out, not once per page.
  const lookups = integrationLookups(clients, call);
  const page = async (subscribers: RecipientProfile[]) => {
    totals.subscribers += subscribers.length;
    const write: Promise<void> = deliverShares([{ run, subscribers }], call, deps, lookups).then((created) => {
      totals.messages += created;
    });
    const tracked = write.finally(() => writing.delete(tracked));
    tracked.catch(() => undefined); // observed below; must not count as an unhandled rejection meanwhile
    writing.add(tracked);
    if (writing.size >= deps.pagesInFlight) await Promise.race(writing);
  };
  try {
    let after: string | undefined;
    if (run.job.event?.broadcast) {
      do {
        const reply = await clients.subscribers.pageRecipients({ limit: deps.pageSize, ...(after ? { after } : {}) }, call);
        await page(reply.recipients);
        after = reply.next;
      } while (after);
    } else {
      const topicKeys = splitRecipients(run.job.event?.to ?? []).topicKeys;
      await withTopics(run, topicKeys, clients, call);
      const exclude = [...namedIds, ...(run.actor ? [run.actor.subscriberId] : [])];
      do {
        const reply = await clients.topics.pageMembers(
          {
            topicKeys,
            excludeSubscriberIds: exclude,
            limit: deps.pageSize,
            contextKeys: run.contextKeys,
            workflowId: run.job.workflow!.id,
            ...(after ? { after } : {}),
          },
          call,
        );
        if (reply.members.length > 0) {
          const found = await clients.subscribers.batchGetRecipients({ ids: reply.members.map((member) => member.internalSubscriberId) }, call);
          await page(reachedMembers(run, reply.members, found.recipients, deps.log));
        }
        after = reply.next;
      } while (after);
    }
  } finally {
    // Every page written (or failed) before the job is acknowledged or retried.
    const results = await Promise.allSettled(writing);
    const failure = results.find((result) => result.status === "rejected");
    // biome-ignore lint/correctness/noUnsafeFinally: a failed write fails the job even when the paging failed too; either way it is retried.
    if (failure) throw (failure as PromiseRejectedResult).reason;
  }
  return totals;
}

/**
 * Composes and writes the messages of some shares of one environment: one preference call per
 * workflow (a critical workflow ignores subscribers' choices), integration lookups shared, and
 * the messages written in batches. Answers how many messages were new.
 */
async function deliverShares(
  shares: Share[],
  call: CallOptions,
  deps: PipelineDeps,
  lookups: ReturnType<typeof integrationLookups> = integrationLookups(deps.clients, call),
): Promise<number> {
  if (shares.length === 0) return 0;
  // Preferences are resolved per workflow and context scope: the subscribers' choices of exactly the trigger's contexts apply.
  const resolutions = new Map<string, { run: JobRun; ids: Set<string> }>();
  for (const share of shares) {
    const key = preferenceScopeOf(share.run);
    const resolution = resolutions.get(key) ?? { run: share.run, ids: new Set<string>() };
    for (const subscriber of share.subscribers) resolution.ids.add(subscriber.id);
    resolutions.set(key, resolution);
  }
  // The service lists only subscribers with choices of their own; everyone else gets the workflow's defaults.
  const preferences = new Map<string, subscribersV1.SubscriberChannelPreferences>();
  const defaults = new Map<string, subscribersV1.ChannelPreferences | undefined>();
  await Promise.all(
    [...resolutions].map(async ([key, { run, ids }]) => {
      for (const part of chunks([...ids])) {
        // The jobs' snapshot of the workflow (the one their steps come from): the service need not look it up.
        const { id: workflowId, critical, preferenceSettings } = run.job.workflow!;
        const workflow = { critical, ...(preferenceSettings ? { preferenceSettings } : {}) };
        const request = { workflowId, subscriberIds: part, workflow, contextKeys: run.contextKeys };
        const reply = await deps.clients.subscribers.resolveChannelPreferences(request, call);
        defaults.set(key, reply.defaults);
        for (const entry of reply.subscribers) preferences.set(`${key}/${entry.subscriberId}`, entry);
      }
    }),
  );
  const [digests, chatEndpoints] = await Promise.all([digestsOf(shares, call, deps), chatEndpointsOf(shares, call, deps)]);
  const messages: Composed[] = [];
  const now = Date.now();
  // Subscribers paused at a delay, per job, resumption point and whether a digest resumed them.
  const paused = new Map<string, { job: triggersV1.TriggerJob; pause: Pause; subscriberIds: string[]; digestIds: string[] }>();
  /** The rests of runs waiting for a send, held until the first of their step's sends succeeds. */
  const held: HeldRun[] = [];
  /** What the runs change of step jobs, recorded once the page's messages are written. */
  const stepJobs: StepJobChange[] = [];
  let runs: SubscriberRun[] = shares.flatMap((share) => {
    const job = share.run.job;
    const resumption = job.resumption;
    const digestOf = new Map(resumption?.digestIds.map((id, index) => [resumption.subscriberIds[index], id]));
    // The step a resumption goes on after: the digest whose run it is, a delay that ended, or a step whose send it waited for.
    const resumedAfter = resumption && resumption.fromStep > 0 ? activeSteps(job.workflow!)[resumption.fromStep - 1] : undefined;
    return share.subscribers.map((subscriber) => {
      const digestId = digestOf.get(subscriber.id);
      const digested = digestId ? (digests.get(digestId) ?? { events: [], arrivals: [], totalCount: 0 }) : undefined;
      if (resumedAfter && resumption?.digestRun && digested) stepJobs.push(digestTriggered(job, subscriber, resumedAfter, digested));
      else if (resumedAfter?.template?.type === StepType.DELAY) stepJobs.push(delayFinished(job, subscriber, resumedAfter));
      return { share, subscriber, from: resumption?.fromStep ?? 0, digested, digestId };
    });
  });
  // Each round runs subscribers until they end, pause or reach a digest or throttle step; one call
  // per kind then decides for all of them, and those not digested, or let through, go on from the
  // next step in another round.
  while (runs.length > 0) {
    const stops: { run: SubscriberRun; stop: DigestStop }[] = [];
    const throttles: { run: SubscriberRun; stop: ThrottleStop }[] = [];
    let sliceStarted = performance.now();
    for (const run of runs) {
      if (performance.now() - sliceStarted > COMPOSE_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
      const job = run.share.run.job;
      const key = preferenceScopeOf(run.share.run);
      const own = preferences.get(`${key}/${run.subscriber.id}`);
      const chosen: RunPreferences = { channels: own ? own.channels : defaults.get(key), own };
      const endpoints = chatEndpoints(run.share.run, run.subscriber.id);
      const composed = await composeForSubscriber(run.subscriber, run.share.run, chosen, endpoints, lookups, deps, run.from, run.digested, now, stepJobs);
      messages.push(...composed.messages);
      if (composed.pause) {
        const key = `${job.triggerId}/${composed.pause.fromStep}/${composed.pause.runAt.getTime()}/${run.digestId ? "digest" : ""}`;
        const entry = paused.get(key) ?? { job, pause: composed.pause, subscriberIds: [], digestIds: [] };
        entry.subscriberIds.push(run.subscriber.id);
        if (run.digestId) entry.digestIds.push(run.digestId);
        paused.set(key, entry);
      }
      if (composed.digest) stops.push({ run, stop: composed.digest });
      if (composed.throttle) throttles.push({ run, stop: composed.throttle });
      if (composed.waitsFor) {
        const { fromStep, sends } = composed.waitsFor;
        const holdKey = `${job.triggerId}:${fromStep}:${run.subscriber.id}:${run.digestId ?? ""}`;
        held.push({ holdKey, job: resumptionOf(job, [run.subscriber.id], fromStep, run.digestId ? [run.digestId] : []), bytes: jobBytes(job) });
        for (const send of sends) send.continuationKey = holdKey;
      }
    }
    const outcomes = await enterDigests(stops, call, deps);
    const passed = await passThrottles(throttles, call, deps);
    stops.forEach(({ run, stop }, index) => {
      stepJobs.push(digestEntered(run.share.run.job, run.subscriber, stop.step, outcomes[index]!, stop.plan.runAt, now));
    });
    runs = [
      ...stops.flatMap(({ run, stop }, index) =>
        // Let through at once (a backoff without a recent event): as Novu runs it, not a digest of one.
        outcomes[index] === "passed" ? [{ share: run.share, subscriber: run.subscriber, from: stop.index + 1 }] : [],
      ),
      ...throttles.flatMap(({ run, stop }, index) => (passed[index] ? [{ ...run, from: stop.index + 1 }] : [])),
    ];
  }
  // Held before any send that may release them is handed over.
  for (const part of callsOf(held)) {
    await deps.clients.triggers.scheduleJobs({ jobs: part.map(({ holdKey, job }) => ({ holdKey, job })) }, call);
  }
  const created = await writeAndHandOver(messages, shares[0]!.run.job, deps.clients.messages, deps.publishDeliveries, call);
  // After the messages: their write makes most of the runs' notifications the quick way, and
  // before the resumptions are scheduled, so a run goes on only from a recorded wait.
  const runOf = new Map(shares.map((share) => [share.run.job, share.run]));
  await recordStepJobs(stepJobs, deps.clients.messages, call, {
    traitsOf: (change) => notificationTraitsOf(runOf.get(change.job)!, change.subscriber),
    providerOf: lookups.firstActiveProviderOf,
  });
  const resumptions = [...paused.values()].flatMap(({ job, pause, subscriberIds, digestIds }) =>
    chunks(subscriberIds).map((ids, part) => {
      const resumption = resumptionOf(job, ids, pause.fromStep, digestIds.slice(part * CHUNK, (part + 1) * CHUNK));
      return { runAt: timestampFromDate(pause.runAt), job: resumption };
    }),
  );
  for (const part of chunks(resumptions)) await deps.clients.triggers.scheduleJobs({ jobs: part }, call);
  return created;
}

/** The rest of one subscriber's run, held under `holdKey`; `bytes` is about its size encoded. */
export interface HeldRun {
  holdKey: string;
  job: triggersV1.TriggerJob;
  bytes: number;
}

/** Held runs per ScheduleJobs call: at most CHUNK, and about this many bytes (each is a whole trigger job). */
const HOLD_CALL_BYTES = 4 * 1024 * 1024;

/** A trigger job's size encoded, measured once per job: its runs' held rests are that and a resumption. */
const measured = new WeakMap<triggersV1.TriggerJob, number>();
function jobBytes(job: triggersV1.TriggerJob): number {
  let bytes = measured.get(job);
  if (bytes === undefined) {
    bytes = toBinary(triggersV1.TriggerJobSchema, job).length;
    measured.set(job, bytes);
  }
  return bytes;
}

/** The held runs in calls of at most CHUNK runs and, unless one alone is larger, HOLD_CALL_BYTES. */
export function callsOf(held: readonly HeldRun[]): HeldRun[][] {
  const calls: HeldRun[][] = [];
  let call: HeldRun[] = [];
  let bytes = 0;
  for (const run of held) {
    if (call.length > 0 && (call.length === CHUNK || bytes + run.bytes > HOLD_CALL_BYTES)) {
      calls.push(call);
      call = [];
      bytes = 0;
    }
    call.push(run);
    bytes += run.bytes;
  }
  if (call.length > 0) calls.push(call);
  return calls;
}

/** The job that runs the rest of a workflow for these subscribers, from step `fromStep`. */
function resumptionOf(job: triggersV1.TriggerJob, subscriberIds: string[], fromStep: number, digestIds: string[]): triggersV1.TriggerJob {
  const resumption = clone(triggersV1.TriggerJobSchema, job);
  resumption.resumption = create(triggersV1.ResumptionSchema, { subscriberIds, fromStep, digestIds });
  return resumption;
}

const payloadOf = (job: triggersV1.TriggerJob) => (job.event?.payload ?? {}) as JsonObject;

/** Whether a workflow has an active chat step (or variant): only then are its subscribers' chat endpoints read. */
const sendsChat = (workflow: workflowsV1.Workflow) =>
  activeSteps(workflow).some((step) => [step, ...step.variants].some((candidate) => candidate.template?.type === StepType.CHAT));

/**
 * The chat endpoints of these shares' subscribers, as a lookup by run and internal subscriber id:
 * one call per 1000 subscribers of a context scope, none for workflows without a chat step.
 */
async function chatEndpointsOf(
  shares: readonly Share[],
  call: CallOptions,
  deps: PipelineDeps,
): Promise<(run: JobRun, subscriberId: string) => readonly subscribersV1.ChannelEndpoint[]> {
  const scopeOf = (run: JobRun) => run.contextKeys.join(",");
  const scopes = new Map<string, { contextKeys: string[]; ids: Set<string> }>();
  for (const share of shares) {
    if (!sendsChat(share.run.job.workflow!)) continue;
    const key = scopeOf(share.run);
    const scope = scopes.get(key) ?? { contextKeys: share.run.contextKeys, ids: new Set<string>() };
    for (const subscriber of share.subscribers) scope.ids.add(subscriber.id);
    scopes.set(key, scope);
  }
  const endpoints = new Map<string, subscribersV1.ChannelEndpoint[]>();
  await Promise.all(
    [...scopes].map(async ([key, { contextKeys, ids }]) => {
      for (const part of chunks([...ids])) {
        const reply = await deps.clients.subscribers.listRecipientEndpoints({ internalSubscriberIds: part, channel: "chat", contextKeys }, call);
        for (const endpoint of reply.endpoints) {
          const owner = `${key}/${endpoint.internalSubscriberId}`;
          const owned = endpoints.get(owner);
          if (owned) owned.push(endpoint);
          else endpoints.set(owner, [endpoint]);
        }
      }
    }),
  );
  return (run, subscriberId) => endpoints.get(`${scopeOf(run)}/${subscriberId}`) ?? [];
}

/** The events of the digests that resume some of these shares' runs: one call per 1000 digests. */
async function digestsOf(shares: readonly Share[], call: CallOptions, deps: PipelineDeps): Promise<Map<string, Digested>> {
  const ids = [...new Set(shares.flatMap((share) => share.run.job.resumption?.digestIds ?? []))];
  const digests = new Map<string, Digested>();
  for (const part of chunks(ids)) {
    for (const digest of (await deps.clients.triggers.getDigests({ digestIds: part }, call)).digests) {
      digests.set(digest.id, { events: digest.events, arrivals: digest.arrivals, totalCount: digest.totalCount });
    }
  }
  return digests;
}

/**
 * Hands the events that reached a digest step to the triggers service, in order, 1000 per call;
 * answers, per stop, whether it opened a digest or joined one (its run ends here: the digest's
 * opener's goes on when it ends), or was let through (it runs on now).
 */
async function enterDigests(stops: readonly { run: SubscriberRun; stop: DigestStop }[], call: CallOptions, deps: PipelineDeps): Promise<DigestOutcome[]> {
  const outcomes: DigestOutcome[] = [];
  for (const part of chunks(stops)) {
    const jobs = new Map<triggersV1.TriggerJob, number>();
    const entries = part.map(({ run, stop }) => {
      const job = run.share.run.job;
      if (!jobs.has(job)) jobs.set(job, jobs.size);
      return {
        job: jobs.get(job)!,
        subscriberId: run.subscriber.id,
        stepId: stop.step.id,
        fromStep: stop.index + 1,
        key: stop.plan.key,
        runAt: timestampFromDate(stop.plan.runAt),
        ...(stop.plan.backoffMs !== undefined ? { backoffMs: stop.plan.backoffMs } : {}),
      };
    });
    const reply = await deps.clients.triggers.digestEvents({ jobs: [...jobs.keys()], entries }, call);
    outcomes.push(...reply.digested.map((digested, index): DigestOutcome => (!digested ? "passed" : reply.merged[index] ? "merged" : "opened")));
  }
  return outcomes;
}

/**
 * Counts the runs that reached a throttle step against their windows, in order, 1000 per call;
 * answers, per stop, whether it was let through (its run goes on) or throttled (it ends here).
 */
async function passThrottles(stops: readonly { run: SubscriberRun; stop: ThrottleStop }[], call: CallOptions, deps: PipelineDeps): Promise<boolean[]> {
  const passed: boolean[] = [];
  for (const part of chunks(stops)) {
    const entries = part.map(({ run, stop }) => ({
      key: stop.plan.key,
      transactionId: run.share.run.job.transactionId,
      windowEnds: timestampFromDate(stop.plan.windowEnds),
      threshold: stop.plan.threshold,
    }));
    passed.push(...(await deps.clients.triggers.passThrottles({ entries }, call)).passed);
  }
  return passed;
}

/**
 * One subscriber through the workflow's active steps, in order, from step `from`; stops at the
 * next delay step (saying when the rest runs), digest step (saying how the event digests) or
 * throttle step (saying what it counts against).
 */
async function composeForSubscriber(
  subscriber: RecipientProfile,
  run: JobRun,
  preferences: RunPreferences,
  chatEndpoints: readonly subscribersV1.ChannelEndpoint[],
  lookups: ReturnType<typeof integrationLookups>,
  deps: PipelineDeps,
  from: number,
  digested: Digested | undefined,
  /** The time delays count from: one for the whole delivery, so subscribers paused together resume together. */
  now: number,
  /** Where the run's changes to step jobs go (delays, digests, steps its conditions skipped). */
  stepJobs: StepJobChange[],
): Promise<{ messages: Composed[]; pause?: Pause; digest?: DigestStop; throttle?: ThrottleStop; waitsFor?: WaitForSend }> {
  const { job } = run;
  const workflow = job.workflow!;
  const payload = payloadOf(job);
  const overrides = (job.event?.overrides ?? {}) as JsonObject;
  const variables = subscriberVariables(subscriber);
  const tenant = job.tenant ? { identifier: job.tenant.identifier, name: job.tenant.name, data: job.tenant.data ?? {} } : undefined;
  const steps = activeSteps(workflow);
  const afterDigest = digestVariables(digested, steps, from);
  const render = renderer(
    workflow.templateEngine,
    {
      payload,
      subscriber: variables,
      ...(run.actor ? { actor: subscriberVariables(run.actor) } : {}),
      ...(tenant ? { tenant } : {}),
      ...(run.contexts ? { context: run.contexts } : {}),
      ...(run.env ? { env: run.env } : {}),
      ...afterDigest,
    },
    run.budget,
  );
  const context: RunContext = {
    job,
    workflow,
    subscriber,
    render,
    payload,
    overrides,
    contextKeys: run.contextKeys,
    digest: afterDigest.step as JsonObject,
    integrationById: lookups.integrationById,
    integrationFor: async (key) => chooseIntegration(await lookups.selectionFor(key), { tenant, payload, subscriber: variables }),
    integrationOfProvider: async (providerId, identifier) => {
      const active = (await lookups.activeOfProvider(providerId)).filter((integration) => identifier === undefined || integration.identifier === identifier);
      const selection = {
        integration: active.find((integration) => integration.conditions.length === 0),
        conditional: active.filter((integration) => integration.conditions.length > 0),
      };
      return chooseIntegration(selection, { tenant, payload, subscriber: variables });
    },
    chatEndpoints,
    actor: run.actor,
    notification: notificationTraitsOf(run, subscriber),
  };
  const filtersPass = (candidate: workflowsV1.Step) => stepPasses(filtersOf(candidate, render), { subscriber: variables, payload });
  const conditionsPass = (candidate: workflowsV1.Step) =>
    conditionsHoldFor(candidate, { payload, subscriber: variables, steps: afterDigest.steps, env: run.env ?? {} }, run, deps.log);
  const passes = (candidate: workflowsV1.Step) => filtersPass(candidate) && conditionsPass(candidate);
  /** What skips a step, if anything: a v2 step's conditions first, as Novu's bridge decides before its filters are read. */
  const skippedBy = (candidate: workflowsV1.Step): SkippedBy | undefined =>
    !conditionsPass(candidate) ? "skip" : !filtersPass(candidate) ? "filters" : undefined;
  const produced: Composed[] = [];
  for (let index = from; index < steps.length; index += 1) {
    const main = steps[index]!;
    let messages: Composed[];
    try {
      // As Novu runs a step: its own filters decide whether it runs, then the first active variant
      // whose conditions pass replaces it.
      const skip = skippedBy(main);
      if (skip) {
        const skipped = skippedByConditions(job, subscriber, main, skip);
        if (skipped) stepJobs.push(skipped);
        continue;
      }
      const step = main.variants.find((variant) => variant.active !== false && variant.filters.length > 0 && passes(variant)) ?? main;
      const type = step.template?.type ?? StepType.UNSPECIFIED;
      if (type === StepType.DELAY) {
        const delay = delayUntil(step, payload, overrides, now, subscriber.timezone);
        if ("error" in delay) {
          // As in Novu, a delay that cannot be computed fails the run of this subscriber here.
          deps.log.warn({ step: step.id, transactionId: job.transactionId, reason: delay.error }, "delay step failed");
          stepJobs.push(misconfigured(job, subscriber, main, delay.error));
          return { messages: produced };
        }
        stepJobs.push(delayed(job, subscriber, main, delay.runAt, now));
        return { messages: produced, pause: { fromStep: index + 1, runAt: delay.runAt } };
      }
      if (type === StepType.DIGEST) {
        const plan = digestPlan(step, payload, overrides, now, run.contextKeys, subscriber.timezone);
        if ("error" in plan) {
          // Like a bad delay: the run of this subscriber fails at the step.
          deps.log.warn({ step: step.id, transactionId: job.transactionId, reason: plan.error }, "digest step failed");
          stepJobs.push(misconfigured(job, subscriber, main, plan.error));
          return { messages: produced };
        }
        // The main step's id keys the digest, whichever variant ran.
        return { messages: produced, digest: { index, step: main, plan } };
      }
      if (type === StepType.THROTTLE) {
        const plan = throttlePlan(step, `${workflow.id}:${main.id}:${subscriber.id}`, payload, render, now);
        if (plan === undefined) continue;
        if ("error" in plan) {
          // Like a bad delay: the run of this subscriber fails at the step.
          deps.log.warn({ step: step.id, transactionId: job.transactionId, reason: plan.error }, "throttle step failed");
          return { messages: produced };
        }
        return { messages: produced, throttle: { index, plan } };
      }
      const channel = stepChannel(type);
      if (channel === undefined) continue;
      if (!channelEnabled(preferences.channels, channel)) {
        stepJobs.push(filteredByPreferences(job, subscriber, main, preferenceFilter(preferences, channel)));
        continue;
      }
      messages = await composeMessages(step, context);
    } catch (error) {
      // A template or filter value that does not render fails this step for this subscriber, not
      // the job. Once the job's rendering budget is spent every render fails alike: that is said once.
      if (!spentReported.has(run.budget)) {
        deps.log.warn({ err: error, step: main.id, transactionId: job.transactionId }, "step failed to render");
        if (run.budget.spent) {
          spentReported.add(run.budget);
          deps.log.warn(
            { step: main.id, transactionId: job.transactionId },
            "the job's templates took too long to render: its other renders fail without running",
          );
        }
      }
      if (main.shouldStopOnFail) break;
      continue;
    }
    produced.push(...messages);
    // A chat or push step with nowhere to send (no channel, no device) failed, as Novu counts it.
    if (main.shouldStopOnFail && (messages.length === 0 || messages.some((composed) => composed.message.status === messagesV1.MessageStatus.ERROR))) break;
    // The rest waits for the sends: it runs once a provider accepted one of them, never if all failed.
    const sends = main.shouldStopOnFail ? messages.flatMap((composed) => (composed.delivery ? [composed.delivery] : [])) : [];
    if (sends.length > 0) return { messages: produced, waitsFor: { fromStep: index + 1, sends } };
  }
  return { messages: produced };
}

/** The rendering budgets whose running out has been logged. */
const spentReported = new WeakSet<RenderBudget>();

/** The rules, per job, that could not be evaluated and have been logged. */
const ruleFailuresReported = new WeakMap<RenderBudget, Set<string>>();

/**
 * Whether a rule of the job holds (a step's v2 conditions, a topic subscription's condition). It
 * is evaluated within the job's rendering budget: a rule over a large payload list costs as much
 * as a template looping over it, and once the budget is spent the job fails like a template. A rule
 * that cannot be evaluated (an unknown operator) holds for no one, which is logged once per job and rule.
 */
function ruleHolds(run: JobRun, log: Logger, describe: () => { name: string; logged: Record<string, unknown> }, evaluate: () => boolean): boolean {
  try {
    return withinBudget(run.budget, evaluate);
  } catch (error) {
    if (run.budget.spent) throw error;
    // Named only when it fails: evaluated for every subscriber, a rule holds far more often than not.
    const rule = describe();
    const reported = ruleFailuresReported.get(run.budget) ?? new Set<string>();
    ruleFailuresReported.set(run.budget, reported);
    if (!reported.has(rule.name)) {
      reported.add(rule.name);
      log.warn({ err: error, ...rule.logged, transactionId: run.job.transactionId }, "conditions failed to evaluate");
    }
    return false;
  }
}

const conditionsHoldFor = (step: workflowsV1.Step, data: ConditionData, run: JobRun, log: Logger) =>
  ruleHolds(
    run,
    log,
    () => ({ name: `step ${step.id}`, logged: { step: step.id } }),
    () => conditionsHold(step.conditions, data),
  );

/**
 * The members of a topic page the job reaches: those one of whose subscriptions takes part
 * without a condition, and those for whom one of their subscriptions' conditions holds for the
 * trigger's payload, the member, the actor and the contexts.
 */
function reachedMembers(run: JobRun, members: readonly topicsV1.Member[], recipients: RecipientProfile[], log: Logger): RecipientProfile[] {
  const conditions = new Map(members.flatMap((member) => (member.conditions.length > 0 ? [[member.internalSubscriberId, member.conditions] as const] : [])));
  if (conditions.size === 0) return recipients;
  const payload = payloadOf(run.job);
  const actor = run.actor ? subscriberVariables(run.actor) : undefined;
  const describe = (condition: JsonObject) => () => {
    const rule = JSON.stringify(condition);
    return { name: `subscription ${rule}`, logged: { subscriptionCondition: rule.slice(0, 200) } };
  };
  return recipients.filter((recipient) => {
    const own = conditions.get(recipient.id);
    if (!own) return true;
    const data = { payload, subscriber: subscriberVariables(recipient), ...(actor ? { actor } : {}), ...(run.contexts ? { context: run.contexts } : {}) };
    return own.some((condition) => ruleHolds(run, log, describe(condition), () => subscriptionConditionHolds(condition, data)));
  });
}

/** Integration lookups cached for one delivery: one RPC per channel, not per message. */
function integrationLookups(clients: PipelineClients, call: CallOptions) {
  const byChannel = new Map<string, Promise<integrationsV1.SelectIntegrationResponse | undefined>>();
  const notFoundIsNone = (error: unknown) => {
    if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
    throw error;
  };
  let listing: Promise<{ all: integrationsV1.Integration[]; byId: Map<string, integrationsV1.Integration> }> | undefined;
  /** The environment's integrations, listed once. */
  const listed = () =>
    (listing ??= clients.integrations.listIntegrations({}, call).then(
      ({ integrations }) => ({ all: integrations, byId: new Map(integrations.map((integration) => [integration.id, integration])) }),
      (error: unknown) => {
        notFoundIsNone(error);
        return { all: [], byId: new Map() };
      },
    ));
  return {
    /** The channel's selection (`<channel>` or `<channel>:<identifier>`): the default integration and those with conditions. */
    selectionFor(key: string) {
      let lookup = byChannel.get(key);
      if (!lookup) {
        const [channel = key, identifier] = key.split(":");
        lookup = clients.integrations.selectIntegration({ channel, ...(identifier ? { identifier } : {}) }, call).then((reply) => reply, notFoundIsNone);
        byChannel.set(key, lookup);
      }
      return lookup;
    },
    integrationById: async (id: string) => (await listed()).byId.get(id),
    /** The provider of the environment's oldest active integration of a channel: the one Novu's jobs of the channel carry. */
    firstActiveProviderOf: async (channel: string) =>
      (await listed()).all.find((integration) => integration.channel === channel && integration.active && !integration.deleted)?.providerId,
    /** The environment's active integrations of a provider, oldest first (the order they are listed in). */
    activeOfProvider: async (providerId: string) =>
      (await listed()).all.filter((integration) => integration.providerId === providerId && integration.active && !integration.deleted),
  };
}

/**
 * The integration a run's message goes through: with a tenant, the first active integration whose
 * conditions pass on the tenant and the payload (as Novu tries them before the primary); else the
 * channel's default.
 */
function chooseIntegration(
  selection: Pick<integrationsV1.SelectIntegrationResponse, "integration" | "conditional"> | undefined,
  context: { tenant?: Record<string, unknown> | undefined; payload: Record<string, unknown>; subscriber: Record<string, unknown> },
): integrationsV1.Integration | undefined {
  if (!selection) return undefined;
  if (context.tenant) {
    const tenant = context.tenant;
    const conditional = selection.conditional.find((integration) =>
      stepPasses(filtersOfConditions(integration.conditions), { subscriber: context.subscriber, payload: context.payload, tenant }),
    );
    if (conditional) return conditional;
  }
  return selection.integration;
}

function filtersOfConditions(conditions: readonly integrationsV1.StepFilter[]): StepFilter[] {
  return conditions.map((filter) => ({
    isNegated: filter.isNegated,
    type: filter.type,
    value: filter.value === "OR" ? "OR" : "AND",
    children: filter.children.map((part) => ({
      field: part.field,
      value: part.value,
      operator: part.operator as StepFilter["children"][number]["operator"],
      on: part.on === "subscriber" || part.on === "payload" ? part.on : "tenant",
    })),
  }));
}
