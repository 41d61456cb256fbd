import { Code, ConnectError } from "@connectrpc/connect";
import type { layoutsV1, workflowsV1 } from "@notify/proto";
import { scopeHeaders } from "@notify/runtime";
import { stepLayoutId } from "@notify/templates";
import type { Clients } from "./clients.js";
import { HttpError, httpErrorFromRpc, isCode } from "./errors.js";
import { MAX_PUBLISHED, parentIdOf, sameContent } from "./mappers/environments.js";
import { syncedWorkflowOf } from "./mappers/workflows-v2.js";
import type { RouteCall, RouteInput } from "./route.js";

/**
 * Options for RPCs made in `environmentId`, another environment of the caller's organization
 * (the caller's own when not given); 404 when the organization has no such environment.
 */
export async function callInEnvironment(input: RouteInput<unknown, unknown, unknown>, environmentId: string | undefined): Promise<RouteCall> {
  const { scope, accounts, call } = input;
  if (environmentId === undefined || environmentId === scope.environmentId) return call;
  const environment = await accounts.environments.byId(environmentId);
  if (!environment || environment.organizationId !== scope.organizationId) throw new HttpError(404, `Environment with id ${environmentId} not found`);
  return { headers: scopeHeaders({ organizationId: scope.organizationId, environmentId }), signal: call.signal };
}

/** The id of an environment named by its id or, as Novu's tags route also takes it, its identifier (the applicationIdentifier). */
export async function environmentIdNamed(input: RouteInput<unknown, unknown, unknown>, idOrIdentifier: string): Promise<string> {
  if (idOrIdentifier === input.scope.environmentId || (await input.accounts.environments.byId(idOrIdentifier))) return idOrIdentifier;
  return (await input.accounts.environments.byIdentifier(idOrIdentifier))?.id ?? idOrIdentifier;
}

/**
 * Novu's sync: the workflow copied into another environment of the organization, over the
 * workflow with the same trigger identifier there if it has one. Answers the target's workflow.
 */
export async function syncWorkflow(input: RouteInput<{ workflowId: string }, unknown, { targetEnvironmentId: string }>): Promise<workflowsV1.Workflow> {
  const { params, body, scope, clients, call } = input;
  if (body.targetEnvironmentId === scope.environmentId) throw new HttpError(400, "Cannot sync workflow to the same environment");
  const source = await clients.workflows.getWorkflow({ key: { case: "any", value: params.workflowId } }, call);
  const targetCall = await callInEnvironment(input, body.targetEnvironmentId);
  return syncInto(source, await counterpartOf(source, clients, targetCall), clients, targetCall, call);
}

/** The target's workflow with the source's trigger identifier, if it has one. */
async function counterpartOf(source: workflowsV1.Workflow, clients: Clients, targetCall: RouteCall): Promise<workflowsV1.Workflow | undefined> {
  try {
    return await clients.workflows.getWorkflow({ key: { case: "identifier", value: source.identifier } }, targetCall);
  } catch (error) {
    if (!isCode(error, Code.NotFound)) throw error;
    return undefined;
  }
}

/**
 * Copies the layouts the workflow's email steps name into the target, by identifier: over the
 * target's layout of that identifier, else as a new one (the target's default stays its own).
 */
async function syncLayouts(source: workflowsV1.Workflow, clients: Clients, sourceCall: RouteCall, targetCall: RouteCall): Promise<void> {
  const named = new Set(source.steps.flatMap((step) => stepLayoutId(step, source.templateEngine, {}) ?? []));
  for (const layoutId of named) await copyLayout(await clients.layouts.getLayout({ layoutId }, sourceCall), clients, targetCall);
}

/** Copies a layout into the target over its layout of that identifier, else as a new one. */
async function copyLayout(layout: layoutsV1.Layout, clients: Clients, targetCall: RouteCall): Promise<void> {
  try {
    await clients.layouts.createLayout({ identifier: layout.identifier, name: layout.name, isTranslationEnabled: layout.isTranslationEnabled }, targetCall);
  } catch (error) {
    if (!isCode(error, Code.AlreadyExists)) throw error;
  }
  await clients.layouts.updateLayout(
    {
      layoutId: layout.identifier,
      name: layout.name,
      isTranslationEnabled: layout.isTranslationEnabled,
      content: layout.email ? { case: "email", value: layout.email } : { case: "clearContent", value: true },
    },
    targetCall,
  );
}

const PUBLISH_PAGE = 100;

/** An environment's layouts, oldest first, page by page (the service bounds how many it holds). */
async function layoutsOf(clients: Clients, call: RouteCall): Promise<layoutsV1.Layout[]> {
  const layouts: layoutsV1.Layout[] = [];
  for (;;) {
    const reply = await clients.layouts.listLayouts({ limit: PUBLISH_PAGE, offset: layouts.length, ascending: true }, call);
    layouts.push(...reply.layouts);
    if (reply.layouts.length < PUBLISH_PAGE || layouts.length >= reply.totalCount) return layouts;
  }
}

/**
 * The first half of Novu's publish of layouts: every layout of the source copied into the target
 * by identifier (over the target's, or created). Answers the layouts only the target has, its
 * default aside: the second half deletes them once the workflows are copied (a step that named
 * one sends without a layout from then on).
 */
async function copyLayouts(clients: Clients, sourceCall: RouteCall, targetCall: RouteCall): Promise<layoutsV1.Layout[]> {
  const [sources, targets] = await Promise.all([layoutsOf(clients, sourceCall), layoutsOf(clients, targetCall)]);
  for (const layout of sources) {
    // The list leaves each layout's content out.
    await copyLayout(await clients.layouts.getLayout({ layoutId: layout.id }, sourceCall), clients, targetCall);
  }
  const kept = new Set(sources.map((layout) => layout.identifier));
  return targets.filter((one) => !kept.has(one.identifier) && !one.isDefault);
}

/**
 * Copies `source` over `target`, its counterpart in the target environment, or creates it there
 * when it has none. `layoutsFrom`, the source's call, copies the layouts it names along (unset:
 * they were all copied already).
 */
async function syncInto(
  source: workflowsV1.Workflow,
  target: workflowsV1.Workflow | undefined,
  clients: Clients,
  targetCall: RouteCall,
  layoutsFrom: RouteCall | undefined,
): Promise<workflowsV1.Workflow> {
  if (layoutsFrom) await syncLayouts(source, clients, layoutsFrom, targetCall);
  const synced = syncedWorkflowOf(source, target);
  return target ? clients.workflows.updateWorkflow(synced.update, targetCall) : clients.workflows.createWorkflow(synced.create, targetCall);
}

/** The live workflows of an environment, oldest first; 400 beyond MAX_PUBLISHED of them. */
async function workflowsOf(clients: Clients, call: RouteCall): Promise<workflowsV1.Workflow[]> {
  const workflows: workflowsV1.Workflow[] = [];
  for (let page = 0; page * PUBLISH_PAGE < MAX_PUBLISHED; page++) {
    const reply = await clients.workflows.listWorkflows({ page, limit: PUBLISH_PAGE, oldestFirst: true }, call);
    workflows.push(...reply.workflows);
    if (!reply.hasMore) return workflows;
  }
  throw new HttpError(400, `An environment of more than ${MAX_PUBLISHED} workflows cannot be published or compared at once`);
}

/** The source and target of a publish or diff: Development unless the source is named; never one environment. */
async function publishingCalls(input: RouteInput<unknown, unknown, unknown>, sourceEnvironmentId: string | undefined, targetEnvironmentId: string) {
  const { scope, accounts } = input;
  const sourceId = sourceEnvironmentId ?? parentIdOf(await accounts.environments.listOfOrganization(scope.organizationId)) ?? scope.environmentId;
  if (sourceId === targetEnvironmentId) throw new HttpError(400, "Cannot publish to the same environment");
  const [source, target] = await Promise.all([callInEnvironment(input, sourceId), callInEnvironment(input, targetEnvironmentId)]);
  return { sourceId, source, target };
}

export interface WorkflowDiff {
  sourceEnvironmentId: string;
  /** Per trigger identifier: the source's and the target's workflow, either absent. */
  pairs: { source: workflowsV1.Workflow | undefined; target: workflowsV1.Workflow | undefined }[];
}

/** Novu's diff: which workflows a publish from the source would add to the target or change there, and which only the target has. */
export async function diffWorkflows(
  input: RouteInput<unknown, unknown, unknown>,
  request: { targetEnvironmentId: string; sourceEnvironmentId: string | undefined },
): Promise<WorkflowDiff> {
  const calls = await publishingCalls(input, request.sourceEnvironmentId, request.targetEnvironmentId);
  const [sources, targets] = await Promise.all([workflowsOf(input.clients, calls.source), workflowsOf(input.clients, calls.target)]);
  const targetOf = new Map(targets.map((workflow) => [workflow.identifier, workflow]));
  const sourceIdentifiers = new Set(sources.map((workflow) => workflow.identifier));
  return {
    sourceEnvironmentId: calls.sourceId,
    pairs: [
      ...sources.map((source) => ({ source, target: targetOf.get(source.identifier) })),
      ...targets.filter((target) => !sourceIdentifiers.has(target.identifier)).map((target) => ({ source: undefined, target })),
    ],
  };
}

export interface PublishOutcome {
  successful: { workflow: workflowsV1.Workflow; action: "created" | "updated" | "deleted" }[];
  failed: { workflow: workflowsV1.Workflow; error: string }[];
  skipped: { workflow: workflowsV1.Workflow; reason: string }[];
}

/** Why Novu's publish left a workflow as it was. */
const DRY_RUN = "Dry run mode";
const NO_CHANGES = "No changes detected";

/**
 * Novu's publish: every workflow of the source environment (Development unless named), or those
 * `resourceIds` names (ids or trigger identifiers), synced into the target environment as
 * PUT /v2/workflows/{id}/sync does, and the target's workflows the source does not have (of
 * those named) deleted. A workflow the target has already as it is, and every one of a dry run,
 * is skipped with Novu's reason. A workflow that cannot be copied is reported and the others go on.
 */
export async function publishWorkflows(
  input: RouteInput<unknown, unknown, unknown>,
  request: { targetEnvironmentId: string; sourceEnvironmentId: string | undefined; dryRun: boolean; resourceIds: readonly string[] | undefined },
): Promise<PublishOutcome> {
  const calls = await publishingCalls(input, request.sourceEnvironmentId, request.targetEnvironmentId);
  const wanted = request.resourceIds === undefined ? undefined : new Set(request.resourceIds);
  const named = (workflow: workflowsV1.Workflow) => !wanted || wanted.has(workflow.id) || wanted.has(workflow.identifier);
  const sources = await workflowsOf(input.clients, calls.source);
  const published = sources.filter(named);
  if (request.dryRun) return { successful: [], failed: [], skipped: published.map((workflow) => ({ workflow, reason: DRY_RUN })) };
  const outcome: PublishOutcome = { successful: [], failed: [], skipped: [] };
  // A publish of everything also makes the target's layouts the source's, as Novu's does: all are
  // copied first, so no workflow copies its own again.
  const everything = wanted === undefined;
  const targetOnlyLayouts = everything ? await copyLayouts(input.clients, calls.source, calls.target) : [];
  const targets = new Map((await workflowsOf(input.clients, calls.target)).map((workflow) => [workflow.identifier, workflow]));
  for (const workflow of published) {
    const target = targets.get(workflow.identifier);
    if (target && sameContent(workflow, target)) {
      outcome.skipped.push({ workflow, reason: NO_CHANGES });
      continue;
    }
    try {
      await syncInto(workflow, target, input.clients, calls.target, everything ? undefined : calls.source);
      outcome.successful.push({ workflow, action: target ? "updated" : "created" });
    } catch (error) {
      // A refused copy (a 4xx) is the workflow's; anything else stops the publish.
      if (!(error instanceof ConnectError) || httpErrorFromRpc(error).status >= 500) throw error;
      outcome.failed.push({ workflow, error: error.rawMessage });
    }
  }
  const sourceIdentifiers = new Set(sources.map((workflow) => workflow.identifier));
  for (const target of targets.values()) {
    if (sourceIdentifiers.has(target.identifier) || !named(target)) continue;
    await input.clients.workflows.deleteWorkflow({ workflowId: target.id }, calls.target);
    outcome.successful.push({ workflow: target, action: "deleted" });
  }
  for (const layout of targetOnlyLayouts) await input.clients.layouts.deleteLayout({ layoutId: layout.id }, calls.target);
  return outcome;
}
