import { type layoutsV1, workflowsV1 } from "@notify/proto";
import { renderEmailBody } from "@notify/providers";
import { STEP_TYPES, StepType, stepTypeName, type StepTypeName } from "@notify/runtime";
import {
  emailHtml,
  renderContent,
  renderCta,
  renderer,
  renderJson,
  templateTexts,
  templateVariables,
  type Render,
  type RenderedContent,
} from "@notify/templates";
import { z } from "zod";
import { jsonObject } from "../validation.js";
import { freeFormResponse } from "./common.js";
import { profileShape, subscriberResponse } from "./subscribers.js";
import { flag, text, UNITS } from "./workflows.js";
import { controlValuesOf } from "./workflows-v2.js";

// Requests

/** A subscriber as previews take it (Novu's SubscriberResponseDtoOptional, the fields templates read). */
const previewSubscriber = z.object({
  _id: text("_id", 64).optional(),
  subscriberId: text("subscriberId", 255).optional(),
  ...profileShape,
  lastOnlineAt: text("lastOnlineAt").nullable().optional(),
  isOnline: flag("isOnline").nullable().optional(),
});

const contextEntry = z.union([text("context", 255), z.object({ id: text("id", 255), data: jsonObject.optional() })], {
  error: "context values must be a string or {id, data}",
});

/** Novu's PreviewPayloadDto. */
const previewPayload = z.object({
  subscriber: previewSubscriber.optional(),
  actor: previewSubscriber.optional(),
  payload: jsonObject.optional(),
  steps: jsonObject.optional(),
  context: z.record(z.string(), contextEntry, { error: "context must be an object" }).optional(),
  env: jsonObject.optional(),
});

export type PreviewPayload = z.output<typeof previewPayload>;

/** POST /v2/workflows/{workflowId}/step/{stepId}/preview (GeneratePreviewRequestDto). */
export const stepPreviewBody = z.object({ controlValues: jsonObject.optional(), previewPayload: previewPayload.optional() });

// The example payload

type Tree = Record<string, unknown>;

const isTree = (value: unknown): value is Tree => value !== null && typeof value === "object" && !Array.isArray(value);

/** Subscriber fields a template may name whose example can be text (others keep their types or are not examples at all). */
const SUBSCRIBER_TEXTS = new Set(["subscriberId", "firstName", "lastName", "email", "phone", "avatar", "locale", "timezone"]);
/** Roots the engine fills itself, so an example of them would not be what a send sees. */
const ENGINE_ROOTS = new Set(["step", "tenant", "branding", "preheader"]);

/** Sets `value` at `path` unless something is there; an example text in the way becomes an object. */
function place(tree: Tree, path: readonly string[], value: string): void {
  let node = tree;
  for (const [index, key] of path.entries()) {
    if (key === "__proto__") return;
    if (index === path.length - 1) {
      if (!Object.hasOwn(node, key)) node[key] = value;
      return;
    }
    const next = node[key];
    node = isTree(next) ? next : (node[key] = {});
  }
}

/** Where a variable's example goes in the preview payload (root first); undefined for what has no example. */
function examplePath(variable: string, engine: workflowsV1.TemplateEngine): string[] | undefined {
  const [root, ...rest] = variable.split(".");
  if (root === undefined || ENGINE_ROOTS.has(root)) return undefined;
  if (root === "subscriber" || root === "actor") {
    const [field] = rest;
    if (field === undefined || (rest.length === 1 && !SUBSCRIBER_TEXTS.has(field)) || (rest.length > 1 && field !== "data")) return undefined;
    return [root, ...rest];
  }
  if (root === "payload" || root === "steps") return rest.length > 0 ? [root, ...rest] : undefined;
  // v1 templates name payload keys at the top level; liquid templates read nothing there.
  return engine === workflowsV1.TemplateEngine.LIQUID ? undefined : ["payload", root, ...rest];
}

const own = (tree: Tree, key: string) => (Object.hasOwn(tree, key) ? tree[key] : undefined);

/** `given` laid over `base`: objects merge, anything else given wins; every key (even `__proto__`) stays data. */
function overlay(base: Tree, given: Tree): Tree {
  const keys = new Set([...Object.keys(base), ...Object.keys(given)]);
  return Object.fromEntries(
    [...keys].map((key) => {
      const [under, over] = [own(base, key), own(given, key)];
      if (!Object.hasOwn(given, key)) return [key, under];
      return [key, isTree(under) && isTree(over) ? overlay(under, over) : over];
    }),
  );
}

/**
 * The preview payload: each variable the step's templates read that the caller did not give, as its
 * own template text (`{{payload.name}}`, as Novu's examples show them), under what the caller gave.
 */
function examplePayload(step: workflowsV1.Step, given: PreviewPayload, engine: workflowsV1.TemplateEngine): PreviewPayload {
  return exampleOf(
    [...templateTexts(step, "")].map(([, template]) => template),
    given,
    engine,
  );
}

/** The preview payload for these template texts (a step's, a layout's): examples under what the caller gave. */
export function exampleOf(texts: readonly string[], given: PreviewPayload, engine: workflowsV1.TemplateEngine): PreviewPayload {
  const examples: Tree = { payload: {} };
  for (const template of texts) {
    let variables: string[];
    try {
      variables = templateVariables(template, engine);
    } catch {
      continue; // rendering reports the template that does not parse
    }
    for (const variable of variables) {
      const path = examplePath(variable, engine);
      if (path) place(examples, path, `{{${variable}}}`);
    }
  }
  return overlay(examples, given) as PreviewPayload;
}

// Rendering

const textOf = (content: RenderedContent) => (content.content.case === "text" ? content.content.value : "");

function inAppPreview(template: workflowsV1.MessageTemplate, render: Render) {
  const rendered = renderContent(template, render);
  const cta = template.cta ? renderCta(template.cta, render) : undefined;
  const label = (type: string) => cta?.action?.buttons.find((button) => button.type === type)?.content;
  const [primary, secondary] = [label("primary"), label("secondary")];
  const avatar = template.actor?.type === "system_custom" && template.actor.data ? render(template.actor.data) : undefined;
  return {
    body: textOf(rendered),
    ...(rendered.subject !== undefined ? { subject: rendered.subject } : {}),
    ...(avatar !== undefined ? { avatar } : {}),
    ...(primary !== undefined ? { primaryAction: { label: primary } } : {}),
    ...(secondary !== undefined ? { secondaryAction: { label: secondary } } : {}),
    ...(cta?.url !== undefined ? { redirect: { url: cta.url } } : {}),
    ...(template.data ? { data: renderJson(template.data, render) } : {}),
  };
}

/** The step's content rendered as a send of it would render it, in Novu's per-channel preview shape. */
async function channelPreview(step: workflowsV1.Step, render: Render, layout: layoutsV1.EmailLayoutContent | undefined): Promise<Record<string, unknown>> {
  const template = step.template;
  if (!template) return {};
  switch (template.type) {
    case StepType.IN_APP:
      return inAppPreview(template, render);
    case StepType.EMAIL: {
      const rendered = renderContent(template, render);
      const content = rendered.content;
      const body =
        content.case === "maily" || content.case === "text"
          ? await emailHtml(template, content, render, layout)
          : renderEmailBody(content.case === "blocks" ? content.value : "").html;
      return { subject: rendered.subject ?? "", body };
    }
    case StepType.PUSH: {
      const rendered = renderContent(template, render);
      return { subject: rendered.title ?? "", body: textOf(rendered) };
    }
    case StepType.SMS:
    case StepType.CHAT:
      return { body: textOf(renderContent(template, render)) };
    default:
      // Delay, digest and throttle render nothing: their preview is their controls.
      return controlValuesOf(step);
  }
}

/** What Novu's preview says of a template that does not render (its PreviewErrorDto). */
function previewError(error: unknown) {
  return {
    title: "Template error",
    message: error instanceof Error ? error.message : String(error),
    hint: "Fix the template's syntax or the helper it calls, then preview again.",
  };
}

/**
 * Novu's GeneratePreviewResponseDto for one step: its content rendered with the preview payload,
 * and that payload with examples of what the templates read; an email in its layout, `env` with the
 * environment's variables (a secret's masked). A template
 * that does not render is not a failed request: the preview is empty and says why, as Novu's is.
 */
export async function stepPreview(
  step: workflowsV1.Step,
  given: PreviewPayload,
  engine: workflowsV1.TemplateEngine,
  around: { layout?: layoutsV1.EmailLayoutContent | undefined; env?: Record<string, string> | undefined } = {},
) {
  const { layout, env } = around;
  const example = examplePayload(step, given, engine);
  const render = renderer(engine, {
    payload: example.payload ?? {},
    subscriber: example.subscriber ?? {},
    ...(example.actor ? { actor: example.actor } : {}),
    ...(example.steps ? { steps: example.steps } : {}),
    ...(env ? { env } : {}),
  });
  const type = stepTypeName(step.template?.type ?? StepType.UNSPECIFIED);
  // The catalogue keeps no step without a type; were there one, Novu's answer for what it cannot preview.
  if (type === undefined) return { result: { preview: {} }, previewPayloadExample: example };
  try {
    return { result: { type, preview: await channelPreview(step, render, layout) }, previewPayloadExample: example };
  } catch (error) {
    return { result: { type, preview: {}, error: previewError(error) }, previewPayloadExample: example };
  }
}

// Shapes of the replies above, for the API description.

const action = z.object({ label: z.string() });
const timeUnit = z.enum(UNITS);

const schedule = z.object({
  type: z.enum(["regular", "timed"]),
  amount: z.number().optional(),
  unit: timeUnit.optional(),
  digestKey: z.string().optional(),
  lookBackWindow: z.object({ amount: z.number(), unit: timeUnit }).optional(),
});

const previews = {
  in_app: z.object({
    subject: z.string().optional(),
    body: z.string(),
    avatar: z.string().optional(),
    primaryAction: action.optional(),
    secondaryAction: action.optional(),
    redirect: z.object({ url: z.string() }).optional(),
    data: freeFormResponse.optional(),
  }),
  email: z.object({ subject: z.string(), body: z.string() }),
  sms: z.object({ body: z.string() }),
  chat: z.object({ body: z.string() }),
  push: z.object({ subject: z.string(), body: z.string() }),
  delay: schedule,
  digest: schedule,
  throttle: z.object({
    type: z.enum(["fixed", "dynamic"]),
    amount: z.number().optional(),
    unit: z.string().optional(),
    dynamicKey: z.string().optional(),
    threshold: z.number().optional(),
    throttleKey: z.string().optional(),
  }),
} satisfies Record<StepTypeName, z.ZodType>;

const rendered = Object.entries(previews).map(([type, preview]) => z.object({ type: z.literal(type), preview }));

const failed = z.object({
  type: z.enum(STEP_TYPES),
  preview: z.object({}),
  error: z.object({ title: z.string(), message: z.string(), hint: z.string() }),
});

/** The subscriber and actor of a preview payload: the public Subscriber's profile fields, each optional, the last time online as given. */
const previewSubscriberResponse = subscriberResponse
  .pick({
    _id: true,
    subscriberId: true,
    firstName: true,
    lastName: true,
    email: true,
    phone: true,
    avatar: true,
    locale: true,
    timezone: true,
    isOnline: true,
    data: true,
  })
  .partial()
  .extend({ lastOnlineAt: z.string().nullable().optional() });

/** What stepPreview answers. */
export const stepPreviewResponse = z
  .object({
    // Rendered, not rendered (why in `error`), or a step of no type (an empty preview).
    result: z.union([...rendered, failed, z.object({ preview: z.object({}) })]),
    previewPayloadExample: z.object({
      payload: freeFormResponse,
      subscriber: previewSubscriberResponse.optional(),
      actor: previewSubscriberResponse.optional(),
      steps: freeFormResponse.optional(),
      context: z.record(z.string(), z.union([z.string(), z.object({ id: z.string(), data: freeFormResponse.optional() })])).optional(),
      env: freeFormResponse.optional(),
    }),
  })
  .meta({ id: "StepPreview" });
