import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { readOffsetPage } from "../src/paging.js";

/** Rows 0…total-1, fetched as a store fetches a page: up to limit + 1 from the offset. */
const rowsOf = (total: number, limit: number) => async (offset: number) =>
  Array.from({ length: Math.max(0, Math.min(limit + 1, total - offset)) }, (_, index) => offset + index);

describe("readOffsetPage", () => {
  it("cuts the over-run row and says there is more", async () => {
    const seen: number[] = [];
    const page = await readOffsetPage({ page: 1, limit: 3, countCap: 100 }, rowsOf(10, 3), async (cap) => {
      seen.push(cap);
      return 10;
    });
    expect(page).toEqual({ rows: [3, 4, 5], hasMore: true, totalCount: 10, totalCountCapped: false });
    expect(seen).toEqual([100]);
  });

  it("ends without more on the last page, and marks a count that reached the cap", async () => {
    const page = await readOffsetPage({ page: 3, limit: 3, countCap: 10 }, rowsOf(10, 3), async (cap) => cap);
    expect(page).toEqual({ rows: [9], hasMore: false, totalCount: 10, totalCountCapped: true });
  });

  it("refuses a negative page as an invalid field", async () => {
    const refused = await readOffsetPage({ page: -1, limit: 3, countCap: 10 }, rowsOf(10, 3), async () => 10).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
