import { clone, create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import jsonLogic from "json-logic-js";
import { workflowsV1 } from "@notify/proto";
import {
  CHANNELS,
  cronProblem,
  SEVERITIES,
  Severity,
  severityName,
  severityNamed,
  STEP_TYPES,
  StepType,
  stepTypeName,
  stepTypeNamed,
  type StepTypeName,
} from "@notify/runtime";
import { z } from "zod";
import { HttpError } from "../errors.js";
import { jsonObject, parseOrThrow, queryInt } from "../validation.js";
import { freeFormResponse, iso, isoDateResponse, linkOf } from "./common.js";
import { flag, IDENTIFIER, list, MAX_CONTENT, MAX_TAGS, MAX_URL, nonBlankText, oneOf, parseAt, quantity, text, UNITS } from "./workflows.js";

type StepInit = MessageInitShape<typeof workflowsV1.StepSchema>;
type TemplateInit = MessageInitShape<typeof workflowsV1.MessageTemplateSchema>;
type PreferenceLevelInit = MessageInitShape<typeof workflowsV1.PreferenceLevelSchema>;

const REDIRECT_TARGETS = ["_self", "_blank", "_parent", "_top", "_unfencedTop"] as const;
const EDITOR_TYPES = ["block", "html"] as const;
const MAX_STEPS = 50;
const MAX_FILTER_TAGS = 50;
/**
 * Novu's origins of workflows made in its own API and dashboard (not synced from code): those of
 * its v1 API are "novu-cloud-v1" and render with handlebars, those of its v2 API and dashboard
 * "novu-cloud" and render with liquid. The template engine is the same fact, so it decides.
 */
const ORIGINS = ["novu-cloud", "novu-cloud-v1"] as const;
const originOf = (workflow: workflowsV1.Workflow): (typeof ORIGINS)[number] =>
  workflow.templateEngine === workflowsV1.TemplateEngine.LIQUID ? "novu-cloud" : "novu-cloud-v1";

// Requests

/** Novu's step conditions: a JSON Logic rule the step runs under ({} for none). */
const skip = jsonObject.refine((value) => Object.keys(value).length === 0 || jsonLogic.is_logic(value), "skip must be a JSON Logic rule").optional();
const body = text("body", MAX_CONTENT).optional();
const redirect = z.object({ url: text("url", MAX_URL), target: oneOf("target", REDIRECT_TARGETS).optional() });
const action = z.object({ label: text("label").optional(), redirect: redirect.optional() });
const SCHEDULE_TYPES = ["regular", "timed"] as const;
const cron = z
  .string({ error: "cron must be a string" })
  .min(1, "cron should not be empty")
  .max(255, "cron must be at most 255 characters")
  .superRefine((value, context) => {
    const problem = cronProblem(value);
    if (problem) context.addIssue({ code: "custom", message: `cron must be a cron expression: ${problem}` });
  });
/** A timed schedule waits for its cron's next occurrence: it has one. */
const timedHasCron = (values: { type?: string | undefined; cron?: string | undefined }) => values.type !== "timed" || values.cron !== undefined;
const cronRequired = { path: ["cron"], message: "cron is required for a timed schedule" };
const THROTTLE_TYPES = ["fixed", "dynamic"] as const;
/** Novu leaves out seconds, for the cost of such short windows. */
const THROTTLE_UNITS = ["minutes", "hours", "days"] as const;
/** As Novu's ThrottleControlDto documents it: a window's runs are kept with it. */
const MAX_THROTTLE_THRESHOLD = 100;

/** The control values notify runs, per step type; other keys are ignored, as Novu stores but does not read them. */
const CONTROLS = {
  in_app: z.object({
    skip,
    body,
    subject: text("subject").optional(),
    avatar: text("avatar", MAX_URL).optional(),
    primaryAction: action.optional(),
    secondaryAction: action.optional(),
    redirect: redirect.optional(),
    data: jsonObject.optional(),
  }),
  email: z.object({
    skip,
    subject: text("subject").optional(),
    body,
    editorType: oneOf("editorType", EDITOR_TYPES).optional(),
    disableOutputSanitization: flag("disableOutputSanitization").optional(),
    preheader: text("preheader").optional(),
    layoutId: text("layoutId", 255).nullable().optional(),
  }),
  sms: z.object({ skip, body }),
  chat: z.object({ skip, body }),
  push: z.object({ skip, subject: text("subject").optional(), body }),
  delay: z
    .object({
      skip,
      type: oneOf("type", SCHEDULE_TYPES).default("regular"),
      amount: quantity("amount").optional(),
      unit: oneOf("unit", UNITS).optional(),
      cron: cron.optional(),
    })
    .refine(timedHasCron, cronRequired),
  digest: z
    .object({
      skip,
      type: oneOf("type", SCHEDULE_TYPES).optional(),
      amount: quantity("amount").optional(),
      unit: oneOf("unit", UNITS).optional(),
      digestKey: text("digestKey", 255).optional(),
      lookBackWindow: z.object({ amount: quantity("amount"), unit: oneOf("unit", UNITS) }).optional(),
      cron: cron.optional(),
    })
    .refine(timedHasCron, cronRequired),
  throttle: z.object({
    skip,
    type: oneOf("type", THROTTLE_TYPES).default("fixed"),
    amount: quantity("amount").min(1, "amount must be at least 1").optional(),
    unit: oneOf("unit", THROTTLE_UNITS).optional(),
    dynamicKey: text("dynamicKey", 255).min(1, "dynamicKey should not be empty").optional(),
    threshold: z
      .int({ error: "threshold must be an integer" })
      .min(1, "threshold must be at least 1")
      .max(MAX_THROTTLE_THRESHOLD, `threshold must be at most ${MAX_THROTTLE_THRESHOLD}`)
      .optional(),
    throttleKey: text("throttleKey", 255).optional(),
  }),
} as const satisfies Record<StepTypeName, z.ZodType>;

type Controls = { [Type in StepTypeName]: { type: Type; values: z.output<(typeof CONTROLS)[Type]> } }[StepTypeName];

const stepFields = z.object({
  _id: text("_id", 64).optional(),
  stepId: text("stepId", 255).regex(IDENTIFIER, "stepId may contain letters, digits and _ . : - only").optional(),
  name: nonBlankText("name"),
  type: oneOf("type", STEP_TYPES),
  controlValues: jsonObject.optional(),
});

/** A step with its control values checked against its type. */
const step = stepFields.transform((value, ctx) => {
  const values = parseAt(ctx, CONTROLS[value.type], value.controlValues ?? {}, ["controlValues"]);
  if (values === undefined) return z.NEVER;
  return { _id: value._id, stepId: value.stepId, name: value.name, controls: { type: value.type, values } as Controls };
});

type StepInput = z.output<typeof step>;

const preferenceLevel = z.object({
  all: z.object({ enabled: flag("enabled").default(true), readOnly: flag("readOnly").default(false) }).default({ enabled: true, readOnly: false }),
  channels: z.partialRecord(oneOf("channels", CHANNELS), z.object({ enabled: flag("enabled").default(true) })).default({}),
});

const preferences = z.object({ user: preferenceLevel.nullable().optional(), workflow: preferenceLevel.nullable().optional() });

const workflowIdField = text("workflowId", 255)
  .min(1, "workflowId should not be empty")
  .regex(IDENTIFIER, "workflowId may contain letters, digits and _ . : - only");
const tags = list("tags", text("tags", 255), MAX_TAGS);
const severity = oneOf("severity", SEVERITIES);
/** null clears the schema. */
const payloadSchema = jsonObject.nullable();

/**
 * POST /v2/workflows (CreateWorkflowDto); fields notify does not keep (source, agent, translations)
 * are ignored. Without `active` the workflow is active, as Novu's upsert makes it (its SDK sends
 * `active: false` unless told otherwise).
 */
export const createWorkflowV2Body = z.object({
  name: nonBlankText("name"),
  workflowId: workflowIdField,
  description: text("description", 1000).optional(),
  tags: tags.optional(),
  active: flag("active").default(true),
  validatePayload: flag("validatePayload").optional(),
  payloadSchema: payloadSchema.optional(),
  steps: list("steps", step, MAX_STEPS).default([]),
  preferences: preferences.optional(),
  severity: severity.optional(),
});

/**
 * PUT /v2/workflows/{workflowId} (UpdateWorkflowDto): the workflow as a whole. A workflowId in the
 * body is read but not applied, as Novu's update does: renaming the trigger identifier there would
 * break every trigger naming the old one.
 */
export const updateWorkflowV2Body = createWorkflowV2Body.extend({
  workflowId: workflowIdField.optional(),
  steps: list("steps", step, MAX_STEPS),
  preferences: preferences.default({}),
});

/** PATCH /v2/workflows/{workflowId} (PatchWorkflowDto): the fields given. */
export const patchWorkflowV2Body = z.object({
  active: flag("active").optional(),
  name: nonBlankText("name").optional(),
  description: text("description", 1000).optional(),
  tags: tags.optional(),
  payloadSchema: payloadSchema.optional(),
  validatePayload: flag("validatePayload").optional(),
});

export const syncWorkflowBody = z.object({ targetEnvironmentId: z.string({ error: "targetEnvironmentId must be a string" }).min(1).max(64) });

export const workflowStepParams = z.object({ workflowId: z.string().min(1).max(512), stepId: z.string().min(1).max(512) });

export const getWorkflowV2Query = z.object({ environmentId: z.string().max(64).optional() });

const queryList = (name: string, item: z.ZodType<string>) =>
  z
    .union([item, z.array(item)])
    .transform((value) => (Array.isArray(value) ? value : [value]))
    .pipe(z.array(z.string()).max(MAX_FILTER_TAGS, `${name} must contain no more than ${MAX_FILTER_TAGS} elements`));

/** GET /v2/workflows: offset paging, search by name or workflowId, tags and status filters, in one of Novu's orders. */
export const listWorkflowsV2Query = z.object({
  offset: queryInt(0, 0, 1_000_000),
  limit: queryInt(50, 1, 100),
  query: z.string().max(255).optional(),
  tags: queryList("tags", z.string().max(255)).optional(),
  status: queryList("status", oneOf("status", ["ACTIVE", "INACTIVE", "ERROR"])).optional(),
  orderDirection: oneOf("orderDirection", ["ASC", "DESC"]).default("DESC"),
  orderBy: oneOf("orderBy", ["createdAt", "updatedAt", "name", "lastTriggeredAt"]).default("createdAt"),
});

const WORKFLOW_ORDERS = {
  createdAt: workflowsV1.WorkflowOrder.UNSPECIFIED,
  updatedAt: workflowsV1.WorkflowOrder.UPDATED_AT,
  name: workflowsV1.WorkflowOrder.NAME,
  lastTriggeredAt: workflowsV1.WorkflowOrder.LAST_TRIGGERED_AT,
} as const;

/** Novu's lastTriggeredAt: present once the workflow was triggered. */
const lastTriggeredOf = (workflow: workflowsV1.Workflow) => (workflow.lastTriggeredAt ? { lastTriggeredAt: iso(workflow.lastTriggeredAt) } : {});

/** The list call for the query; undefined when it can match nothing (only ERROR asked for: no workflow here is in error). */
export function listWorkflowsV2RequestOf(
  query: z.output<typeof listWorkflowsV2Query>,
): MessageInitShape<typeof workflowsV1.ListWorkflowsRequestSchema> | undefined {
  const statuses = new Set(query.status ?? ["ACTIVE", "INACTIVE"]);
  if (!statuses.has("ACTIVE") && !statuses.has("INACTIVE")) return undefined;
  const onlyActive = statuses.has("ACTIVE") && statuses.has("INACTIVE") ? undefined : statuses.has("ACTIVE");
  return {
    offset: query.offset,
    limit: query.limit,
    tags: query.tags ?? [],
    oldestFirst: query.orderDirection === "ASC",
    orderBy: WORKFLOW_ORDERS[query.orderBy],
    ...(query.query ? { query: query.query } : {}),
    ...(onlyActive !== undefined ? { active: onlyActive } : {}),
  };
}

function inAppTemplate(values: z.output<typeof CONTROLS.in_app>): TemplateInit {
  const buttons = (
    [
      ["primary", values.primaryAction],
      ["secondary", values.secondaryAction],
    ] as const
  ).flatMap(([type, given]) => (given?.label !== undefined ? [{ type, content: given.label, ...linkOf(given.redirect) }] : []));
  const cta = {
    ...(values.redirect ? { type: "redirect", data: linkOf(values.redirect) } : {}),
    ...(buttons.length > 0 ? { action: { buttons } } : {}),
  };
  return {
    type: StepType.IN_APP,
    content: { case: "text", value: values.body ?? "" },
    ...(values.subject !== undefined ? { subject: values.subject } : {}),
    ...(Object.keys(cta).length > 0 ? { cta } : {}),
    ...(values.avatar !== undefined ? { actor: { type: "system_custom", data: values.avatar } } : {}),
    ...(values.data ? { data: values.data as JsonObject } : {}),
  };
}

/** A step's controls as the catalogue's template, metadata and conditions. */
function stepContent(controls: Controls): Pick<StepInit, "template" | "metadata" | "conditions"> {
  const conditions = controls.values.skip;
  return { ...templateOf(controls), ...(conditions && Object.keys(conditions).length > 0 ? { conditions: conditions as JsonObject } : {}) };
}

function templateOf(controls: Controls): Pick<StepInit, "template" | "metadata"> {
  const text = (value: string | undefined) => ({ case: "text" as const, value: value ?? "" });
  switch (controls.type) {
    case "in_app":
      return { template: inAppTemplate(controls.values) };
    case "email": {
      const values = controls.values;
      return {
        template: {
          type: StepType.EMAIL,
          content: text(values.body),
          subject: values.subject ?? "",
          contentType: values.editorType === "html" ? "customHtml" : "editor",
          ...(values.disableOutputSanitization !== undefined ? { disableOutputSanitization: values.disableOutputSanitization } : {}),
          ...(values.preheader !== undefined ? { preheader: values.preheader } : {}),
          ...(values.layoutId ? { layoutId: values.layoutId } : {}),
        },
      };
    }
    case "sms":
    case "chat":
      return { template: { type: stepTypeNamed(controls.type), content: text(controls.values.body) } };
    case "push":
      return {
        template: {
          type: StepType.PUSH,
          content: text(controls.values.body),
          ...(controls.values.subject !== undefined ? { title: controls.values.subject } : {}),
        },
      };
    case "delay": {
      const values = controls.values;
      return {
        template: { type: StepType.DELAY },
        metadata: {
          type: values.type,
          ...(values.amount !== undefined ? { amount: values.amount } : {}),
          ...(values.unit !== undefined ? { unit: values.unit } : {}),
          ...(values.type === "timed" ? { cron: values.cron } : {}),
        },
      };
    }
    case "throttle": {
      const values = controls.values;
      return {
        template: { type: StepType.THROTTLE },
        metadata: {
          type: values.type,
          ...(values.amount !== undefined ? { amount: values.amount } : {}),
          ...(values.unit !== undefined ? { unit: values.unit } : {}),
          ...(values.dynamicKey !== undefined ? { dynamicKey: values.dynamicKey } : {}),
          ...(values.threshold !== undefined ? { threshold: values.threshold } : {}),
          ...(values.throttleKey !== undefined ? { throttleKey: values.throttleKey } : {}),
        },
      };
    }
    case "digest": {
      const values = controls.values;
      const window = values.lookBackWindow;
      // Novu's timed digest controls are its cron and key, with no type: a cron alone makes one.
      const timed = values.type === "timed" || (values.type === undefined && values.cron !== undefined);
      return {
        template: { type: StepType.DIGEST },
        metadata: {
          type: timed ? "timed" : window ? "backoff" : "regular",
          ...(timed ? { cron: values.cron } : {}),
          ...(values.amount !== undefined ? { amount: values.amount } : {}),
          ...(values.unit !== undefined ? { unit: values.unit } : {}),
          ...(values.digestKey !== undefined ? { digestKey: values.digestKey } : {}),
          ...(window ? { backoff: true, backoffAmount: window.amount, backoffUnit: window.unit } : {}),
        },
      };
    }
  }
}

function stepInit(value: StepInput): StepInit {
  return {
    id: value._id ?? "",
    uuid: "",
    name: value.name,
    ...(value.stepId !== undefined ? { stepId: value.stepId } : {}),
    ...stepContent(value.controls),
  };
}

function levelInit(level: z.output<typeof preferenceLevel>): PreferenceLevelInit {
  const channels = level.channels;
  return {
    enabled: level.all.enabled,
    readOnly: level.all.readOnly,
    channels: {
      ...(channels.email ? { email: channels.email.enabled } : {}),
      ...(channels.sms ? { sms: channels.sms.enabled } : {}),
      ...(channels.in_app ? { inApp: channels.in_app.enabled } : {}),
      ...(channels.chat ? { chat: channels.chat.enabled } : {}),
      ...(channels.push ? { push: channels.push.enabled } : {}),
    },
  };
}

const preferencesInit = (value: z.output<typeof preferences>) => ({
  ...(value.workflow ? { workflow: levelInit(value.workflow) } : {}),
  ...(value.user ? { user: levelInit(value.user) } : {}),
});

/** The fields create and a whole update share. */
function workflowFields(body: z.output<typeof createWorkflowV2Body> | z.output<typeof updateWorkflowV2Body>) {
  return {
    name: body.name,
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.severity !== undefined ? { severity: severityNamed(body.severity) } : {}),
    ...(body.validatePayload !== undefined ? { validatePayload: body.validatePayload } : {}),
    ...(body.preferences ? { preferences: preferencesInit(body.preferences) } : {}),
  };
}

/** A schema as the catalogue takes it: an empty one clears it. */
const schemaInit = (value: Record<string, unknown> | null) => (value ?? {}) as JsonObject;

export function createWorkflowV2RequestOf(body: z.output<typeof createWorkflowV2Body>): MessageInitShape<typeof workflowsV1.CreateWorkflowRequestSchema> {
  return {
    ...workflowFields(body),
    identifier: body.workflowId,
    active: body.active,
    tags: body.tags ?? [],
    steps: body.steps.map(stepInit),
    ...(body.payloadSchema ? { payloadSchema: body.payloadSchema as JsonObject } : {}),
    templateEngine: workflowsV1.TemplateEngine.LIQUID,
  };
}

export function updateWorkflowV2RequestOf(
  workflowId: string,
  body: z.output<typeof updateWorkflowV2Body>,
): MessageInitShape<typeof workflowsV1.UpdateWorkflowRequestSchema> {
  return {
    ...workflowFields(body),
    workflowId,
    active: body.active,
    steps: { steps: body.steps.map(stepInit) },
    ...(body.tags ? { tags: { tags: body.tags } } : {}),
    ...(body.payloadSchema !== undefined ? { payloadSchema: schemaInit(body.payloadSchema) } : {}),
  };
}

export function patchWorkflowV2RequestOf(
  workflowId: string,
  body: z.output<typeof patchWorkflowV2Body>,
): MessageInitShape<typeof workflowsV1.UpdateWorkflowRequestSchema> {
  return {
    workflowId,
    ...(body.active !== undefined ? { active: body.active } : {}),
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.tags ? { tags: { tags: body.tags } } : {}),
    ...(body.validatePayload !== undefined ? { validatePayload: body.validatePayload } : {}),
    ...(body.payloadSchema !== undefined ? { payloadSchema: schemaInit(body.payloadSchema) } : {}),
  };
}

/**
 * The workflow, as it is, for another environment: its trigger identifier kept, step ids of the
 * target's steps with the same stepId kept, and what only the source environment has (feeds,
 * its notification group) left out. Layouts are named by identifier, and travel with it.
 */
export function syncedWorkflowOf(
  source: workflowsV1.Workflow,
  target: workflowsV1.Workflow | undefined,
): { create: MessageInitShape<typeof workflowsV1.CreateWorkflowRequestSchema>; update: MessageInitShape<typeof workflowsV1.UpdateWorkflowRequestSchema> } {
  const targetIds = new Map((target?.steps ?? []).map((one) => [one.stepId, one.id]));
  const steps = source.steps.map((one) => {
    const copy = clone(workflowsV1.StepSchema, one);
    copy.id = (one.stepId && targetIds.get(one.stepId)) || "";
    copy.uuid = "";
    for (const template of [copy.template, ...copy.variants.map((variant) => variant.template)]) {
      delete template?.feedId;
    }
    return copy;
  });
  const preferences =
    source.workflowPreferences || source.userPreferences
      ? {
          preferences: {
            ...(source.workflowPreferences ? { workflow: source.workflowPreferences } : {}),
            ...(source.userPreferences ? { user: source.userPreferences } : {}),
          },
        }
      : undefined;
  const common = {
    name: source.name,
    description: source.description,
    active: source.active,
    critical: source.critical,
    ...(source.preferenceSettings ? { preferenceSettings: source.preferenceSettings } : {}),
    ...(source.data ? { data: source.data } : {}),
    severity: source.severity,
    validatePayload: source.validatePayload,
    payloadSchema: source.payloadSchema ?? {},
    templateEngine: source.templateEngine,
  };
  return {
    create: { ...common, ...preferences, identifier: source.identifier, exactIdentifier: true, tags: source.tags, steps },
    update: { ...common, ...preferences, workflowId: target?.id ?? source.identifier, tags: { tags: source.tags }, steps: { steps } },
  };
}

// Replies

const channelEnabled = (channels: workflowsV1.ChannelPreferences | undefined, all: boolean) => ({
  in_app: { enabled: channels?.inApp ?? all },
  email: { enabled: channels?.email ?? all },
  sms: { enabled: channels?.sms ?? all },
  chat: { enabled: channels?.chat ?? all },
  push: { enabled: channels?.push ?? all },
});

const levelToJson = (level: workflowsV1.PreferenceLevel) => ({
  all: { enabled: level.enabled, readOnly: level.readOnly },
  channels: channelEnabled(level.channels, level.enabled),
});

const SYSTEM_DEFAULT = { all: { enabled: true, readOnly: false }, channels: channelEnabled(undefined, true) };

/** Novu's preferences: the workflow level as `default` and the user level, if any; a v1 workflow's single level is its default. */
function preferencesToJson(workflow: workflowsV1.Workflow) {
  if (!workflow.workflowPreferences && !workflow.userPreferences) {
    const settings = workflow.preferenceSettings;
    return {
      user: null,
      default: {
        all: { enabled: true, readOnly: workflow.critical },
        channels: {
          in_app: { enabled: settings?.inApp ?? true },
          email: { enabled: settings?.email ?? true },
          sms: { enabled: settings?.sms ?? true },
          chat: { enabled: settings?.chat ?? true },
          push: { enabled: settings?.push ?? true },
        },
      },
    };
  }
  return {
    user: workflow.userPreferences ? levelToJson(workflow.userPreferences) : null,
    default: workflow.workflowPreferences ? levelToJson(workflow.workflowPreferences) : SYSTEM_DEFAULT,
  };
}

const textOf = (template: workflowsV1.MessageTemplate) => {
  const content = template.content;
  if (content.case === "text") return content.value;
  if (content.case === "blocks") return content.value.blocks.map((block) => block.content).join("\n");
  return "";
};

function inAppControlValues(template: workflowsV1.MessageTemplate) {
  const buttons = template.cta?.action?.buttons ?? [];
  const redirectOf = (link: Parameters<typeof linkOf>[0]) => {
    const redirect = linkOf(link);
    return redirect ? { redirect } : {};
  };
  const actionOf = (type: string) => {
    const button = buttons.find((candidate) => candidate.type === type);
    return button ? { label: button.content, ...redirectOf(button) } : undefined;
  };
  const [primary, secondary] = [actionOf("primary"), actionOf("secondary")];
  return {
    body: textOf(template),
    ...(template.subject !== undefined ? { subject: template.subject } : {}),
    ...(template.actor?.type === "system_custom" && template.actor.data ? { avatar: template.actor.data } : {}),
    ...(primary !== undefined ? { primaryAction: primary } : {}),
    ...(secondary !== undefined ? { secondaryAction: secondary } : {}),
    ...redirectOf(template.cta?.data),
    ...(template.data ? { data: template.data } : {}),
  };
}

const stepTypeNameOf = (one: workflowsV1.Step): string => stepTypeName(one.template?.type ?? StepType.UNSPECIFIED) ?? "";

/** A catalogue step's control values in Novu's v2 shape (what the SDK's per-type DTOs read). */
export function controlValuesOf(one: workflowsV1.Step): Record<string, unknown> {
  const values = typeControlValues(one);
  return one.conditions ? { ...values, skip: one.conditions } : values;
}

function typeControlValues(one: workflowsV1.Step): Record<string, unknown> {
  const template = one.template;
  const metadata = one.metadata;
  switch (template?.type) {
    case StepType.IN_APP:
      return inAppControlValues(template);
    case StepType.EMAIL:
      return {
        subject: template.subject ?? "",
        body: textOf(template),
        editorType: template.contentType === "customHtml" ? "html" : "block",
        ...(template.disableOutputSanitization !== undefined ? { disableOutputSanitization: template.disableOutputSanitization } : {}),
        ...(template.preheader !== undefined ? { preheader: template.preheader } : {}),
        ...(template.layoutId !== undefined ? { layoutId: template.layoutId } : {}),
      };
    case StepType.PUSH:
      return { body: textOf(template), ...(template.title !== undefined ? { subject: template.title } : {}) };
    case StepType.THROTTLE:
      return {
        type: metadata?.type === "dynamic" ? "dynamic" : "fixed",
        ...(metadata?.amount !== undefined ? { amount: metadata.amount } : {}),
        ...(metadata?.unit !== undefined ? { unit: metadata.unit } : {}),
        ...(metadata?.dynamicKey !== undefined ? { dynamicKey: metadata.dynamicKey } : {}),
        ...(metadata?.threshold !== undefined ? { threshold: metadata.threshold } : {}),
        ...(metadata?.throttleKey !== undefined ? { throttleKey: metadata.throttleKey } : {}),
      };
    case StepType.DELAY:
    case StepType.DIGEST:
      return {
        type: metadata?.type === "timed" ? "timed" : "regular",
        ...(metadata?.cron !== undefined ? { cron: metadata.cron } : {}),
        ...(metadata?.amount !== undefined ? { amount: metadata.amount } : {}),
        ...(metadata?.unit !== undefined ? { unit: metadata.unit } : {}),
        ...(metadata?.digestKey !== undefined ? { digestKey: metadata.digestKey } : {}),
        ...(metadata?.backoff && metadata.backoffAmount !== undefined && metadata.backoffUnit !== undefined
          ? { lookBackWindow: { amount: metadata.backoffAmount, unit: metadata.backoffUnit } }
          : {}),
      };
    default:
      return { body: template ? textOf(template) : "" };
  }
}

/** Steps written before stepIds were kept are named by their uuid. */
const stepIdOf = (one: workflowsV1.Step) => one.stepId ?? one.uuid;

/** Novu's step slug: its stepId and, after `_st_`, its internal id. */
const STEP_SLUG_MARK = "_st_";

/**
 * The variables a step's templates may use: the payload (its schema when the workflow has one,
 * else the variables its templates name, as v1's {{name}} or v2's {{payload.name}}) and the subscriber.
 */
function variablesOf(workflow: workflowsV1.Workflow) {
  const names = new Set(workflow.variables.map((name) => name.replace(/^payload\./, "")));
  const payload = workflow.payloadSchema ?? { type: "object", properties: Object.fromEntries([...names].map((name) => [name, { type: "string" }])) };
  return { type: "object", properties: { payload, subscriber: { type: "object" } } };
}

export function stepToJson(one: workflowsV1.Step, workflow: workflowsV1.Workflow) {
  const stepId = stepIdOf(one);
  const controlValues = controlValuesOf(one);
  return {
    _id: one.id,
    stepId,
    name: one.name ?? stepId,
    slug: `${stepId}${STEP_SLUG_MARK}${one.id}`,
    type: stepTypeNameOf(one),
    origin: originOf(workflow),
    workflowId: workflow.identifier,
    workflowDatabaseId: workflow.id,
    controls: { values: controlValues },
    controlValues,
    variables: variablesOf(workflow),
  };
}

/** The step `stepId` names: by _id, stepId or slug; 404 when none. */
export function stepOf(workflow: workflowsV1.Workflow, stepId: string): workflowsV1.Step {
  const internal = stepId.includes(STEP_SLUG_MARK) ? stepId.slice(stepId.lastIndexOf(STEP_SLUG_MARK) + STEP_SLUG_MARK.length) : undefined;
  const found = workflow.steps.find((one) => one.id === stepId || stepIdOf(one) === stepId || one.id === internal);
  if (!found) throw new HttpError(404, `Step with id ${stepId} cannot be found`);
  return found;
}

/**
 * The step with these control values in place of its own (all of them, as Novu's preview takes
 * them), checked against its type as a write would check them: 422 naming `controlValues.<field>`.
 */
export function stepWithControlValues(one: workflowsV1.Step, controlValues: Record<string, unknown>): workflowsV1.Step {
  const type = stepTypeName(one.template?.type ?? StepType.UNSPECIFIED);
  if (type === undefined) return one;
  const values = parseOrThrow(z.object({ controlValues: CONTROLS[type] }), { controlValues }).controlValues;
  return create(workflowsV1.StepSchema, {
    id: one.id,
    uuid: one.uuid,
    name: one.name,
    ...(one.stepId !== undefined ? { stepId: one.stepId } : {}),
    ...stepContent({ type, values } as Controls),
  });
}

const statusOf = (workflow: workflowsV1.Workflow) => (workflow.active ? "ACTIVE" : "INACTIVE");

/** Novu's WorkflowResponseDto. */
export function workflowV2ToJson(workflow: workflowsV1.Workflow) {
  return {
    _id: workflow.id,
    workflowId: workflow.identifier,
    slug: workflow.slug,
    name: workflow.name,
    description: workflow.description,
    tags: workflow.tags,
    active: workflow.active,
    status: statusOf(workflow),
    validatePayload: workflow.validatePayload,
    payloadSchema: workflow.payloadSchema ?? null,
    isTranslationEnabled: false,
    origin: originOf(workflow),
    severity: severityName(workflow.severity === Severity.UNSPECIFIED ? Severity.NONE : workflow.severity) ?? "none",
    preferences: preferencesToJson(workflow),
    steps: workflow.steps.map((one) => stepToJson(one, workflow)),
    createdAt: iso(workflow.createdAt),
    updatedAt: iso(workflow.updatedAt),
    ...lastTriggeredOf(workflow),
  };
}

/** Novu's ListWorkflowResponse: summaries and the total. */
export function workflowV2PageToJson(reply: Pick<workflowsV1.ListWorkflowsResponse, "workflows" | "totalCount">) {
  return {
    workflows: reply.workflows.map((workflow) => ({
      _id: workflow.id,
      workflowId: workflow.identifier,
      slug: workflow.slug,
      name: workflow.name,
      tags: workflow.tags,
      status: statusOf(workflow),
      origin: originOf(workflow),
      isTranslationEnabled: false,
      stepTypeOverviews: workflow.steps.map(stepTypeNameOf),
      steps: workflow.steps.map((one) => ({ slug: `${stepIdOf(one)}${STEP_SLUG_MARK}${one.id}`, type: stepTypeNameOf(one) })),
      createdAt: iso(workflow.createdAt),
      updatedAt: iso(workflow.updatedAt),
      ...lastTriggeredOf(workflow),
    })),
    totalCount: reply.totalCount,
  };
}

// Shapes of the replies above, for the API description.

const preferenceLevelResponse = z.object({
  all: z.object({ enabled: z.boolean(), readOnly: z.boolean() }),
  channels: z.partialRecord(z.enum(CHANNELS), z.object({ enabled: z.boolean() })),
});

/** What stepToJson answers; controlValues as the step type has them. */
export const stepV2Response = z
  .object({
    _id: z.string(),
    stepId: z.string(),
    name: z.string(),
    slug: z.string(),
    type: z.string(),
    origin: z.enum(ORIGINS),
    workflowId: z.string(),
    workflowDatabaseId: z.string(),
    controls: z.object({ values: freeFormResponse }),
    controlValues: freeFormResponse,
    variables: freeFormResponse,
  })
  .meta({ id: "WorkflowStep" });

const workflowStatus = z.enum(["ACTIVE", "INACTIVE"]);

/** What workflowV2ToJson answers. */
export const workflowV2Response = z
  .object({
    _id: z.string(),
    workflowId: z.string(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    active: z.boolean(),
    status: workflowStatus,
    validatePayload: z.boolean(),
    payloadSchema: freeFormResponse.nullable(),
    isTranslationEnabled: z.literal(false),
    origin: z.enum(ORIGINS),
    severity: z.enum(SEVERITIES),
    preferences: z.object({ user: preferenceLevelResponse.nullable(), default: preferenceLevelResponse }),
    steps: z.array(stepV2Response),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
    lastTriggeredAt: isoDateResponse.optional(),
  })
  .meta({ id: "WorkflowV2" });

/** What workflowV2PageToJson answers. */
export const workflowV2PageResponse = z.object({
  workflows: z.array(
    z.object({
      _id: z.string(),
      workflowId: z.string(),
      slug: z.string(),
      name: z.string(),
      tags: z.array(z.string()),
      status: workflowStatus,
      origin: z.enum(ORIGINS),
      isTranslationEnabled: z.literal(false),
      stepTypeOverviews: z.array(z.string()),
      steps: z.array(z.object({ slug: z.string(), type: z.string() })),
      createdAt: isoDateResponse,
      updatedAt: isoDateResponse,
      lastTriggeredAt: isoDateResponse.optional(),
    }),
  ),
  totalCount: z.int(),
});
