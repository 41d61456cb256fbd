import { create } from "@bufbuild/protobuf";
import { layoutsV1, workflowsV1 } from "@notify/proto";
import { emailHtml, renderer } from "@notify/templates";
import { z } from "zod";
import { queryInt } from "../validation.js";
import { exampleOf } from "./step-preview.js";
import { freeFormResponse, iso, isoDateResponse } from "./common.js";
import { flag, oneOf, text } from "./workflows.js";

const { EditorType, LayoutOrder } = layoutsV1;

const EDITOR_TYPES = ["html", "block"] as const;

// Requests

export const layoutIdParam = z.object({ layoutId: text("layoutId", 255) });

/** POST /v2/layouts (CreateLayoutDto); `__source` says where Novu's dashboard made it, and changes nothing here. */
export const createLayoutBody = z.object({
  layoutId: text("layoutId", 255),
  name: text("name", 128),
  isTranslationEnabled: flag("isTranslationEnabled").optional(),
  __source: z.string().max(64).optional(),
});

/** The body is bounded by the layouts service, which knows what a trigger can carry. */
const emailControlValues = z.object({
  body: z.string({ error: "body must be a string" }),
  editorType: oneOf("editorType", EDITOR_TYPES).default("block"),
});

/** PUT /v2/layouts/{layoutId} (UpdateLayoutDto): `controlValues` null (or without an email) clears the content, absent keeps it. */
export const updateLayoutBody = z.object({
  name: text("name", 128),
  isTranslationEnabled: flag("isTranslationEnabled").optional(),
  controlValues: z.object({ email: emailControlValues.optional() }).nullable().optional(),
});

/** POST /v2/layouts/{layoutId}/duplicate (DuplicateLayoutDto). */
export const duplicateLayoutBody = z.object({
  name: text("name", 128),
  layoutId: text("layoutId", 255).optional(),
  isTranslationEnabled: flag("isTranslationEnabled").optional(),
});

/** GET /v2/layouts. */
export const listLayoutsQuery = z.object({
  limit: queryInt(50, 1, 100),
  offset: queryInt(0, 0, 1_000_000),
  orderBy: oneOf("orderBy", ["createdAt", "updatedAt", "name"]).default("createdAt"),
  orderDirection: oneOf("orderDirection", ["ASC", "DESC"]).default("DESC"),
  query: z.string().max(255).optional(),
});

/** POST /v2/layouts/{layoutId}/preview (LayoutPreviewRequestDto): the subscriber the layout is shown for, and content to show instead of the stored one. */
export const layoutPreviewBody = z.object({
  controlValues: z.object({ email: emailControlValues.optional() }).optional(),
  previewPayload: z.object({ subscriber: z.record(z.string(), z.unknown()).optional() }).optional(),
});

const ORDERS = { createdAt: LayoutOrder.CREATED_AT, updatedAt: LayoutOrder.UPDATED_AT, name: LayoutOrder.NAME } as const;

export const contentOf = (email: z.output<typeof emailControlValues>) =>
  create(layoutsV1.EmailLayoutContentSchema, { body: email.body, editorType: email.editorType === "html" ? EditorType.HTML : EditorType.BLOCK });

export function listLayoutsRequestOf(query: z.output<typeof listLayoutsQuery>) {
  return {
    limit: query.limit,
    offset: query.offset,
    orderBy: ORDERS[query.orderBy],
    ascending: query.orderDirection === "ASC",
    ...(query.query ? { query: query.query } : {}),
  };
}

export function updateLayoutRequestOf(layoutId: string, body: z.output<typeof updateLayoutBody>) {
  const values = body.controlValues;
  return {
    layoutId,
    name: body.name,
    isTranslationEnabled: body.isTranslationEnabled ?? false,
    content:
      values === undefined
        ? { case: undefined }
        : values?.email
          ? { case: "email" as const, value: contentOf(values.email) }
          : { case: "clearContent" as const, value: true },
  };
}

// Responses

/** What a layout's controls are: Novu's schema of its one control, the email's body and editor. */
const DATA_SCHEMA = {
  type: "object",
  properties: {
    email: {
      type: "object",
      properties: { body: { type: "string", minLength: 1 }, editorType: { type: "string", enum: ["block", "html"], default: "block" } },
      required: ["body"],
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};
const UI_SCHEMA = {
  group: "LAYOUT",
  properties: {
    email: {
      component: "LAYOUT_EMAIL",
      properties: { body: { component: "EMAIL_BODY", placeholder: "" }, editorType: { component: "EMAIL_EDITOR_SELECT", placeholder: "block" } },
    },
  },
};

export const editorTypeName = (type: layoutsV1.EditorType) => (type === EditorType.HTML ? "html" : "block");

/** A layout as Novu answers one (LayoutResponseDto); a list leaves out each layout's content, as Novu's does. */
export function layoutToJson(layout: layoutsV1.Layout, withContent = true) {
  return {
    _id: layout.id,
    layoutId: layout.identifier,
    slug: layout.slug,
    name: layout.name,
    isDefault: layout.isDefault,
    isTranslationEnabled: layout.isTranslationEnabled,
    createdAt: iso(layout.createdAt),
    updatedAt: iso(layout.updatedAt),
    origin: "novu-cloud",
    type: "BRIDGE",
    variables: {},
    controls: {
      dataSchema: DATA_SCHEMA,
      uiSchema: UI_SCHEMA,
      values: withContent && layout.email ? { email: { body: layout.email.body, editorType: editorTypeName(layout.email.editorType) } } : {},
    },
  };
}

export const layoutResponse = z
  .object({
    _id: z.string(),
    layoutId: z.string(),
    slug: z.string(),
    name: z.string(),
    isDefault: z.boolean(),
    isTranslationEnabled: z.boolean(),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
    origin: z.literal("novu-cloud"),
    type: z.literal("BRIDGE"),
    variables: freeFormResponse,
    controls: z.object({
      dataSchema: freeFormResponse,
      uiSchema: freeFormResponse,
      values: z.object({ email: z.object({ body: z.string(), editorType: z.enum(EDITOR_TYPES) }).optional() }),
    }),
  })
  .meta({ id: "Layout" });

export const layoutListResponse = z.object({ layouts: z.array(layoutResponse), totalCount: z.number().int() }).meta({ id: "LayoutList" });

export const layoutPreviewResponse = z
  .object({
    result: z.object({ type: z.literal("email"), preview: z.object({ body: z.string() }).optional() }),
    previewPayloadExample: freeFormResponse,
    schema: freeFormResponse.nullable(),
  })
  .meta({ id: "LayoutPreview" });

/** What a preview shows where the email goes, as Novu's does. */
const PREVIEW_PLACEHOLDER =
  '<table role="presentation" width="100%" style="border:2px dashed #d4d4d8;border-radius:8px"><tr><td style="padding:24px;text-align:center">' +
  '<p style="margin:0;color:#71717a">Dynamic placeholder content</p></td></tr></table>';

/**
 * The layout rendered for a subscriber, with a placeholder where the email goes, the way a send
 * renders it (sanitized as v2 emails are). A layout that does not render previews nothing, as in Novu.
 */
export async function layoutPreview(layout: layoutsV1.EmailLayoutContent | undefined, subscriber: Record<string, unknown>, env: Record<string, string>) {
  const { LIQUID } = workflowsV1.TemplateEngine;
  // The subscriber fields the layout reads that were not given show as their own variables, as in Novu.
  const example = exampleOf(layout ? [layout.body] : [], { subscriber }, LIQUID);
  const previewPayloadExample = { subscriber: example.subscriber ?? {} };
  if (!layout) return { result: { type: "email" as const }, previewPayloadExample, schema: null };
  try {
    const render = renderer(LIQUID, { payload: {}, subscriber: previewPayloadExample.subscriber, env });
    const template = create(workflowsV1.MessageTemplateSchema, {});
    const body = await emailHtml(template, { case: "text", value: PREVIEW_PLACEHOLDER }, render, layout);
    return { result: { type: "email" as const, preview: { body } }, previewPayloadExample, schema: null };
  } catch {
    return { result: { type: "email" as const }, previewPayloadExample: {}, schema: null };
  }
}
