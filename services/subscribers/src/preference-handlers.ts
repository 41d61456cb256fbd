import type { Client, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { subscribersV1, type workflowsV1 } from "@notify/proto";
import { failedPrecondition, invalidArgument, invalidField, notFound, scopeHeaders, scopeOf, withTransaction, type Pool, type Scope } from "@notify/runtime";
import { scheduleFromStored, scheduleToStored } from "./mapping.js";
import {
  choicesOf,
  choicesOfRow,
  criticalityFilter,
  perChannel,
  resolveAll,
  scheduleErrors,
  subscriberPreferences,
  toChannelPreferences,
  workflowFactsOf,
  type WorkflowFacts,
} from "./preferences.js";
import * as store from "./store.js";

/** Subscribers per ResolveChannelPreferences call: one page of a fan-out. */
export const MAX_RESOLVE_BATCH = 1000;
/** Active workflows read per page, and the most a preferences answer lists (Novu lists them all). */
const WORKFLOW_PAGE = 1000;
export const MAX_LISTED_WORKFLOWS = 10_000;

export interface PreferenceHandlerDeps {
  pool: Pool;
  /** The workflow catalogue (served by the triggers process). */
  workflows: Client<typeof workflowsV1.WorkflowService>;
}

type Handlers = Pick<
  ServiceImpl<typeof subscribersV1.SubscriberService>,
  "getSubscriberPreferences" | "updateSubscriberPreferences" | "resolveChannelPreferences"
>;

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

  /** The preferences of the subscriber with this internal id over the listed active workflows. */
  async function preferencesOf(scope: Scope, context: HandlerContext, id: string, criticality: subscribersV1.Criticality) {
    const [listed, rows] = await Promise.all([activeWorkflows(scope, context), store.selectPreferences(pool, scope.environmentId, id)]);
    const { global, workflows: perWorkflow } = subscriberPreferences(listed, rows, criticalityFilter(criticality));
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
      return preferencesOf(scope, context, subscriber.id, request.criticality);
    },

    async updateSubscriberPreferences(request, context) {
      const scope = scopeOf(context);
      const choices = choicesOf(request.channels);
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
          await store.clearWorkflowChoices(tx, scope.environmentId, subscriber.id, perChannel(cleared));
        }
        await store.upsertPreferences(tx, scope.environmentId, {
          organizationId: scope.organizationId,
          subscriberId: subscriber.id,
          workflowId: workflow?.id ?? null,
          choices: perChannel(choices),
          schedule: request.schedule ? scheduleToStored(request.schedule) : null,
        });
        return subscriber.id;
      });
      return preferencesOf(scope, context, id, subscribersV1.Criticality.NON_CRITICAL);
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
          : await store.selectWorkflowPreferences(pool, scope.environmentId, request.subscriberIds, workflow.id);
      const globalOf = new Map(rows.filter((row) => row.workflow_id === null).map((row) => [row.subscriber_id, choicesOfRow(row)]));
      const ownOf = new Map(rows.filter((row) => row.workflow_id !== null).map((row) => [row.subscriber_id, choicesOfRow(row)]));
      const chose = (subscriberId: string) => globalOf.has(subscriberId) || ownOf.has(subscriberId);
      return {
        critical: workflow.critical,
        defaults: toChannelPreferences(resolveAll(workflow, {}, {})),
        subscribers: [...new Set(request.subscriberIds.filter(chose))].map((subscriberId) => ({
          subscriberId,
          channels: toChannelPreferences(resolveAll(workflow, globalOf.get(subscriberId) ?? {}, ownOf.get(subscriberId) ?? {})),
        })),
      };
    },
  };
}
