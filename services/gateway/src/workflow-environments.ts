import { Code } from "@connectrpc/connect";
import type { workflowsV1 } from "@notify/proto";
import { scopeHeaders } from "@notify/runtime";
import { HttpError, isCode } from "./errors.js";
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

/**
 * Novu's sync: the workflow copied into another environment of the organization, over the
 * workflow with the same trigger identifier there if it has one. Answers the target's workflow.
 */
export async function syncWorkflow(input: RouteInput<{ workflowId: string }, unknown, { targetEnvironmentId: string }>): Promise<workflowsV1.Workflow> {
  const { params, body, scope, clients, call } = input;
  if (body.targetEnvironmentId === scope.environmentId) throw new HttpError(400, "Cannot sync workflow to the same environment");
  const source = await clients.workflows.getWorkflow({ key: { case: "any", value: params.workflowId } }, call);
  const targetCall = await callInEnvironment(input, body.targetEnvironmentId);
  let target: workflowsV1.Workflow | undefined;
  try {
    target = await clients.workflows.getWorkflow({ key: { case: "identifier", value: source.identifier } }, targetCall);
  } catch (error) {
    if (!isCode(error, Code.NotFound)) throw error;
  }
  const synced = syncedWorkflowOf(source, target);
  return target ? clients.workflows.updateWorkflow(synced.update, targetCall) : clients.workflows.createWorkflow(synced.create, targetCall);
}
