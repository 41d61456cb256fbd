import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { messagesV1, type integrationsV1, type subscribersV1, type topicsV1, triggersV1, type workflowsV1 } from "@notify/proto";
import type { Logger } from "@notify/runtime";
import { composeMessages, subscriberVariables, type NewMessage, type RunContext } from "./compose.js";
import { stepPasses, type StepFilter } from "./filters.js";
import { render, templateData } from "./render.js";

export interface PipelineClients {
  triggers: Client<typeof triggersV1.TriggerService>;
  subscribers: Client<typeof subscribersV1.SubscriberService>;
  topics: Client<typeof topicsV1.TopicService>;
  integrations: Client<typeof integrationsV1.IntegrationService>;
  messages: Client<typeof messagesV1.MessageService>;
}

export interface PipelineDeps {
  clients: PipelineClients;
  log: Logger;
  /** Subscribers handled per round trip: one lookup and one message batch per page. */
  pageSize: number;
}

const CHANNEL_STEP_TYPES = new Set(["in_app", "email", "sms", "chat", "push"]);

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

const PREFERENCE_KEYS: Record<string, keyof subscribersV1.ChannelPreferences> = {
  in_app: "inApp",
  email: "email",
  sms: "sms",
  chat: "chat",
  push: "push",
};

function channelEnabled(channels: subscribersV1.ChannelPreferences | undefined, type: string): boolean {
  const key = PREFERENCE_KEYS[type];
  return !channels || !key || channels[key] !== false;
}

/** The active steps, in order. */
function activeSteps(workflow: workflowsV1.Workflow): workflowsV1.Step[] {
  return workflow.steps.filter((step) => step.active !== false);
}

function filtersOf(step: workflowsV1.Step, data: Record<string, unknown>): StepFilter[] {
  return step.filters.map((filter) => ({
    isNegated: filter.isNegated,
    type: filter.type,
    value: filter.value === "OR" ? "OR" : "AND",
    children: filter.children.map((part) => ({
      field: part.field,
      value: render(part.value, data),
      operator: part.operator as StepFilter["children"][number]["operator"],
      on: part.on === "subscriber" ? "subscriber" : "payload",
    })),
  }));
}

export interface JobRun {
  job: triggersV1.TriggerJob;
  call: CallOptions;
  actor?: subscribersV1.Subscriber | undefined;
}

/**
 * Runs a trigger job: every recipient, page by page (one subscriber lookup and one message batch
 * per page, never one call per subscriber), each through the workflow's active steps in order.
 * Safe to run again: messages are created idempotently per (transaction, subscriber, step, channel).
 */
export async function runTriggerJob(job: triggersV1.TriggerJob, deps: PipelineDeps): Promise<{ subscribers: number; messages: number }> {
  const call: CallOptions = { headers: { "notify-organization-id": job.organizationId, "notify-environment-id": job.environmentId } };
  const event = job.event!;
  const { clients } = deps;
  const totals = { subscribers: 0, messages: 0 };
  // A trigger canceled after it was published is dropped here, before anything runs.
  if ((await clients.triggers.getTriggerState({ transactionId: job.transactionId }, call)).canceled) return totals;
  const run: JobRun = { job, call, actor: await ensureActor(event, clients, call) };
  const handlePage = async (subscribers: subscribersV1.Subscriber[]) => {
    totals.subscribers += subscribers.length;
    totals.messages += await runPage(subscribers, run, deps);
  };

  if (event.broadcast) {
    let after: string | undefined;
    do {
      const page = await clients.subscribers.searchSubscribers(
        { limit: deps.pageSize, direction: 1, ...(after ? { after } : {}) },
        call,
      );
      await handlePage(page.subscribers);
      after = page.next;
    } while (after);
    return totals;
  }

  const { direct, credentials, topicKeys } = splitRecipients(event.to);
  if (direct.length > 0) {
    let { subscribers } = await clients.subscribers.ensureSubscribers({ subscribers: direct }, call);
    if (credentials.length > 0) {
      // Channels of recipient objects, by the credentials rules; entries that cannot bind are skipped.
      const applied = await clients.subscribers.applyChannelCredentials({ entries: credentials }, call);
      const updated = new Map(applied.subscribers.map((subscriber) => [subscriber.id, subscriber]));
      subscribers = subscribers.map((subscriber) => updated.get(subscriber.id) ?? subscriber);
    }
    await handlePage(subscribers);
  }
  if (topicKeys.length > 0) {
    // Topic members, minus those named individually and the actor, each subscriber once.
    const exclude = [...direct.map((entry) => entry.subscriberId), ...(run.actor ? [run.actor.subscriberId] : [])];
    let after: string | undefined;
    do {
      const page = await clients.topics.pageMembers({ topicKeys, excludeSubscriberIds: exclude, limit: deps.pageSize, ...(after ? { after } : {}) }, call);
      if (page.members.length > 0) {
        const found = await clients.subscribers.batchGetSubscribers({ ids: page.members.map((member) => member.internalSubscriberId) }, call);
        await handlePage(found.subscribers);
      }
      after = page.next;
    } while (after);
  }
  return totals;
}

async function ensureActor(event: triggersV1.TriggerEvent, clients: PipelineClients, call: CallOptions) {
  const actor = event.actor?.kind;
  if (!actor?.case) return undefined;
  const upsert = actor.case === "subscriberId" ? { subscriberId: actor.value } : { subscriberId: actor.value.subscriberId, ...(actor.value.fields ? { fields: actor.value.fields } : {}) };
  if (actor.case === "subscriberId") {
    const found = await clients.subscribers.batchGetSubscribers({ subscriberIds: [actor.value] }, call);
    return found.subscribers[0];
  }
  const ensured = await clients.subscribers.ensureSubscribers({ subscribers: [upsert] }, call);
  return ensured.subscribers[0];
}

/** One page of subscribers through the steps; returns how many messages the page produced. */
async function runPage(subscribers: subscribersV1.Subscriber[], run: JobRun, deps: PipelineDeps): Promise<number> {
  if (subscribers.length === 0) return 0;
  const { job } = run;
  const workflow = job.workflow!;
  const payload = (job.event?.payload ?? {}) as JsonObject;
  const overrides = (job.event?.overrides ?? {}) as JsonObject;
  const lookups = integrationLookups(deps.clients, run.call);
  const steps = activeSteps(workflow);
  const batch: NewMessage[] = [];
  // Preferences for the whole page in one call (a critical workflow ignores subscribers' choices).
  const preferences = await deps.clients.subscribers.resolveChannelPreferences(
    { workflowId: workflow.id, subscriberIds: subscribers.map((subscriber) => subscriber.id) },
    run.call,
  );
  const enabledChannels = new Map(preferences.subscribers.map((entry) => [entry.subscriberId, entry.channels]));

  for (const subscriber of subscribers) {
    const variables = subscriberVariables(subscriber);
    const data = templateData({
      payload,
      subscriber: variables,
      ...(run.actor ? { actor: subscriberVariables(run.actor) } : {}),
      ...(job.tenant ? { tenant: { identifier: job.tenant.identifier, name: job.tenant.name, data: job.tenant.data ?? {} } } : {}),
      step: {},
    });
    const context: RunContext = { job, workflow, subscriber, data, payload, overrides, ...lookups };
    const passes = (candidate: workflowsV1.Step) => stepPasses(filtersOf(candidate, data), { subscriber: variables, payload });
    for (const main of steps) {
      // The first active variant whose conditions pass replaces the step, as in Novu.
      const step = main.variants.find((variant) => variant.active !== false && variant.filters.length > 0 && passes(variant)) ?? main;
      const type = step.template?.type ?? "";
      if (!CHANNEL_STEP_TYPES.has(type)) continue;
      if (step === main && !passes(step)) continue;
      if (!channelEnabled(enabledChannels.get(subscriber.id), type)) continue;
      let messages: NewMessage[];
      try {
        messages = await composeMessages(step, context);
      } catch (error) {
        // A template that does not render fails this step for this subscriber, not the job.
        deps.log.warn({ err: error, step: step.id, transactionId: job.transactionId }, "step failed to render");
        if (main.shouldStopOnFail) break;
        continue;
      }
      batch.push(...messages);
      const failed = messages.some((message) => message.status === messagesV1.MessageStatus.ERROR);
      if (failed && main.shouldStopOnFail) break;
    }
  }
  if (batch.length === 0) return 0;
  const created = await deps.clients.messages.createMessages({ messages: batch }, run.call);
  return created.messages.filter((message) => message.created).length;
}

/** Integration lookups cached for one page: one RPC per channel, not per message. */
function integrationLookups(clients: PipelineClients, call: CallOptions) {
  const byChannel = new Map<string, Promise<integrationsV1.Integration | undefined>>();
  const byId = new Map<string, Promise<integrationsV1.Integration | undefined>>();
  const notFoundIsNone = (error: unknown) => {
    if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
    throw error;
  };
  return {
    integrationFor(key: string) {
      let lookup = byChannel.get(key);
      if (!lookup) {
        const [channel = key, identifier] = key.split(":");
        lookup = clients.integrations
          .selectIntegration({ channel, ...(identifier ? { identifier } : {}) }, call)
          .then((reply) => reply.integration, notFoundIsNone);
        byChannel.set(key, lookup);
      }
      return lookup;
    },
    integrationById(id: string) {
      let lookup = byId.get(id);
      if (!lookup) {
        lookup = clients.integrations
          .listIntegrations({}, call)
          .then((reply) => {
            for (const integration of reply.integrations) byId.set(integration.id, Promise.resolve(integration));
            return reply.integrations.find((integration) => integration.id === id);
          }, notFoundIsNone);
        byId.set(id, lookup);
      }
      return lookup;
    },
  };
}
