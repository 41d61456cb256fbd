import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/** ISO 8601 string of a proto timestamp; null when absent. */
export const isoOrNull = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : null);

export const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : new Date(0).toISOString());

/** Cursor-paged (v2) lists, unwrapped: `{data, next, previous, totalCount, totalCountCapped}`. */
export function cursorPage<T>(
  data: T[],
  reply: { next?: string | undefined; previous?: string | undefined; totalCount: number; totalCountCapped: boolean },
) {
  return { data, next: reply.next ?? null, previous: reply.previous ?? null, totalCount: reply.totalCount, totalCountCapped: reply.totalCountCapped };
}

/** Paginated lists are returned unwrapped: `{data, page, pageSize, totalCount, hasMore}`. */
export function offsetPage<T>(data: T[], page: number, pageSize: number, totalCount: number, hasMore: boolean) {
  return { data, page, pageSize, totalCount, hasMore };
}
