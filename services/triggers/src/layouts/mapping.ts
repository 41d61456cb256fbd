import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { layoutsV1 } from "@notify/proto";
import { resourceSlug } from "../workflows/slug.js";
import type { LayoutContentColumns, LayoutRow } from "./store.js";

const { EditorType } = layoutsV1;

export function layoutFromRow(row: LayoutRow): layoutsV1.Layout {
  return create(layoutsV1.LayoutSchema, {
    id: row.id,
    identifier: row.identifier,
    name: row.name,
    slug: resourceSlug("layout", row.name, row.id),
    isDefault: row.is_default,
    isTranslationEnabled: row.is_translation_enabled,
    ...(row.email_body !== null ? { email: { body: row.email_body, editorType: row.email_editor_type === "html" ? EditorType.HTML : EditorType.BLOCK } } : {}),
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

export const contentColumns = (content: { body: string; editorType: layoutsV1.EditorType }): LayoutContentColumns => ({
  email_body: content.body,
  email_editor_type: content.editorType === EditorType.HTML ? "html" : "block",
});
