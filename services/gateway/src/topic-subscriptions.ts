import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { topicsV1, workflowsV1 } from "@notify/proto";
import { contextKeysOf } from "@notify/runtime";
import type { Clients } from "./clients.js";
import { contextInputsOf, type ContextBody } from "./mappers/context-inputs.js";
import { preferencesOf, preferenceWorkflowIds, preferenceWorkflowToJson, type PreferenceFilter } from "./mappers/subscription-preferences.js";
import { subscriptionDetailsToJson } from "./mappers/topics.js";
import { HttpError } from "./errors.js";
import type { RouteCall } from "./route.js";
import type { SubscriberSession } from "./sessions.js";

/** Workflows fetched per call: BatchGetWorkflows' bound, and ListActiveWorkflows' page. */
const WORKFLOW_BATCH = 1000;
/** Active workflows preference filters are resolved over, at most (the most a preference listing shows too). */
const MAX_RESOLVED_WORKFLOWS = 10_000;

/**
 * The keys of the contexts a subscription is scoped to, each context created on first mention
 * (as a trigger's are); none without a `context`.
 */
export async function contextKeysFor(context: ContextBody | undefined, clients: Clients, call: RouteCall): Promise<string[]> {
  const contexts = context ? contextInputsOf(context) : [];
  if (contexts.length === 0) return [];
  await clients.contexts.ensureContexts({ contexts }, call);
  return contextKeysOf(contexts);
}

/** The preferences some filters make over the environment's active workflows; none without filters. */
export async function resolvePreferences(filters: readonly PreferenceFilter[] | undefined, clients: Clients, call: RouteCall) {
  if (!filters || filters.length === 0) return [];
  const workflows: workflowsV1.ActiveWorkflow[] = [];
  let after: string | undefined;
  do {
    const page = await clients.workflows.listActiveWorkflows({ limit: WORKFLOW_BATCH, ...(after !== undefined ? { after } : {}) }, call);
    workflows.push(...page.workflows);
    after = page.next;
  } while (after !== undefined && workflows.length < MAX_RESOLVED_WORKFLOWS);
  return preferencesOf(filters, workflows);
}

/** The workflows some subscriptions' preferences name, by id (deleted ones absent). */
export async function preferenceWorkflows(subscriptions: readonly topicsV1.Subscription[], clients: Clients, call: RouteCall) {
  const ids = preferenceWorkflowIds(subscriptions);
  const byId = new Map<string, workflowsV1.Workflow>();
  for (let start = 0; start < ids.length; start += WORKFLOW_BATCH) {
    const reply = await clients.workflows.batchGetWorkflows({ ids: ids.slice(start, start + WORKFLOW_BATCH) }, call);
    for (const workflow of reply.workflows) byId.set(workflow.id, workflow);
  }
  return byId;
}

/** Renames a subscription and, when preferences are given, replaces its preferences with those they make. */
export async function updateSubscription(
  named: { topicKey: string; identifier: string },
  change: { name?: string | undefined; preferences?: PreferenceFilter[] | undefined },
  clients: Clients,
  call: RouteCall,
) {
  const preferences = change.preferences && { replacePreferences: true, preferences: await resolvePreferences(change.preferences, clients, call) };
  return clients.topics.updateSubscription({ ...named, ...(change.name !== undefined ? { name: change.name } : {}), ...preferences }, call);
}

/** Two context scopes (sorted keys) are the same. */
const sameScope = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((key, index) => key === b[index]);

/**
 * The subscription of the topic an identifier names, when it is the session subscriber's in the
 * session's contexts; undefined otherwise (another subscriber's is as good as none to this one).
 */
export async function sessionSubscription(session: SubscriberSession, topicKey: string, identifier: string, clients: Clients, call: RouteCall) {
  try {
    const subscription = await clients.topics.getSubscription({ topicKey, identifier }, call);
    const owned = subscription.externalSubscriberId === session.subscriberId && sameScope(subscription.contextKeys, session.contextKeys);
    return owned ? subscription : undefined;
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
    throw error;
  }
}

/** The session subscriber's subscription that the identifier names; 404 when there is none. */
export async function ownedSubscription(session: SubscriberSession, topicKey: string, identifier: string, clients: Clients, call: RouteCall) {
  const subscription = await sessionSubscription(session, topicKey, identifier, clients, call);
  if (!subscription) throw new HttpError(404, `Subscription '${identifier}' was not found`);
  return subscription;
}

/** The session subscriber's subscriptions of a topic in the session's contexts (one at most); none of a topic that does not exist. */
export async function sessionSubscriptions(session: SubscriberSession, topicKey: string, clients: Clients, call: RouteCall) {
  const request = { topicKey, subscriberId: session.subscriberId, contextKeys: session.contextKeys, limit: 100 };
  try {
    return (await clients.topics.listSubscriptions(request, call)).subscriptions;
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) return [];
    throw error;
  }
}

/**
 * A subscription as the Inbox reads it, its preferences followed by one for each workflow `shown`
 * names (by id, identifier or tag) that has none stored: enabled, as a workflow without a
 * preference reaches the subscriber.
 */
export async function inboxSubscriptionToJson(
  subscription: topicsV1.Subscription,
  shown: { workflowIds?: string[] | undefined; tags?: string[] | undefined },
  clients: Clients,
  call: RouteCall,
) {
  const wanted =
    shown.workflowIds?.length || shown.tags?.length
      ? [{ workflowIds: shown.workflowIds ?? [], tags: shown.tags ?? [], enabled: true, condition: undefined }]
      : [];
  const stored = new Set(subscription.preferences.map((preference) => preference.workflowId));
  const computed = (await resolvePreferences(wanted, clients, call)).filter((preference) => !stored.has(preference.workflowId));
  const withComputed = { ...subscription, preferences: [...subscription.preferences, ...computed] };
  return subscriptionDetailsToJson(withComputed, await preferenceWorkflows([withComputed], clients, call));
}

/**
 * Sets one workflow's preference of the session subscriber's subscription (in the session's
 * contexts) that the identifier names, in whatever topic; answers it as the Inbox reads it. A
 * critical workflow always reaches the subscriber: 400.
 */
export async function setSubscriptionPreference(
  session: SubscriberSession,
  change: { identifier: string; workflowId: string; enabled?: boolean | undefined; condition?: Record<string, unknown> | undefined },
  clients: Clients,
  call: RouteCall,
) {
  const workflow = await clients.workflows.getWorkflow({ key: { case: "any", value: change.workflowId } }, call);
  if (workflow.critical) throw new HttpError(400, `Workflow ${workflow.identifier} is critical: its notifications cannot be turned off`);
  const subscription = await clients.topics.setSubscriptionPreference(
    {
      subscriberId: session.subscriberId,
      identifier: change.identifier,
      contextKeys: session.contextKeys,
      workflowId: workflow.id,
      ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
      ...(change.condition !== undefined ? { condition: change.condition as JsonObject } : {}),
    },
    call,
  );
  const preference = subscription.preferences.find((candidate) => candidate.workflowId === workflow.id)!;
  return {
    level: "template" as const,
    subscriptionId: subscription.identifier,
    enabled: preference.enabled,
    ...(preference.condition ? { condition: preference.condition } : {}),
    workflow: preferenceWorkflowToJson(workflow),
  };
}
