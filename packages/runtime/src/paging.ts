import { failedPrecondition, invalidField } from "./errors.js";

/**
 * A keyset page as fetched (up to limit + 1 rows, in walking order) → the page in display order
 * and its cursors: going forwards there is a next page when the fetch over-ran, and a previous
 * one when the request came from a cursor; backwards, the other way round.
 */
export function keysetPage<Row extends { id: string }>(fetched: Row[], limit: number, request: { after?: string | undefined; before?: string | undefined }) {
  const backwards = request.before !== undefined;
  const hasFurther = fetched.length > limit;
  const page = fetched.slice(0, limit);
  if (backwards) page.reverse();
  const first = page[0]?.id;
  const last = page.at(-1)?.id;
  const hasNext = backwards || hasFurther;
  const hasPrevious = backwards ? hasFurther : request.after !== undefined;
  return { page, cursors: { ...(hasNext && last ? { next: last } : {}), ...(hasPrevious && first ? { previous: first } : {}) } };
}

/**
 * One page of an offset-paged list: rows fetched from page × limit, or from `offset` when given
 * (up to limit + 1 of them, so the over-run says whether there is more) while the total is
 * counted, up to a cap, in parallel.
 */
export async function readOffsetPage<Row>(
  request: { page: number; limit: number; countCap: number; offset?: number | undefined },
  fetch: (offset: number) => Promise<Row[]>,
  count: (cap: number) => Promise<number>,
) {
  const { page, limit, countCap, offset } = request;
  if (page < 0) throw invalidField("page", "page must not be negative", page);
  if (offset !== undefined && offset < 0) throw invalidField("offset", "offset must not be negative", offset);
  const [rows, totalCount] = await Promise.all([fetch(offset ?? page * limit), count(countCap)]);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit, totalCount, totalCountCapped: totalCount >= countCap };
}

/** Novu's public cursor-paged lists (channel connections and endpoints): pages of 10 unless asked, at most 100. */
export const PUBLIC_PAGE = { fallback: 10, max: 100 } as const;

/** The page size a request asks for, checked: `fallback` when it names none (0), INVALID_ARGUMENT beyond `max`. */
export function pageLimit(limit: number, bounds: { fallback: number; max: number } = PUBLIC_PAGE): number {
  if (limit < 0 || limit > bounds.max) throw invalidField("limit", `limit must be between 1 and ${bounds.max}`, limit);
  return limit || bounds.fallback;
}

/**
 * The keyset read a cursor-paged list request asks for, checked: its page size, the cursor to walk
 * from (after or before, never both: 400, as Novu answers), the direction of the walk, and whether
 * the cursor's own row is included (Novu's includeCursor).
 */
export function keysetRead(
  request: { limit: number; after?: string | undefined; before?: string | undefined; descending: boolean; includeCursor?: boolean | undefined },
  bounds: { fallback: number; max: number } = PUBLIC_PAGE,
) {
  const limit = pageLimit(request.limit, bounds);
  if (request.after !== undefined && request.before !== undefined) {
    throw failedPrecondition("Cannot specify both 'after' and 'before' cursors at the same time");
  }
  return {
    limit,
    cursor: request.after ?? request.before,
    towardsLower: request.descending !== (request.before !== undefined),
    inclusive: request.includeCursor === true,
  };
}
