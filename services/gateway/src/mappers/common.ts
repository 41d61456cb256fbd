import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { z } from "zod";

/** ISO 8601 string of a proto timestamp; null when absent. */
export const isoOrNull = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : null);

export const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : new Date(0).toISOString());

// Shapes of answers, for the API description (route `response`s). Named shapes (`.meta({ id })`)
// are declared once, beside the mapper that makes them, and referenced wherever they are answered.

/** A time as the mappers write it (iso, isoOrNull). */
export const isoDateResponse = z.iso.datetime();

/** A link as Novu keeps and answers it: its url, and the window it opens in when one is set; undefined without a url. */
export const linkOf = (link: { url?: string | undefined; target?: string | undefined } | undefined) =>
  link?.url === undefined ? undefined : { url: link.url, ...(link.target !== undefined ? { target: link.target } : {}) };

/** A JSON object of the client's (data, payload, overrides): any keys. */
export const freeFormResponse = z.record(z.string(), z.unknown());

const count = z.int().min(0);

/** The workflows that use a resource (a layout, an environment variable), by name and trigger identifier. */
export function workflowUsageToJson(usage: { workflows: readonly { name: string; identifier: string }[] }) {
  return { workflows: usage.workflows.map((workflow) => ({ name: workflow.name, workflowId: workflow.identifier })) };
}

export const workflowUsageResponse = z.object({ workflows: z.array(z.object({ name: z.string(), workflowId: z.string() })) }).meta({ id: "WorkflowUsage" });

/** What offsetPage answers, with items of `item`'s shape. */
export const offsetPageResponse = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), page: count, pageSize: count, totalCount: count, hasMore: z.boolean() });

/** What cursorPage answers, with items of `item`'s shape. */
export const cursorPageResponse = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), next: z.string().nullable(), previous: z.string().nullable(), totalCount: count, totalCountCapped: z.boolean() });

/** Cursor-paged (v2) lists, unwrapped: `{data, next, previous, totalCount, totalCountCapped}`. */
export function cursorPage<T>(data: T[], reply: { next?: string | undefined; previous?: string | undefined; totalCount: number; totalCountCapped: boolean }) {
  return { data, next: reply.next ?? null, previous: reply.previous ?? null, totalCount: reply.totalCount, totalCountCapped: reply.totalCountCapped };
}

/** Paginated lists are returned unwrapped: `{data, page, pageSize, totalCount, hasMore}`. */
export function offsetPage<T>(data: T[], page: number, pageSize: number, totalCount: number, hasMore: boolean) {
  return { data, page, pageSize, totalCount, hasMore };
}

/** As offsetPage, around `data` that is JSON text already. */
export function offsetPageText(data: string, page: number, pageSize: number, totalCount: number, hasMore: boolean): string {
  return `{"data":${data},${JSON.stringify({ page, pageSize, totalCount, hasMore }).slice(1)}`;
}

// The closed sets of a StepFilter, shared by workflow step filters and integration conditions.
export const FILTER_TYPES = ["BOOLEAN", "TEXT", "DATE", "NUMBER", "STATEMENT", "LIST", "MULTI_LIST", "GROUP"] as const;
export const FILTER_VALUES = ["AND", "OR"] as const;
export const OPERATORS = [
  "LARGER",
  "SMALLER",
  "LARGER_EQUAL",
  "SMALLER_EQUAL",
  "EQUAL",
  "NOT_EQUAL",
  "ALL_IN",
  "ANY_IN",
  "NOT_IN",
  "BETWEEN",
  "NOT_BETWEEN",
  "LIKE",
  "NOT_LIKE",
  "IN",
] as const;
export const FILTER_ON = ["subscriber", "payload"] as const;
