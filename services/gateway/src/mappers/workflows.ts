import { fromJson, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { type commonV1, workflowsV1 } from "@notify/proto";
import {
  isChannelName,
  ORDINAL_DAY_NAMES,
  ORDINALS,
  perChannel,
  STEP_TYPE_NAMES,
  STEP_TYPES,
  StepType,
  stepTypeName,
  stepTypeNamed,
  timedDayNames,
  timedDaysNamed,
  WEEKDAYS,
} from "@notify/runtime";
import { z } from "zod";
import { jsonObject, queryInt } from "../validation.js";
import { FILTER_ON, FILTER_TYPES, FILTER_VALUES, freeFormResponse, iso, isoDateResponse, offsetPage, offsetPageResponse, OPERATORS } from "./common.js";

type StepInit = MessageInitShape<typeof workflowsV1.StepSchema>;
type TemplateInit = MessageInitShape<typeof workflowsV1.MessageTemplateSchema>;
type MetadataInit = MessageInitShape<typeof workflowsV1.StepMetadataSchema>;

// The closed sets of the spec. Anything else is a 422 that names the field.
export const UNITS = ["seconds", "minutes", "hours", "days", "weeks", "months"] as const;
const MONTHLY_TYPES = ["each", "on"] as const;
const EMAIL_BLOCK_TYPES = ["button", "text"] as const;
const TEXT_ALIGNS = ["center", "left", "right"] as const;
const CTA_TYPES = ["redirect"] as const;
const ACTION_STATUSES = ["pending", "done"] as const;
const BUTTON_TYPES = ["primary", "secondary"] as const;
const ACTOR_TYPES = ["none", "user", "system_icon", "system_custom"] as const;
const CONTENT_TYPES = ["editor", "customHtml"] as const;

// Bounds: a workflow is configuration, not data; these keep one far below the body limit.
const MAX_STEPS = 50;
const MAX_VARIANTS = 20;
const MAX_FILTERS = 20;
const MAX_CHILDREN = 50;
const MAX_BLOCKS = 100;
export const MAX_TAGS = 50;
export const MAX_CONTENT = 256 * 1024;
export const MAX_TEXT = 1024;
export const MAX_URL = 2048;
export const WORKFLOW_BODY_LIMIT = 8 * 1024 * 1024;

const OBJECT_ID = /^[0-9a-f]{24}$/;
const AT_TIME = /^([01]?\d|2[0-3]):[0-5]\d$/;
const MONTH_DAY = /^([1-9]|[12]\d|3[01])$/;
export const IDENTIFIER = /^[A-Za-z0-9_.:-]+$/;

export const oneOf = <const T extends readonly [string, ...string[]]>(name: string, values: T) =>
  z.enum(values, { error: `${name} must be one of: ${values.join(", ")}` });
export const text = (name: string, max = MAX_TEXT) => z.string({ error: `${name} must be a string` }).max(max, `${name} must be at most ${max} characters`);
export const flag = (name: string) => z.boolean({ error: `${name} must be a boolean` });
export const quantity = (name: string) =>
  z
    .number({ error: `${name} must be a number` })
    .nonnegative(`${name} must not be negative`)
    .max(1_000_000, `${name} is too large`);
export const list = <T extends z.ZodType>(name: string, item: T, max: number) =>
  z.array(item, { error: `${name} must be an array` }).max(max, `${name} must contain no more than ${max} elements`);

const fieldFilterPart = z.object({
  field: text("field", 255).min(1, "field should not be empty"),
  value: text("value"),
  operator: oneOf("operator", OPERATORS),
  on: oneOf("on", FILTER_ON),
});

const stepFilter = z.object({
  isNegated: flag("isNegated").default(false),
  type: oneOf("type", FILTER_TYPES),
  value: oneOf("value", FILTER_VALUES),
  children: list("children", fieldFilterPart, MAX_CHILDREN).default([]),
});

const timedConfig = z.object({
  atTime: z.string({ error: "atTime must be a string" }).regex(AT_TIME, "atTime must be a time of day as HH:mm").optional(),
  weekDays: list("weekDays", oneOf("weekDays", WEEKDAYS), 7).optional(),
  // Novu's own dashboard sends numbers; the spec (and the SDK) have strings.
  monthDays: list(
    "monthDays",
    z
      .union([z.string(), z.number()], { error: "monthDays must contain days of the month" })
      .transform(String)
      .pipe(z.string().regex(MONTH_DAY, "monthDays must contain days of the month, 1 to 31")),
    31,
  ).optional(),
  ordinal: oneOf("ordinal", ORDINALS).optional(),
  ordinalValue: oneOf("ordinalValue", ORDINAL_DAY_NAMES).optional(),
  monthlyType: oneOf("monthlyType", MONTHLY_TYPES).optional(),
});

const amountAndUnit = { amount: quantity("amount").optional(), unit: oneOf("unit", UNITS).optional() };
const digestKey = { digestKey: text("digestKey", 255).optional() };
const digestRegular = {
  ...amountAndUnit,
  ...digestKey,
  backoff: flag("backoff").optional(),
  backoffAmount: quantity("backoffAmount").optional(),
  backoffUnit: oneOf("backoffUnit", UNITS).optional(),
  updateMode: flag("updateMode").optional(),
};

/** The spec's four metadata shapes, by step type and metadata type; other step types take no metadata. */
const METADATA_SHAPES = {
  [STEP_TYPE_NAMES[StepType.DIGEST]]: {
    regular: z.object({ type: z.literal("regular"), ...digestRegular }),
    backoff: z.object({ type: z.literal("backoff"), ...digestRegular }),
    timed: z.object({ type: z.literal("timed"), ...amountAndUnit, ...digestKey, timed: timedConfig.optional() }),
  },
  [STEP_TYPE_NAMES[StepType.DELAY]]: {
    regular: z.object({ type: z.literal("regular"), ...amountAndUnit }),
    scheduled: z.object({ type: z.literal("scheduled"), delayPath: text("delayPath", 255).min(1, "delayPath should not be empty") }),
  },
} as const;

type MetadataShapes = typeof METADATA_SHAPES;
/** Any of the four shapes (digest regular and backoff share one). */
type Metadata = {
  [Step in keyof MetadataShapes]: { [Type in keyof MetadataShapes[Step]]: z.output<MetadataShapes[Step][Type]> }[keyof MetadataShapes[Step]];
}[keyof MetadataShapes];

/** Parses `value` with `schema`, reporting its issues under `path`; undefined when it fails. */
export function parseAt<S extends z.ZodType>(ctx: z.RefinementCtx, schema: S, value: unknown, path: PropertyKey[]): z.output<S> | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: [...path, ...issue.path] });
  return undefined;
}

const emailBlock = z.object({
  type: oneOf("type", EMAIL_BLOCK_TYPES),
  content: text("content", MAX_CONTENT),
  url: text("url", MAX_URL).optional(),
  styles: z.object({ textAlign: oneOf("textAlign", TEXT_ALIGNS) }).optional(),
});

const cta = z.object({
  type: oneOf("type", CTA_TYPES).optional(),
  data: z.object({ url: text("url", MAX_URL).optional() }).optional(),
  action: z
    .object({
      status: oneOf("status", ACTION_STATUSES).optional(),
      buttons: list(
        "buttons",
        z.object({ type: oneOf("type", BUTTON_TYPES), content: text("content"), resultContent: text("resultContent").optional() }),
        10,
      ).optional(),
      result: z.object({ payload: jsonObject.optional(), type: oneOf("type", BUTTON_TYPES).optional() }).optional(),
    })
    .optional(),
});

/** A variable a v1 template declares (Novu's ITemplateVariable): a step's or a legacy layout's. */
export const templateVariable = z.object({
  name: text("name", 255),
  type: oneOf("type", ["String", "Array", "Boolean"]).optional(),
  required: flag("required").optional(),
  defaultValue: z.union([z.string(), z.boolean()], { error: "defaultValue must be a string or a boolean" }).optional(),
});

/** Most variables one template declares. */
const MAX_TEMPLATE_VARIABLES = 100;
export const templateVariables = z.array(templateVariable).max(MAX_TEMPLATE_VARIABLES, `variables must hold at most ${MAX_TEMPLATE_VARIABLES} items`);

/** The variables as the services keep them: untyped ones are Strings, and an empty default is none, as in Novu. */
export const templateVariablesInit = (variables: readonly z.output<typeof templateVariable>[]) =>
  variables.map((one) => ({
    name: one.name,
    type: one.type ?? "String",
    required: one.required ?? false,
    ...(one.defaultValue !== undefined && one.defaultValue !== "" ? { defaultValue: fromJson(ValueSchema, one.defaultValue) } : {}),
  }));

export const templateVariablesToJson = (variables: readonly commonV1.TemplateVariable[]) =>
  variables.map((one) => ({
    name: one.name,
    type: one.type,
    required: one.required,
    ...(one.defaultValue ? { defaultValue: toJson(ValueSchema, one.defaultValue) } : {}),
  }));

export const templateVariablesResponse = z.array(
  z.object({ name: z.string(), type: z.string(), required: z.boolean(), defaultValue: z.union([z.string(), z.boolean()]).optional() }),
);

const templateFields = z.object({
  // Novu's v1 workflows have no throttle step: it is a v2 step, with v2's controls.
  type: oneOf("type", STEP_TYPES).refine((type) => type !== STEP_TYPE_NAMES[StepType.THROTTLE], "a throttle step is written through /v2/workflows"),
  // Checked below against the type: a string, or email blocks for email steps.
  content: z.unknown().optional(),
  contentType: oneOf("contentType", CONTENT_TYPES).optional(),
  subject: text("subject").optional(),
  title: text("title").optional(),
  senderName: text("senderName").optional(),
  preheader: text("preheader").optional(),
  feedId: z.string({ error: "feedId must be a string" }).regex(OBJECT_ID, "feedId must be the _id of a feed").nullable().optional(),
  layoutId: text("layoutId", 255).nullable().optional(),
  cta: cta.optional(),
  actor: z.object({ type: oneOf("type", ACTOR_TYPES), data: text("data", MAX_URL).nullable().optional() }).optional(),
  variables: templateVariables.optional(),
});

type Template = Omit<z.output<typeof templateFields>, "content"> & { content?: string | z.output<typeof emailBlock>[] };

const template = templateFields.transform((value, ctx): Template => {
  const { content, ...rest } = value;
  if (content === undefined || content === null) {
    if (isChannelName(value.type)) ctx.addIssue({ code: "custom", message: "content should not be null or undefined", path: ["content"] });
    return rest;
  }
  if (Array.isArray(content) && value.type === "email") {
    const blocks = parseAt(ctx, list("content", emailBlock, MAX_BLOCKS), content, ["content"]);
    return blocks ? { ...rest, content: blocks } : z.NEVER;
  }
  const message = value.type === "email" ? "content must be a string or an array of email blocks" : "content must be a string";
  const body = parseAt(ctx, z.string({ error: message }).max(MAX_CONTENT, `content must be at most ${MAX_CONTENT} characters`), content, ["content"]);
  return body === undefined ? z.NEVER : { ...rest, content: body };
});

const stepFields = {
  /** An existing step's _id or uuid keeps that step's identity on update. */
  _id: text("_id", 64).optional(),
  uuid: text("uuid", 64).optional(),
  name: text("name", 255).optional(),
  active: flag("active").optional(),
  shouldStopOnFail: flag("shouldStopOnFail").optional(),
  filters: list("filters", stepFilter, MAX_FILTERS).optional(),
  // Checked below against the step type.
  metadata: z.unknown().optional(),
  replyCallback: z.object({ active: flag("active").optional(), url: text("url", MAX_URL).optional() }).optional(),
  template,
};

/** Validates the metadata against the shapes its step type takes. */
function withMetadata<T extends { metadata?: unknown; template: { type: string } }>(step: T, ctx: z.RefinementCtx) {
  const { metadata, ...rest } = step;
  if (metadata === undefined || metadata === null) return rest;
  const stepType = step.template.type;
  if (!Object.hasOwn(METADATA_SHAPES, stepType)) {
    ctx.addIssue({ code: "custom", message: "metadata applies to digest and delay steps only", path: ["metadata"] });
    return z.NEVER;
  }
  const shapes: Record<string, z.ZodType<Metadata>> = METADATA_SHAPES[stepType as keyof MetadataShapes];
  const type = (metadata as { type?: unknown }).type;
  const shape = typeof type === "string" && Object.hasOwn(shapes, type) ? shapes[type] : undefined;
  if (!shape) {
    ctx.addIssue({ code: "custom", message: `type must be one of: ${Object.keys(shapes).join(", ")}`, path: ["metadata", "type"] });
    return z.NEVER;
  }
  const parsed = parseAt(ctx, shape, metadata, ["metadata"]);
  return parsed ? { ...rest, metadata: parsed } : z.NEVER;
}

const variant = z
  .object({ ...stepFields, filters: list("filters", stepFilter, MAX_FILTERS).min(1, "variant conditions (filters) are required") })
  .transform(withMetadata);

const step = z.object({ ...stepFields, variants: list("variants", variant, MAX_VARIANTS).optional() }).transform(withMetadata);

type StepInput = z.output<typeof step>;
type VariantInput = z.output<typeof variant>;

export const preferenceSettings = z.object(
  perChannel((name) => flag(name).optional()),
  { error: "preferenceSettings must be an object" },
);

/** A required name-like string: not blank, at most `max` characters. */
export const nonBlankText = (name: string, max = 255) => text(name, max).refine((value) => value.trim().length > 0, `${name} should not be empty`);

const workflowName = nonBlankText("name");
const notificationGroupId = z.string({ error: "notificationGroupId must be a string" }).regex(OBJECT_ID, "notificationGroupId must be a mongodb id");
const tags = list("tags", text("tags", 255), MAX_TAGS);
const steps = list("steps", step, MAX_STEPS);

/** POST /v1/workflows (Novu's v1 shape); unknown fields are ignored. */
export const createWorkflowBody = z.object({
  name: workflowName,
  description: text("description", 1000).optional(),
  tags: tags.optional(),
  active: flag("active").optional(),
  draft: flag("draft").optional(),
  critical: flag("critical").optional(),
  preferenceSettings: preferenceSettings.optional(),
  data: jsonObject.optional(),
  notificationGroupId: notificationGroupId.optional(),
  steps: steps.default([]),
});

/** PUT /v1/workflows/{workflowId}: every field optional; steps, when given, replace the steps. */
export const updateWorkflowBody = z.object({
  name: workflowName.optional(),
  description: text("description", 1000).optional(),
  tags: tags.optional(),
  identifier: text("identifier", 255).regex(IDENTIFIER, "identifier may contain letters, digits and _ . : - only").optional(),
  critical: flag("critical").optional(),
  preferenceSettings: preferenceSettings.optional(),
  data: jsonObject.optional(),
  notificationGroupId: notificationGroupId.optional(),
  steps: steps.optional(),
});

export const workflowStatusBody = z.object({ active: flag("active") });

export const workflowIdParam = z.object({ workflowId: z.string().min(1).max(512) });

export const listWorkflowsQuery = z.object({
  page: queryInt(0, 0, 1_000_000),
  limit: queryInt(10, 1, 100),
  query: z.string().max(255).optional(),
});

// Requests

function templateInit(value: StepInput["template"]): TemplateInit {
  const { content, ...rest } = value;
  return {
    type: stepTypeNamed(rest.type),
    ...(typeof content === "string" ? { content: { case: "text", value: content } } : {}),
    ...(Array.isArray(content)
      ? {
          content: {
            case: "blocks",
            value: {
              blocks: content.map((block) => ({
                type: block.type,
                content: block.content,
                ...(block.url !== undefined ? { url: block.url } : {}),
                ...(block.styles ? { textAlign: block.styles.textAlign } : {}),
              })),
            },
          },
        }
      : {}),
    ...(rest.contentType !== undefined ? { contentType: rest.contentType } : {}),
    ...(rest.subject !== undefined ? { subject: rest.subject } : {}),
    ...(rest.title !== undefined ? { title: rest.title } : {}),
    ...(rest.senderName !== undefined ? { senderName: rest.senderName } : {}),
    ...(rest.preheader !== undefined ? { preheader: rest.preheader } : {}),
    ...(rest.feedId ? { feedId: rest.feedId } : {}),
    ...(rest.layoutId ? { layoutId: rest.layoutId } : {}),
    ...(rest.cta ? { cta: ctaInit(rest.cta) } : {}),
    ...(rest.actor ? { actor: { type: rest.actor.type, ...(rest.actor.data ? { data: rest.actor.data } : {}) } } : {}),
    variables: templateVariablesInit(rest.variables ?? []),
  };
}

function ctaInit(value: NonNullable<StepInput["template"]["cta"]>): MessageInitShape<typeof workflowsV1.MessageCtaSchema> {
  const action = value.action;
  return {
    ...(value.type !== undefined ? { type: value.type } : {}),
    ...(value.data ? { data: value.data.url !== undefined ? { url: value.data.url } : {} } : {}),
    ...(action
      ? {
          action: {
            ...(action.status !== undefined ? { status: action.status } : {}),
            buttons: (action.buttons ?? []).map((button) => ({
              type: button.type,
              content: button.content,
              ...(button.resultContent !== undefined ? { resultContent: button.resultContent } : {}),
            })),
            ...(action.result
              ? {
                  result: {
                    ...(action.result.payload ? { payload: action.result.payload as MessageInitShape<typeof workflowsV1.ActionResultSchema>["payload"] } : {}),
                    ...(action.result.type !== undefined ? { type: action.result.type } : {}),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

function metadataInit(value: Metadata): MetadataInit {
  const init: MetadataInit = { type: value.type };
  if ("amount" in value && value.amount !== undefined) init.amount = value.amount;
  if ("unit" in value && value.unit !== undefined) init.unit = value.unit;
  if ("digestKey" in value && value.digestKey !== undefined) init.digestKey = value.digestKey;
  if ("backoff" in value && value.backoff !== undefined) init.backoff = value.backoff;
  if ("backoffAmount" in value && value.backoffAmount !== undefined) init.backoffAmount = value.backoffAmount;
  if ("backoffUnit" in value && value.backoffUnit !== undefined) init.backoffUnit = value.backoffUnit;
  if ("updateMode" in value && value.updateMode !== undefined) init.updateMode = value.updateMode;
  if ("delayPath" in value) init.delayPath = value.delayPath;
  if ("timed" in value && value.timed) {
    const timed = value.timed;
    init.timed = {
      ...timedDaysNamed(timed),
      monthDays: timed.monthDays ?? [],
      ...(timed.atTime !== undefined ? { atTime: timed.atTime } : {}),
      ...(timed.monthlyType !== undefined ? { monthlyType: timed.monthlyType } : {}),
    };
  }
  return init;
}

function stepInit(value: StepInput | VariantInput): StepInit {
  return {
    id: value._id ?? "",
    uuid: value.uuid ?? "",
    ...(value.name !== undefined ? { name: value.name } : {}),
    ...(value.active !== undefined ? { active: value.active } : {}),
    ...(value.shouldStopOnFail !== undefined ? { shouldStopOnFail: value.shouldStopOnFail } : {}),
    template: templateInit(value.template),
    filters: value.filters ?? [],
    ...("metadata" in value && value.metadata ? { metadata: metadataInit(value.metadata as Metadata) } : {}),
    ...(value.replyCallback ? { replyCallback: { ...value.replyCallback } } : {}),
    variants: "variants" in value && value.variants ? value.variants.map(stepInit) : [],
  };
}

export const preferencesInit = (value: z.output<typeof preferenceSettings>) => ({
  ...(value.email !== undefined ? { email: value.email } : {}),
  ...(value.sms !== undefined ? { sms: value.sms } : {}),
  ...(value.in_app !== undefined ? { inApp: value.in_app } : {}),
  ...(value.chat !== undefined ? { chat: value.chat } : {}),
  ...(value.push !== undefined ? { push: value.push } : {}),
});

export function createWorkflowRequestOf(body: z.output<typeof createWorkflowBody>): MessageInitShape<typeof workflowsV1.CreateWorkflowRequestSchema> {
  return {
    name: body.name,
    tags: body.tags ?? [],
    steps: body.steps.map(stepInit),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.active !== undefined ? { active: body.active } : {}),
    ...(body.draft !== undefined ? { draft: body.draft } : {}),
    ...(body.critical !== undefined ? { critical: body.critical } : {}),
    ...(body.preferenceSettings ? { preferenceSettings: preferencesInit(body.preferenceSettings) } : {}),
    ...(body.data ? { data: body.data as MessageInitShape<typeof workflowsV1.CreateWorkflowRequestSchema>["data"] } : {}),
    ...(body.notificationGroupId !== undefined ? { notificationGroupId: body.notificationGroupId } : {}),
    templateEngine: workflowsV1.TemplateEngine.HANDLEBARS,
  };
}

export function updateWorkflowRequestOf(
  workflowId: string,
  body: z.output<typeof updateWorkflowBody>,
): MessageInitShape<typeof workflowsV1.UpdateWorkflowRequestSchema> {
  return {
    workflowId,
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.tags ? { tags: { tags: body.tags } } : {}),
    ...(body.identifier !== undefined ? { identifier: body.identifier } : {}),
    ...(body.critical !== undefined ? { critical: body.critical } : {}),
    ...(body.preferenceSettings ? { preferenceSettings: preferencesInit(body.preferenceSettings) } : {}),
    ...(body.data ? { data: body.data as MessageInitShape<typeof workflowsV1.UpdateWorkflowRequestSchema>["data"] } : {}),
    ...(body.notificationGroupId !== undefined ? { notificationGroupId: body.notificationGroupId } : {}),
    ...(body.steps ? { steps: { steps: body.steps.map(stepInit) } } : {}),
  };
}

// Replies

function templateToJson(value: workflowsV1.MessageTemplate, workflow: workflowsV1.Workflow) {
  const { content } = value;
  return {
    _id: value.id,
    type: stepTypeName(value.type),
    ...(content.case === "text" ? { content: content.value } : {}),
    ...(content.case === "blocks"
      ? {
          content: content.value.blocks.map((block) => ({
            type: block.type,
            content: block.content,
            ...(block.url !== undefined ? { url: block.url } : {}),
            ...(block.textAlign !== undefined ? { styles: { textAlign: block.textAlign } } : {}),
          })),
        }
      : {}),
    ...(value.contentType !== undefined ? { contentType: value.contentType } : {}),
    ...(value.subject !== undefined ? { subject: value.subject } : {}),
    ...(value.title !== undefined ? { title: value.title } : {}),
    ...(value.senderName !== undefined ? { senderName: value.senderName } : {}),
    ...(value.preheader !== undefined ? { preheader: value.preheader } : {}),
    ...(value.feedId !== undefined ? { feedId: value.feedId, _feedId: value.feedId } : {}),
    ...(value.layoutId !== undefined ? { layoutId: value.layoutId } : {}),
    ...(value.cta ? { cta: ctaToJson(value.cta) } : {}),
    ...(value.actor ? { actor: { type: value.actor.type, data: value.actor.data ?? null } } : {}),
    variables: templateVariablesToJson(value.variables),
    _environmentId: workflow.environmentId,
    _organizationId: workflow.organizationId,
    _creatorId: workflow.creatorId,
  };
}

function ctaToJson(value: workflowsV1.MessageCta) {
  const action = value.action;
  return {
    ...(value.type !== undefined ? { type: value.type } : {}),
    ...(value.data ? { data: value.data.url !== undefined ? { url: value.data.url } : {} } : {}),
    ...(action
      ? {
          action: {
            ...(action.status !== undefined ? { status: action.status } : {}),
            buttons: action.buttons.map((button) => ({
              type: button.type,
              content: button.content,
              ...(button.resultContent !== undefined ? { resultContent: button.resultContent } : {}),
            })),
            ...(action.result
              ? {
                  result: {
                    ...(action.result.payload ? { payload: action.result.payload } : {}),
                    ...(action.result.type !== undefined ? { type: action.result.type } : {}),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

function metadataToJson(value: workflowsV1.StepMetadata) {
  const timed = value.timed;
  return {
    type: value.type,
    ...(value.amount !== undefined ? { amount: value.amount } : {}),
    ...(value.unit !== undefined ? { unit: value.unit } : {}),
    ...(value.digestKey !== undefined ? { digestKey: value.digestKey } : {}),
    ...(value.backoff !== undefined ? { backoff: value.backoff } : {}),
    ...(value.backoffAmount !== undefined ? { backoffAmount: value.backoffAmount } : {}),
    ...(value.backoffUnit !== undefined ? { backoffUnit: value.backoffUnit } : {}),
    ...(value.updateMode !== undefined ? { updateMode: value.updateMode } : {}),
    ...(value.delayPath !== undefined ? { delayPath: value.delayPath } : {}),
    ...(timed
      ? {
          timed: {
            ...(timed.atTime !== undefined ? { atTime: timed.atTime } : {}),
            ...timedDayNames(timed),
            monthDays: timed.monthDays,
            ...(timed.monthlyType !== undefined ? { monthlyType: timed.monthlyType } : {}),
          },
        }
      : {}),
  };
}

/** A NotificationStep (or a variant: `isVariant` leaves out `variants`), with Novu's _id = _templateId. */
function stepToJson(value: workflowsV1.Step, workflow: workflowsV1.Workflow, isVariant: boolean): Record<string, unknown> {
  return {
    _id: value.id,
    uuid: value.uuid,
    ...(value.name !== undefined ? { name: value.name } : {}),
    _templateId: value.id,
    active: value.active ?? true,
    ...(value.shouldStopOnFail !== undefined ? { shouldStopOnFail: value.shouldStopOnFail } : {}),
    ...(value.template ? { template: templateToJson(value.template, workflow) } : {}),
    filters: value.filters.map((filter) => ({
      isNegated: filter.isNegated,
      type: filter.type,
      value: filter.value,
      children: filter.children.map((child) => ({ field: child.field, value: child.value, operator: child.operator, on: child.on })),
    })),
    ...(value.parentId !== undefined ? { _parentId: value.parentId } : {}),
    ...(value.metadata ? { metadata: metadataToJson(value.metadata) } : {}),
    ...(value.replyCallback ? { replyCallback: { ...optionalReplyCallback(value.replyCallback) } } : {}),
    ...(isVariant ? {} : { variants: value.variants.map((one) => stepToJson(one, workflow, true)) }),
  };
}

const optionalReplyCallback = (value: workflowsV1.ReplyCallback) => ({
  ...(value.active !== undefined ? { active: value.active } : {}),
  ...(value.url !== undefined ? { url: value.url } : {}),
});

export function channelPreferencesToJson(value: workflowsV1.ChannelPreferences | undefined) {
  return {
    email: value?.email ?? true,
    sms: value?.sms ?? true,
    in_app: value?.inApp ?? true,
    chat: value?.chat ?? true,
    push: value?.push ?? true,
  };
}

export function notificationGroupToJson(value: workflowsV1.NotificationGroup) {
  return {
    _id: value.id,
    name: value.name,
    _environmentId: value.environmentId,
    _organizationId: value.organizationId,
    ...(value.parentId !== undefined ? { _parentId: value.parentId } : {}),
  };
}

/**
 * The spec's Workflow (what @novu/api's WorkflowResponse requires: deletedAt and deletedBy are
 * strings, "" while the workflow is live; no nulls where the SDK expects optional values).
 */
export function workflowToJson(workflow: workflowsV1.Workflow) {
  return {
    _id: workflow.id,
    name: workflow.name,
    description: workflow.description,
    active: workflow.active,
    draft: workflow.draft,
    preferenceSettings: channelPreferencesToJson(workflow.preferenceSettings),
    critical: workflow.critical,
    tags: workflow.tags,
    steps: workflow.steps.map((one) => stepToJson(one, workflow, false)),
    _organizationId: workflow.organizationId,
    _creatorId: workflow.creatorId,
    _environmentId: workflow.environmentId,
    triggers: [
      {
        type: "event",
        identifier: workflow.identifier,
        variables: workflow.variables.map((name) => ({ name })),
        subscriberVariables: workflow.subscriberVariables.map((name) => ({ name })),
      },
    ],
    slug: workflow.slug,
    _notificationGroupId: workflow.notificationGroupId,
    ...(workflow.notificationGroup ? { notificationGroup: notificationGroupToJson(workflow.notificationGroup) } : {}),
    ...(workflow.data ? { data: workflow.data } : {}),
    deleted: workflow.deleted,
    deletedAt: workflow.deletedAt ? timestampDate(workflow.deletedAt).toISOString() : "",
    deletedBy: "",
    createdAt: iso(workflow.createdAt),
    updatedAt: iso(workflow.updatedAt),
  };
}

// Shapes of the replies above, for the API description.

const stepFilterResponse = z.object({
  isNegated: z.boolean(),
  type: z.string(),
  value: z.string(),
  children: z.array(z.object({ field: z.string(), value: z.string(), operator: z.string(), on: z.string() })),
});

/** A step's fields; its template and metadata by the fields every one has (the rest as the step type makes them). */
const stepResponseFields = {
  _id: z.string(),
  uuid: z.string(),
  name: z.string().optional(),
  _templateId: z.string(),
  active: z.boolean(),
  shouldStopOnFail: z.boolean().optional(),
  template: z
    .looseObject({
      _id: z.string(),
      type: z.enum(STEP_TYPES),
      variables: templateVariablesResponse,
      _environmentId: z.string(),
      _organizationId: z.string(),
      _creatorId: z.string(),
    })
    .optional(),
  filters: z.array(stepFilterResponse),
  _parentId: z.string().optional(),
  metadata: z.looseObject({ type: z.string() }).optional(),
  replyCallback: z.object({ active: z.boolean().optional(), url: z.string().optional() }).optional(),
};

export const channelPreferencesResponse = z.object({ email: z.boolean(), sms: z.boolean(), in_app: z.boolean(), chat: z.boolean(), push: z.boolean() });

export const notificationGroupResponse = z
  .object({ _id: z.string(), name: z.string(), _environmentId: z.string(), _organizationId: z.string(), _parentId: z.string().optional() })
  .meta({ id: "NotificationGroup" });

/** What workflowToJson answers. */
export const workflowResponse = z
  .object({
    _id: z.string(),
    name: z.string(),
    description: z.string(),
    active: z.boolean(),
    draft: z.boolean(),
    preferenceSettings: channelPreferencesResponse,
    critical: z.boolean(),
    tags: z.array(z.string()),
    steps: z.array(z.object({ ...stepResponseFields, variants: z.array(z.object(stepResponseFields)) })),
    _organizationId: z.string(),
    _creatorId: z.string(),
    _environmentId: z.string(),
    triggers: z.array(
      z.object({
        type: z.literal("event"),
        identifier: z.string(),
        variables: z.array(z.object({ name: z.string() })),
        subscriberVariables: z.array(z.object({ name: z.string() })),
      }),
    ),
    slug: z.string(),
    _notificationGroupId: z.string(),
    notificationGroup: notificationGroupResponse.optional(),
    data: freeFormResponse.optional(),
    deleted: z.boolean(),
    deletedAt: z.union([isoDateResponse, z.literal("")]),
    deletedBy: z.string(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "Workflow" });

export const workflowPageResponse = offsetPageResponse(workflowResponse);

export function workflowPage(reply: workflowsV1.ListWorkflowsResponse, query: z.output<typeof listWorkflowsQuery>) {
  return offsetPage(reply.workflows.map(workflowToJson), query.page, query.limit, reply.totalCount, reply.hasMore);
}
