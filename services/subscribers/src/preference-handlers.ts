import { Code, ConnectError, type Client, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { subscribersV1, type workflowsV1 } from "@notify/proto";
import {
  checkContextKeys,
  failedPrecondition,
  invalidArgument,
  invalidField,
  notFound,
  scopeHeaders,
  scopeOf,
  withTransaction,
  type Pool,
  type Scope,
} from "@notify/runtime";
import { scheduleFromStored, scheduleToStored } from "./mapping.js";
import {
  choicesOf,
  choicesOfRow,
  perChannel,
  resolveAll,
  scheduleErrors,
  subscriberPreferences,
  toChannelPreferences,
  workflowFactsOf,
  workflowFilter,
  type ChannelChoices,
  type WorkflowFacts,
} from "./preferences.js";
import * as store from "./store.js";

/** Subscribers per ResolveChannelPreferences call: one page of a fan-out. */
export const MAX_RESOLVE_BATCH = 1000;
/** Active workflows read per page, and the most a preferences answer lists (Novu lists them all). */
const WORKFLOW_PAGE = 1000;
export const MAX_LISTED_WORKFLOWS = 10_000;
/** Entries per BulkUpdateSubscriberPreferences call (Novu's bulk limit). */
export const MAX_BULK_UPDATES = 100;

export interface PreferenceHandlerDeps {
  pool: Pool;
  /** The workflow catalogue (served by the triggers process). */
  workflows: Client<typeof workflowsV1.WorkflowService>;
}

type Handlers = Pick<
  ServiceImpl<typeof subscribersV1.SubscriberService>,
  "getSubscriberPreferences" | "updateSubscriberPreferences" | "bulkUpdateSubscriberPreferences" | "setDefaultSchedule" | "resolveChannelPreferences"
>;

type WorkflowListed = (workflow: workflowsV1.ActiveWorkflow) => boolean;

/** What updates answer: the non-critical workflows, as Novu's update answers do. */
const NON_CRITICAL = workflowFilter({ criticality: subscribersV1.Criticality.NON_CRITICAL, tags: [], severities: [] });

const callOptions = (scope: Scope, context: HandlerContext) => ({ headers: scopeHeaders(scope), signal: context.signal });

export function createPreferenceHandlers({ pool, workflows }: PreferenceHandlerDeps): Handlers {
  async function activeWorkflows(scope: Scope, context: HandlerContext): Promise<workflowsV1.ActiveWorkflow[]> {
    const listed: workflowsV1.ActiveWorkflow[] = [];
    let after: string | undefined;
    do {
      const page = await workflows.listActiveWorkflows({ limit: WORKFLOW_PAGE, ...(after !== undefined ? { after } : {}) }, callOptions(scope, context));
      listed.push(...page.workflows);
      after = page.next;
    } while (after !== undefined && listed.length < MAX_LISTED_WORKFLOWS);
    return listed.slice(0, MAX_LISTED_WORKFLOWS);
  }

  async function workflowFacts(scope: Scope, context: HandlerContext, workflowId: string): Promise<WorkflowFacts> {
    return workflowFactsOf(await workflows.getWorkflow({ key: { case: "any", value: workflowId } }, callOptions(scope, context)));
  }

  /** A workflow by any of its names, or undefined when the catalogue has none of that name. */
  async function workflowFactsIfKnown(scope: Scope, context: HandlerContext, workflowId: string): Promise<WorkflowFacts | undefined> {
    try {
      return await workflowFacts(scope, context, workflowId);
    } catch (error) {
      if (ConnectError.from(error).code === Code.NotFound) return undefined;
      throw error;
    }
  }

  /**
   * The preferences of the subscriber with this internal id in one context scope over the active
   * workflows (those of `catalogue` when the caller has read them already), listing those `listed` picks.
   */
  async function preferencesOf(
    scope: Scope,
    context: HandlerContext,
    id: string,
    contextKeys: readonly string[],
    listed: WorkflowListed,
    options: { everyChannel?: boolean; catalogue?: workflowsV1.ActiveWorkflow[] } = {},
  ) {
    const [active, rows] = await Promise.all([
      options.catalogue ?? activeWorkflows(scope, context),
      store.selectPreferences(pool, scope.environmentId, id, contextKeys),
    ]);
    const { global, workflows: perWorkflow } = subscriberPreferences(active, rows, listed, options.everyChannel);
    const schedule = rows.find((row) => row.workflow_id === null)?.schedule;
    return {
      global: { ...global, ...(schedule ? { schedule: scheduleFromStored(schedule) } : {}) },
      workflows: perWorkflow,
    };
  }

  return {
    async getSubscriberPreferences(request, context) {
      const scope = scopeOf(context);
      const subscriber = await store.selectSubscriber(pool, scope.environmentId, request.subscriberId);
      if (!subscriber) throw notFound(`Subscriber ${request.subscriberId} not found`);
      return preferencesOf(scope, context, subscriber.id, checkContextKeys(request.contextKeys), workflowFilter(request), {
        everyChannel: request.includeInactiveChannels,
      });
    },

    async updateSubscriberPreferences(request, context) {
      const scope = scopeOf(context);
      const choices = choicesOf(request.channels);
      const contextKeys = checkContextKeys(request.contextKeys);
      if (request.schedule) {
        if (request.workflowId !== undefined) throw invalidField("schedule", "schedule can only be set on global preferences");
        const errors = scheduleErrors(request.schedule);
        if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
      }
      // The workflow is resolved before the subscriber, so an unknown workflow wins (as in Novu).
      const workflow = request.workflowId === undefined ? undefined : await workflowFacts(scope, context, request.workflowId);
      if (workflow?.critical) throw failedPrecondition(`Critical workflow with id: ${workflow.id} can not be updated`);
      const id = await withTransaction(pool, async (tx) => {
        // The row lock serialises this subscriber's preference writes and keeps it from being deleted meanwhile.
        const subscriber = await store.selectSubscriberForUpdate(tx, scope.environmentId, request.subscriberId);
        if (!subscriber) throw notFound(`Subscriber with id: ${request.subscriberId} is not found`);
        if (Object.keys(choices).length === 0 && !request.schedule) return subscriber.id;
        if (!workflow) {
          // A global choice overrides the earlier per-workflow choices of the same channels.
          const cleared = Object.fromEntries(Object.keys(choices).map((channel) => [channel, true as const]));
          await store.clearWorkflowChoices(tx, scope.environmentId, subscriber.id, contextKeys, perChannel(cleared));
        }
        await store.upsertPreferences(tx, scope.environmentId, { organizationId: scope.organizationId, subscriberId: subscriber.id, contextKeys }, [
          { workflowId: workflow?.id ?? null, choices: perChannel(choices), schedule: request.schedule ? scheduleToStored(request.schedule) : null },
        ]);
        return subscriber.id;
      });
      return {
        ...(await preferencesOf(scope, context, id, contextKeys, NON_CRITICAL, { everyChannel: request.includeInactiveChannels })),
        updatedWorkflowIds: workflow ? [workflow.id] : [],
      };
    },

    async bulkUpdateSubscriberPreferences(request, context) {
      const scope = scopeOf(context);
      if (request.updates.length > MAX_BULK_UPDATES) throw invalidField("updates", `at most ${MAX_BULK_UPDATES} updates per call`, request.updates.length);
      if (request.updates.length === 0) {
        // As Novu: an unknown subscriber is named first, then the empty list.
        if (!(await store.selectSubscriber(pool, scope.environmentId, request.subscriberId))) {
          throw notFound(`Subscriber with id: ${request.subscriberId} is not found`);
        }
        throw failedPrecondition("No preferences provided for bulk update");
      }
      const contextKeys = checkContextKeys(request.contextKeys);
      const catalogue = await activeWorkflows(scope, context);
      // Later names win, so a key resolves as GetWorkflow resolves it: id, then identifier, then slug.
      const byName = new Map<string, WorkflowFacts>();
      for (const workflow of catalogue) {
        const facts = workflowFactsOf(workflow);
        for (const name of [workflow.slug, workflow.identifier, workflow.id]) byName.set(name, facts);
      }
      const names = [...new Set(request.updates.map((update) => update.workflowId))];
      // Inactive workflows are not in the catalogue's listing: those few are looked up one by one.
      const resolved = await Promise.all(names.map(async (name) => [name, byName.get(name) ?? (await workflowFactsIfKnown(scope, context, name))] as const));
      const unknown = resolved.filter(([, facts]) => facts === undefined).map(([name]) => name);
      if (unknown.length > 0) throw notFound(`Workflows with ids: ${unknown.join(", ")} not found`);
      const factsOf = new Map(resolved.flatMap(([name, facts]) => (facts ? [[name, facts] as const] : [])));
      const critical = [...new Set([...factsOf.values()].filter((facts) => facts.critical).map((facts) => facts.id))];
      if (critical.length > 0) throw failedPrecondition(`Critical workflows with ids: ${critical.join(", ")} cannot be updated`);
      // A workflow named twice (by id and identifier, say) takes its last entry, as in Novu.
      const choicesById = new Map<string, ChannelChoices>();
      for (const update of request.updates) choicesById.set(factsOf.get(update.workflowId)!.id, choicesOf(update.channels));
      const writes = [...choicesById]
        .filter(([, choices]) => Object.keys(choices).length > 0)
        .map(([workflowId, choices]) => ({ workflowId, choices: perChannel(choices), schedule: null }));
      const id = await withTransaction(pool, async (tx) => {
        const subscriber = await store.selectSubscriberForUpdate(tx, scope.environmentId, request.subscriberId);
        if (!subscriber) throw notFound(`Subscriber with id: ${request.subscriberId} is not found`);
        if (writes.length > 0)
          await store.upsertPreferences(tx, scope.environmentId, { organizationId: scope.organizationId, subscriberId: subscriber.id, contextKeys }, writes);
        return subscriber.id;
      });
      return { ...(await preferencesOf(scope, context, id, contextKeys, NON_CRITICAL, { catalogue })), updatedWorkflowIds: [...choicesById.keys()] };
    },

    async setDefaultSchedule(request, context) {
      const scope = scopeOf(context);
      if (!request.schedule) throw invalidField("schedule", "schedule should not be null or undefined");
      const errors = scheduleErrors(request.schedule);
      if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
      const contextKeys = checkContextKeys(request.contextKeys);
      const stored = await store.insertScheduleIfAbsent(pool, scope.environmentId, request.subscriberId, contextKeys, scheduleToStored(request.schedule));
      if (!stored) throw notFound(`Subscriber with id: ${request.subscriberId} is not found`);
      return { schedule: scheduleFromStored(stored.schedule) };
    },

    async resolveChannelPreferences(request, context) {
      const scope = scopeOf(context);
      if (request.subscriberIds.length > MAX_RESOLVE_BATCH) {
        throw invalidField("subscriberIds", `at most ${MAX_RESOLVE_BATCH} subscribers per call`, request.subscriberIds.length);
      }
      const workflow = request.workflow
        ? workflowFactsOf({ ...request.workflow, id: request.workflowId })
        : await workflowFacts(scope, context, request.workflowId);
      // Critical workflows ignore subscriber choices, so there is nothing to read.
      const rows =
        workflow.critical || request.subscriberIds.length === 0
          ? []
          : await store.selectWorkflowPreferences(pool, scope.environmentId, request.subscriberIds, workflow.id, checkContextKeys(request.contextKeys));
      const globalOf = new Map(rows.filter((row) => row.workflow_id === null).map((row) => [row.subscriber_id, choicesOfRow(row)]));
      const ownOf = new Map(rows.filter((row) => row.workflow_id !== null).map((row) => [row.subscriber_id, choicesOfRow(row)]));
      const chose = (subscriberId: string) => globalOf.has(subscriberId) || ownOf.has(subscriberId);
      return {
        critical: workflow.critical,
        defaults: toChannelPreferences(resolveAll(workflow, {}, {})),
        subscribers: [...new Set(request.subscriberIds.filter(chose))].map((subscriberId) => {
          const global = globalOf.get(subscriberId) ?? {};
          const own = ownOf.get(subscriberId) ?? {};
          return {
            subscriberId,
            channels: toChannelPreferences(resolveAll(workflow, global, own)),
            workflowChoices: toChannelPreferences(own),
            globalChoices: toChannelPreferences(global),
          };
        }),
      };
    },
  };
}
