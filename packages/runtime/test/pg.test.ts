import { afterAll, describe, expect, it } from "vitest";
import { createPool, textArray } from "../src/index.js";

const pool = createPool(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", 1);
afterAll(() => pool.end());

describe("textArray", () => {
  it("reaches the database as the same strings, whatever they hold", async () => {
    const values = ["plain", "", "with space", 'a "quoted" word', "back\\slash", '\\"', "comma,brace{}", "NULL", "ünïcødé ✓", "line\nbreak\ttab"];
    const { rows } = await pool.query<{ values: string[] }>("SELECT $1::text[] AS values", [textArray(values)]);
    expect(rows[0]!.values).toEqual(values);
  });

  it("sends an empty list as an empty array", async () => {
    const { rows } = await pool.query<{ n: number }>("SELECT cardinality($1::text[]) AS n", [textArray([])]);
    expect(rows[0]!.n).toBe(0);
  });
});
