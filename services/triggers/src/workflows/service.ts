import { randomBytes } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { workflowsV1 } from "@notify/proto";
import {
  alreadyExists,
  announceKeys,
  ChangeKind,
  failedPrecondition,
  invalidArgument,
  invalidField,
  isForeignKeyViolation,
  isObjectId,
  isUniqueViolation,
  notFound,
  objectId,
  readOffsetPage,
  scopeOf,
  severityName,
  withTransaction,
  type FieldErrors,
  type Queryable,
  type Scope,
  pageLimit,
} from "@notify/runtime";
import { nameStepLayouts } from "../layouts/service.js";
import { bindLegacyLayouts } from "../legacy-layouts/service.js";
import type { RouteDeps } from "../routes.js";
import {
  activeWorkflowFromRow,
  channelSettings,
  feedFromRow,
  groupFromRow,
  mergedPreferences,
  preferenceLevelsToJson,
  stepsFromJson,
  stepsToJson,
  templateEngineName,
  templateEngineOf,
  workflowFromRow,
} from "./mapping.js";
import { ANY_PAYLOAD_SCHEMA, payloadSchemaProblem } from "./payload-schema.js";
import { slugify, workflowKeyOf } from "./slug.js";
import { activeChannels, assignStepIds, feedReferences, identifySteps } from "./steps.js";
import * as store from "./store.js";
import { extractVariables } from "./variables.js";

/** Counts stop here: an exact count over millions of rows would cost more than the page itself. */
export const COUNT_CAP = 10_000;
export const MAX_PAGE_SIZE = 100;
export const MAX_ACTIVE_PAGE = 1000;
export const MAX_BATCH_GET = 1000;
/** Distinct tags listed per environment (Novu's list is not paginated). */
export const MAX_TAGS = 1000;
/** Live feeds per environment; GET /v1/feeds lists them all, so their number is bounded. */
export const MAX_FEEDS = 1000;
/** Groups listed per environment (Novu's list is not paginated either). */
export const MAX_GROUPS = 1000;
/** Workflows listed as reading one environment variable (Novu lists them all). */
const MAX_READERS = 1000;
export const MAX_STEPS = 50;
const MAX_FILTER_TAGS = 50;
const MAX_NAME = 255;
const MAX_DESCRIPTION = 1000;
/** Room left in a 255-character identifier for the "-xxxxxx" that makes a taken one unique. */
const IDENTIFIER_BASE = 240;
const IDENTIFIER_ATTEMPTS = 5;

const workflowNotFound = (key: string) => notFound(`Workflow with id: ${key} cannot be found`);

/** `-` and six random base-36 characters, Novu's way of making a taken identifier unique. */
const identifierSuffix = () =>
  `-${BigInt(`0x${randomBytes(5).toString("hex")}`)
    .toString(36)
    .slice(-6)}`;

function lookupOf(request: workflowsV1.GetWorkflowRequest) {
  switch (request.key.case) {
    case "any":
      return { text: request.key.value, key: workflowKeyOf(request.key.value) };
    case "identifier":
      return { text: request.key.value, key: { identifier: request.key.value } };
    default:
      throw invalidField("workflowId", "a workflow id, identifier or slug is required");
  }
}

/** Length rules the table enforces too; checked here so a bad value is a 422, never a 500. */
function checkWorkflowWrite(fields: {
  name?: string | undefined;
  description?: string | undefined;
  steps?: readonly unknown[] | undefined;
  identifier?: string | undefined;
  payloadSchema?: JsonObject | undefined;
}) {
  const errors: FieldErrors = {};
  if (fields.identifier !== undefined && (fields.identifier.length === 0 || fields.identifier.length > MAX_NAME)) {
    errors.identifier = { messages: [`identifier must be between 1 and ${MAX_NAME} characters`], value: fields.identifier };
  }
  const schemaProblem = fields.payloadSchema && Object.keys(fields.payloadSchema).length > 0 ? payloadSchemaProblem(fields.payloadSchema) : undefined;
  if (schemaProblem !== undefined) errors.payloadSchema = { messages: [`payloadSchema is not a valid JSON schema: ${schemaProblem}`] };
  if (fields.name !== undefined && (fields.name.trim().length === 0 || fields.name.length > MAX_NAME)) {
    errors.name = { messages: [`name must be between 1 and ${MAX_NAME} characters`], value: fields.name };
  }
  if (fields.description !== undefined && fields.description.length > MAX_DESCRIPTION) {
    errors.description = { messages: [`description must be at most ${MAX_DESCRIPTION} characters`], value: fields.description };
  }
  if (fields.steps !== undefined && fields.steps.length > MAX_STEPS) {
    errors.steps = { messages: [`a workflow has at most ${MAX_STEPS} steps`] };
  }
  if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
}

/** A payload schema as stored: an empty one is none. */
const nonEmpty = (schema: JsonObject | undefined) => (schema && Object.keys(schema).length > 0 ? schema : null);

/** The steps as stored, with what is derived from them. */
function prepareSteps(steps: readonly workflowsV1.Step[], engine: workflowsV1.TemplateEngine, previous: readonly workflowsV1.Step[] = []) {
  const stored = identifySteps(steps, previous);
  const stepIdErrors = assignStepIds(stored);
  const { errors, ...derived } = extractVariables(stored, engine);
  return { stored, ...derived, errors: { ...stepIdErrors, ...errors } };
}

/** Field errors for a notification group or feeds the environment does not have. */
async function referenceErrors(
  db: Queryable,
  environmentId: string,
  notificationGroupId: string | undefined,
  steps: readonly workflowsV1.Step[],
): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  if (notificationGroupId !== undefined && !(isObjectId(notificationGroupId) && (await store.selectGroup(db, environmentId, notificationGroupId)))) {
    errors.notificationGroupId = { messages: [`notification group ${notificationGroupId} does not exist`], value: notificationGroupId };
  }
  const references = feedReferences(steps);
  if (references.length > 0) {
    const ids = [...new Set(references.map((reference) => reference.feedId))];
    const live = await store.selectLiveFeedIds(db, environmentId, ids.filter(isObjectId));
    for (const { path, feedId } of references) {
      if (!live.has(feedId)) errors[path] = { messages: [`feed ${feedId} does not exist`], value: feedId };
    }
  }
  return errors;
}

const groupNotFound = (id: string) => notFound(`Notification group with id ${id} not found`);

function checkGroupName(name: string): void {
  if (name.trim().length === 0 || name.length > MAX_NAME) throw invalidField("name", `name must be between 1 and ${MAX_NAME} characters`, name);
}

function throwIfAny(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
}

/**
 * Names a workflow's id and identifiers as changed by the running write (announced when it
 * ends, as workflows.proto declares): copies elsewhere must not outlive it.
 */
const changing = (context: HandlerContext, ...keys: string[]) => announceKeys(context, ChangeKind.WORKFLOWS, keys);

/** The list order a request names (an unknown one: creation order). */
function orderOf(order: workflowsV1.WorkflowOrder): store.WorkflowOrder {
  switch (order) {
    case workflowsV1.WorkflowOrder.UPDATED_AT:
      return "updated";
    case workflowsV1.WorkflowOrder.NAME:
      return "name";
    case workflowsV1.WorkflowOrder.LAST_TRIGGERED_AT:
      return "lastTriggered";
    default:
      return "created";
  }
}

export function createWorkflowService({ pool }: Pick<RouteDeps, "pool">): ServiceImpl<typeof workflowsV1.WorkflowService> {
  /** environment id → its "General" group id; that group is never deleted or renamed, so this stays true. */
  const generalGroups = new Map<string, string>();

  async function existingGroup(scope: Scope, id: string): Promise<store.GroupRow> {
    const row = isObjectId(id) ? await store.selectGroup(pool, scope.environmentId, id) : undefined;
    if (!row) throw groupNotFound(id);
    return row;
  }

  async function generalGroupId(scope: Scope): Promise<string> {
    const known = generalGroups.get(scope.environmentId);
    if (known) return known;
    await store.insertGeneralGroup(pool, scope.environmentId, { id: objectId(), organizationId: scope.organizationId });
    const group = await store.selectGroupByName(pool, scope.environmentId, store.GENERAL_GROUP);
    generalGroups.set(scope.environmentId, group!.id);
    return group!.id;
  }

  async function resolve(db: Queryable, environmentId: string, workflowId: string, lock = false): Promise<store.WorkflowRow> {
    const row = await store.selectWorkflowByKey(db, environmentId, workflowKeyOf(workflowId), lock);
    if (!row) throw workflowNotFound(workflowId);
    return row;
  }

  async function liveFeeds(environmentId: string) {
    return { feeds: (await store.selectFeeds(pool, environmentId, undefined, MAX_FEEDS)).map(feedFromRow) };
  }

  return {
    async createWorkflow(request, context) {
      const scope = scopeOf(context);
      checkWorkflowWrite(request);
      const steps = prepareSteps(request.steps, request.templateEngine);
      throwIfAny({ ...steps.errors, ...(await referenceErrors(pool, scope.environmentId, request.notificationGroupId, steps.stored)) });
      await nameStepLayouts(pool, scope.environmentId, steps.stored, request.templateEngine);
      await bindLegacyLayouts(pool, scope.environmentId, steps.stored, request.templateEngine);
      const active = request.active ?? false;
      const preferences = request.preferences ? mergedPreferences(request.preferences) : undefined;
      const payloadSchema = nonEmpty(request.payloadSchema);
      const columns: store.WorkflowColumns = {
        name: request.name,
        description: request.description ?? "",
        trigger_identifier: "",
        active,
        draft: request.draft ?? !active,
        critical: preferences?.critical ?? request.critical ?? false,
        tags: request.tags,
        preference_settings: preferences?.settings ?? channelSettings(request.preferenceSettings),
        steps: stepsToJson(steps.stored),
        active_channels: activeChannels(steps.stored),
        variables: steps.variables,
        subscriber_variables: steps.subscriberVariables,
        environment_variables: steps.environmentVariables,
        notification_group_id: request.notificationGroupId ?? (await generalGroupId(scope)),
        data: request.data ?? null,
        severity: severityName(request.severity) ?? "none",
        // As Novu's create does: without a payload schema, one that takes any object, checked
        // unless told otherwise, so that a schema set later applies at once.
        validate_payload: request.validatePayload ?? payloadSchema === null,
        payload_schema: payloadSchema ?? structuredClone(ANY_PAYLOAD_SCHEMA),
        preference_levels: request.preferences ? preferenceLevelsToJson(request.preferences) : null,
        template_engine: templateEngineName(request.templateEngine),
      };
      const insert = (identifier: string) =>
        store.insertWorkflow(pool, scope.environmentId, {
          id: objectId(),
          organizationId: scope.organizationId,
          creatorId: scope.organizationId,
          columns: { ...columns, trigger_identifier: identifier },
        });
      // As Novu's create does, a taken identifier, given or derived from the name, is suffixed
      // rather than refused (a 409 would have Novu's SDKs retry the create for an hour). The
      // unique index decides: a taken identifier inserts nothing and we try a suffixed one.
      const wanted = request.identifier ?? slugify(request.name).slice(0, IDENTIFIER_BASE);
      if (request.exactIdentifier) {
        const row = await insert(wanted);
        if (!row) throw alreadyExists(`Workflow with id ${wanted} already exists`);
        return workflowFromRow(row);
      }
      for (let attempt = 0; attempt < IDENTIFIER_ATTEMPTS; attempt++) {
        const row = await insert(attempt === 0 ? wanted : `${wanted.slice(0, IDENTIFIER_BASE)}${identifierSuffix()}`);
        if (row) return workflowFromRow(row);
      }
      throw new ConnectError("no free trigger identifier was found, retry", Code.Aborted);
    },

    async getWorkflow(request, context) {
      const scope = scopeOf(context);
      const lookup = lookupOf(request);
      const row = await store.selectWorkflowByKey(pool, scope.environmentId, lookup.key);
      if (!row) throw workflowNotFound(lookup.text);
      return workflowFromRow(row);
    },

    async listWorkflows(request, context) {
      const scope = scopeOf(context);
      const limit = pageLimit(request.limit, { fallback: 10, max: MAX_PAGE_SIZE });
      if (request.tags.length > MAX_FILTER_TAGS) throw invalidField("tags", `at most ${MAX_FILTER_TAGS} tags per list`, request.tags.length);
      const filter: store.WorkflowFilter = { query: request.query || undefined, tags: request.tags, active: request.active };
      const { rows, ...page } = await readOffsetPage(
        { page: request.page, limit, countCap: COUNT_CAP, offset: request.offset },
        (offset) =>
          store.selectWorkflowPage(pool, scope.environmentId, { offset, limit, filter, oldestFirst: request.oldestFirst, orderBy: orderOf(request.orderBy) }),
        (cap) => store.countWorkflows(pool, scope.environmentId, cap, filter),
      );
      return { workflows: rows.map(workflowFromRow), ...page };
    },

    async updateWorkflow(request, context) {
      const scope = scopeOf(context);
      checkWorkflowWrite({
        name: request.name,
        description: request.description,
        steps: request.steps?.steps,
        identifier: request.identifier,
        payloadSchema: request.payloadSchema,
      });
      return withTransaction(pool, async (tx) => {
        const existing = await resolve(tx, scope.environmentId, request.workflowId, true);
        changing(context, existing.id, existing.trigger_identifier);
        const engine = request.templateEngine ?? templateEngineOf(existing.template_engine);
        const previous = request.steps ? stepsFromJson(existing.steps) : [];
        const steps = request.steps ? prepareSteps(request.steps.steps, engine, previous) : undefined;
        throwIfAny({
          ...steps?.errors,
          ...(await referenceErrors(tx, scope.environmentId, request.notificationGroupId, steps?.stored ?? [])),
        });
        await nameStepLayouts(tx, scope.environmentId, steps?.stored ?? [], engine);
        await bindLegacyLayouts(tx, scope.environmentId, steps?.stored ?? [], engine, previous);
        const identifier = request.identifier ?? existing.trigger_identifier;
        changing(context, identifier);
        const preferences = request.preferences ? mergedPreferences(request.preferences) : undefined;
        // v1's single level replaces v2's two: what they merged to is no longer what is stored.
        const v1Preferences = request.critical !== undefined || request.preferenceSettings !== undefined;
        const columns: store.WorkflowColumns = {
          name: request.name ?? existing.name,
          description: request.description ?? existing.description,
          trigger_identifier: identifier,
          active: request.active ?? existing.active,
          draft: request.active === undefined ? existing.draft : !request.active,
          critical: preferences?.critical ?? request.critical ?? existing.critical,
          tags: request.tags?.tags ?? existing.tags,
          preference_settings:
            preferences?.settings ?? (request.preferenceSettings ? channelSettings(request.preferenceSettings) : existing.preference_settings),
          steps: steps ? stepsToJson(steps.stored) : existing.steps,
          active_channels: steps ? activeChannels(steps.stored) : existing.active_channels,
          variables: steps?.variables ?? existing.variables,
          subscriber_variables: steps?.subscriberVariables ?? existing.subscriber_variables,
          environment_variables: steps?.environmentVariables ?? existing.environment_variables,
          notification_group_id: request.notificationGroupId ?? existing.notification_group_id,
          data: request.data ?? existing.data,
          severity: request.severity === undefined ? existing.severity : (severityName(request.severity) ?? "none"),
          validate_payload: request.validatePayload ?? existing.validate_payload,
          payload_schema: request.payloadSchema ? nonEmpty(request.payloadSchema) : existing.payload_schema,
          preference_levels: request.preferences ? preferenceLevelsToJson(request.preferences) : v1Preferences ? null : existing.preference_levels,
          // An update in the other API's shape keeps the language the templates are in.
          template_engine: templateEngineName(engine),
        };
        try {
          return workflowFromRow(await store.updateWorkflow(tx, scope.environmentId, existing.id, columns));
        } catch (error) {
          if (isUniqueViolation(error)) throw alreadyExists(`Workflow with identifier ${identifier} already exists`);
          throw error;
        }
      });
    },

    async setWorkflowStatus(request, context) {
      const scope = scopeOf(context);
      const existing = await resolve(pool, scope.environmentId, request.workflowId);
      changing(context, existing.id, existing.trigger_identifier);
      // Setting the status a workflow already has is not an error: retries must be harmless.
      const row = await store.updateWorkflowStatus(pool, scope.environmentId, existing.id, request.active);
      if (!row) throw workflowNotFound(request.workflowId);
      return workflowFromRow(row);
    },

    async deleteWorkflow(request, context) {
      const scope = scopeOf(context);
      const existing = await resolve(pool, scope.environmentId, request.workflowId);
      changing(context, existing.id, existing.trigger_identifier);
      const id = await store.softDeleteWorkflow(pool, scope.environmentId, existing.id);
      if (!id) throw workflowNotFound(request.workflowId);
      return { id };
    },

    async listActiveWorkflows(request, context) {
      const scope = scopeOf(context);
      const limit = pageLimit(request.limit, { fallback: 100, max: MAX_ACTIVE_PAGE });
      const rows = await store.selectActiveWorkflowPage(pool, scope.environmentId, request.after, limit);
      const page = rows.slice(0, limit);
      return {
        workflows: page.map(activeWorkflowFromRow),
        ...(rows.length > limit ? { next: page.at(-1)!.id } : {}),
      };
    },

    async batchGetWorkflows(request, context) {
      const scope = scopeOf(context);
      if (request.ids.length > MAX_BATCH_GET) throw invalidField("ids", `at most ${MAX_BATCH_GET} ids per call`, request.ids.length);
      // Only ids can match: anything else names no workflow, so it is simply absent.
      const ids = [...new Set(request.ids.filter(isObjectId))];
      if (ids.length === 0) return { workflows: [] };
      return { workflows: (await store.selectWorkflowsByIds(pool, scope.environmentId, ids)).map(workflowFromRow) };
    },

    async listWorkflowTags(_request, context) {
      const scope = scopeOf(context);
      return { tags: await store.selectWorkflowTags(pool, scope.environmentId, MAX_TAGS) };
    },

    async listEnvironmentVariableReaders(request, context) {
      const scope = scopeOf(context);
      const rows = await store.selectEnvironmentVariableReaders(pool, scope.environmentId, request.key, MAX_READERS);
      return { workflows: rows.map((row) => ({ name: row.name, identifier: row.trigger_identifier })) };
    },

    async listNotificationGroups(_request, context) {
      const scope = scopeOf(context);
      await generalGroupId(scope);
      return { groups: (await store.selectGroups(pool, scope.environmentId, MAX_GROUPS)).map(groupFromRow) };
    },

    async createNotificationGroup(request, context) {
      const scope = scopeOf(context);
      checkGroupName(request.name);
      // As in Novu, a new group's parent is the environment's first group.
      const parentId = await generalGroupId(scope);
      const row = await store.insertGroup(pool, scope.environmentId, {
        id: objectId(),
        organizationId: scope.organizationId,
        name: request.name,
        parentId,
      });
      if (!row) throw alreadyExists(`Notification group with name: ${request.name} already exists`);
      return groupFromRow(row);
    },

    async getNotificationGroup(request, context) {
      const scope = scopeOf(context);
      return groupFromRow(await existingGroup(scope, request.id));
    },

    async updateNotificationGroup(request, context) {
      const scope = scopeOf(context);
      checkGroupName(request.name);
      if ((await existingGroup(scope, request.id)).name === store.GENERAL_GROUP) throw failedPrecondition(`The ${store.GENERAL_GROUP} group cannot be renamed`);
      try {
        const row = await store.updateGroupName(pool, scope.environmentId, request.id, request.name);
        if (!row) throw groupNotFound(request.id);
        return groupFromRow(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw failedPrecondition(`Notification group with name: ${request.name} already exists`);
        throw error;
      }
    },

    async deleteNotificationGroup(request, context) {
      const scope = scopeOf(context);
      if ((await existingGroup(scope, request.id)).name === store.GENERAL_GROUP) throw failedPrecondition(`The ${store.GENERAL_GROUP} group cannot be deleted`);
      const inUse = () => failedPrecondition("Notification group is used by workflows; move them to another group first");
      try {
        if (!(await store.deleteUnusedGroup(pool, scope.environmentId, request.id))) throw inUse();
      } catch (error) {
        // A workflow that named the group while the delete ran.
        if (isForeignKeyViolation(error)) throw inUse();
        throw error;
      }
      return {};
    },

    async listFeeds(request, context) {
      const scope = scopeOf(context);
      if (request.identifiers.length > MAX_FEEDS) {
        throw invalidField("identifiers", `at most ${MAX_FEEDS} identifiers per call`, request.identifiers.length);
      }
      if (request.identifiers.length === 0) return liveFeeds(scope.environmentId);
      const rows = await store.selectFeeds(pool, scope.environmentId, request.identifiers, MAX_FEEDS);
      return { feeds: rows.map(feedFromRow) };
    },

    async createFeed(request, context) {
      const scope = scopeOf(context);
      if (request.name.trim().length === 0 || request.name.length > MAX_NAME) {
        throw invalidField("name", `name must be between 1 and ${MAX_NAME} characters`, request.name);
      }
      const result = await store.insertFeed(pool, scope.environmentId, { id: objectId(), organizationId: scope.organizationId, name: request.name }, MAX_FEEDS);
      if (result === "taken") throw alreadyExists(`Feed with identifier: ${request.name} already exists`);
      if (result === "full") throw failedPrecondition(`An environment has at most ${MAX_FEEDS} feeds`);
      return feedFromRow(result);
    },

    async deleteFeed(request, context) {
      const scope = scopeOf(context);
      const id = isObjectId(request.id) ? await store.softDeleteFeed(pool, scope.environmentId, request.id) : undefined;
      if (!id) throw notFound(`Feed with id: ${request.id} was not found`);
      return liveFeeds(scope.environmentId);
    },
  };
}
