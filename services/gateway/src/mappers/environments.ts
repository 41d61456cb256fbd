import { z } from "zod";
import { ENVIRONMENT_IDENTIFIER, type CreatedEnvironment, type EnvironmentSummary } from "../environments.js";
import type { workflowsV1 } from "@notify/proto";
import { keyString, objectIdString } from "../validation.js";
import { isoDateResponse } from "./common.js";
import type { PublishOutcome, WorkflowDiff } from "../workflow-environments.js";
import { workflowV2ToJson } from "./workflows-v2.js";

const DEVELOPMENT = "Development";

/** What Novu names as the parent of every environment but Development: Development. */
export const parentIdOf = (environments: readonly EnvironmentSummary[]) => environments.find((candidate) => candidate.name === DEVELOPMENT)?.id;

/**
 * The public Environment (@novu/api's EnvironmentResponseDto) without `apiKeys`: keys are shown
 * once, when created, and never answered again.
 */
export function environmentToJson(environment: EnvironmentSummary, parentId: string | undefined) {
  return {
    _id: environment.id,
    name: environment.name,
    _organizationId: environment.organizationId,
    identifier: environment.identifier,
    type: environment.name === "Production" ? "prod" : "dev",
    ...(parentId !== undefined && parentId !== environment.id ? { _parentId: parentId } : {}),
  };
}

export const environmentIdParam = z.object({ environmentId: keyString("environmentId") });

const environmentName = keyString("name").trim().min(1, "name should not be empty");
const parentId = objectIdString("parentId");
const color = z.string({ error: "color must be a string" }).max(64, "color must be shorter than or equal to 64 characters");

/**
 * POST /v1/environments. `parentId` and `color` are accepted as Novu accepts them and not kept:
 * Novu's create ignores `parentId` too, every environment's parent is Development, and no answer
 * shows a color.
 */
export const createEnvironmentBody = z.object({ name: environmentName, parentId: parentId.optional(), color });

const unsupported = (field: string) =>
  z.undefined({ error: `${field} is not supported: notify serves no inbound parse domains nor bridge workflows` }).optional();

/** PUT /v1/environments/{environmentId}: `parentId` and `color` as on create. */
export const updateEnvironmentBody = z.object({
  name: environmentName.optional(),
  identifier: z
    .string({ error: "identifier must be a string" })
    .regex(ENVIRONMENT_IDENTIFIER, "identifier must be 1 to 64 letters, digits, underscores or hyphens")
    .optional(),
  parentId: parentId.optional(),
  color: color.optional(),
  dns: unsupported("dns"),
  bridge: unsupported("bridge"),
});

/**
 * The environment just created, with its first API key: shown this once, as Novu shows it. Notify's
 * keys belong to no user, so `_userId` names the key itself (its id in `notify keys list`).
 */
export function createdEnvironmentToJson(environment: CreatedEnvironment, parentId: string | undefined) {
  return { ...environmentToJson(environment, parentId), apiKeys: apiKeysToJson([environment.apiKey]) };
}

/** API keys as Novu answers them; notify has no users, so each key's own id stands for its `_userId`. */
export const apiKeysToJson = (keys: readonly { id: string; key: string }[]) => keys.map(({ id, key }) => ({ key, _userId: id }));

/** GET /v2/environments/{environmentId}/tags: `[{name}]`. */
export const tagsToJson = (tags: readonly string[]) => tags.map((name) => ({ name }));

/** Workflows one publish copies at most (each costs a few RPCs). */
export const MAX_PUBLISHED = 1000;

/** POST /v2/environments/{targetEnvironmentId}/publish */
export const publishParams = z.object({ targetEnvironmentId: keyString("targetEnvironmentId") });

const RESOURCE_TYPES = ["REGULAR", "ECHO", "BRIDGE"] as const;

export const publishBody = z
  .object({
    sourceEnvironmentId: keyString("sourceEnvironmentId").optional(),
    dryRun: z.boolean({ error: "dryRun must be a boolean" }).default(false),
    resources: z
      .array(
        z.object({
          resourceType: z.enum(RESOURCE_TYPES, { error: `resourceType must be one of ${RESOURCE_TYPES.join(", ")}` }),
          resourceId: keyString("resourceId"),
        }),
        {
          error: "resources must be an array",
        },
      )
      .max(MAX_PUBLISHED, `resources must contain no more than ${MAX_PUBLISHED} elements`)
      .optional(),
  })
  .optional()
  .transform((body) => ({
    sourceEnvironmentId: body?.sourceEnvironmentId,
    dryRun: body?.dryRun ?? false,
    resourceIds: body?.resources?.map((resource) => resource.resourceId),
  }));

/** Novu's kind of every notify workflow (neither a framework nor a bridge one). */
const REGULAR = "REGULAR";
const described = (workflow: workflowsV1.Workflow) => ({ resourceType: REGULAR, resourceId: workflow.id, resourceName: workflow.name });

/** PublishEnvironmentResponseDto */
export function publishOutcomeToJson(outcome: PublishOutcome) {
  const total = outcome.successful.length + outcome.failed.length + outcome.skipped.length;
  return {
    results: [
      {
        resourceType: REGULAR,
        successful: outcome.successful.map(({ workflow, action }) => ({ ...described(workflow), action })),
        failed: outcome.failed.map(({ workflow, error }) => ({ ...described(workflow), error })),
        skipped: outcome.skipped.map(({ workflow, reason }) => ({ ...described(workflow), reason })),
        totalProcessed: total,
      },
    ],
    summary: { resources: total, successful: outcome.successful.length, failed: outcome.failed.length, skipped: outcome.skipped.length },
  };
}

/** POST /v2/environments/{targetEnvironmentId}/diff */
export const diffBody = z
  .object({ sourceEnvironmentId: keyString("sourceEnvironmentId").optional() })
  .optional()
  .transform((body) => ({ sourceEnvironmentId: body?.sourceEnvironmentId }));

/** What a publish would carry over of a workflow: everything but its ids and times. */
function contentOf(workflow: workflowsV1.Workflow): string {
  const { _id, slug, createdAt, updatedAt, lastTriggeredAt, steps, ...fields } = workflowV2ToJson(workflow);
  return JSON.stringify({ ...fields, steps: steps.map(({ _id: _stepId, slug: _stepSlug, workflowDatabaseId, ...step }) => step) });
}

/** Whether a publish would change nothing of the target's workflow: the diff's "unchanged". */
export const sameContent = (source: workflowsV1.Workflow, target: workflowsV1.Workflow) => contentOf(source) === contentOf(target);

const resourceOf = (workflow: workflowsV1.Workflow | undefined) =>
  workflow ? { id: workflow.id, name: workflow.name, updatedAt: workflowV2ToJson(workflow).updatedAt } : null;

/** DiffEnvironmentResponseDto: one resource per workflow, added, modified, deleted (only in the target) or unchanged. */
export function workflowDiffToJson(targetEnvironmentId: string, diff: WorkflowDiff) {
  const resources = diff.pairs.map(({ source, target }) => {
    const action = !target ? "added" : !source ? "deleted" : sameContent(source, target) ? "unchanged" : "modified";
    const ends = { sourceResource: resourceOf(source), targetResource: resourceOf(target) };
    return {
      resourceType: REGULAR,
      ...ends,
      changes: action === "unchanged" ? [] : [{ resourceType: REGULAR, action, ...ends }],
      summary: {
        added: Number(action === "added"),
        modified: Number(action === "modified"),
        deleted: Number(action === "deleted"),
        unchanged: Number(action === "unchanged"),
      },
    };
  });
  const totalChanges = resources.filter((resource) => resource.changes.length > 0).length;
  return {
    sourceEnvironmentId: diff.sourceEnvironmentId,
    targetEnvironmentId,
    resources,
    summary: { totalEntities: resources.length, totalChanges, hasChanges: totalChanges > 0 },
  };
}

/** What environmentToJson answers. */
export const environmentResponse = z
  .object({
    _id: z.string(),
    name: z.string(),
    _organizationId: z.string(),
    identifier: z.string(),
    type: z.enum(["prod", "dev"]),
    _parentId: z.string().optional(),
  })
  .meta({ id: "Environment" });

/** What apiKeysToJson answers. */
export const apiKeysResponse = z.array(z.object({ key: z.string(), _userId: z.string() })).meta({ id: "ApiKeys" });

/** What createdEnvironmentToJson answers: the environment with its first key. */
export const createdEnvironmentResponse = environmentResponse.extend({ apiKeys: apiKeysResponse }).meta({ id: "CreatedEnvironment" });

export const tagsResponse = z.array(z.object({ name: z.string() }));

const resourceDescription = { resourceType: z.literal("REGULAR"), resourceId: z.string(), resourceName: z.string() };

/** What publishOutcomeToJson answers. */
export const publishResponse = z.object({
  results: z.array(
    z.object({
      resourceType: z.literal("REGULAR"),
      successful: z.array(z.object({ ...resourceDescription, action: z.enum(["created", "updated", "deleted"]) })),
      failed: z.array(z.object({ ...resourceDescription, error: z.string() })),
      skipped: z.array(z.object({ ...resourceDescription, reason: z.string() })),
      totalProcessed: z.int(),
    }),
  ),
  summary: z.object({ resources: z.int(), successful: z.int(), failed: z.int(), skipped: z.int() }),
});

const diffEnd = z.object({ id: z.string(), name: z.string(), updatedAt: isoDateResponse }).nullable();
const diffEnds = { sourceResource: diffEnd, targetResource: diffEnd };

/** What workflowDiffToJson answers. */
export const diffResponse = z.object({
  sourceEnvironmentId: z.string(),
  targetEnvironmentId: z.string(),
  resources: z.array(
    z.object({
      resourceType: z.literal("REGULAR"),
      ...diffEnds,
      changes: z.array(z.object({ resourceType: z.literal("REGULAR"), action: z.enum(["added", "modified", "deleted"]), ...diffEnds })),
      summary: z.object({ added: z.int(), modified: z.int(), deleted: z.int(), unchanged: z.int() }),
    }),
  ),
  summary: z.object({ totalEntities: z.int(), totalChanges: z.int(), hasChanges: z.boolean() }),
});
