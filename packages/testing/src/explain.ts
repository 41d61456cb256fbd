import type { PoolClient, Queryable } from "@notify/runtime";
import pgUtils from "pg/lib/utils.js";

/** What EXPLAIN (ANALYZE, FORMAT JSON) reports for one statement. */
export interface ExplainedStatement {
  Plan: Record<string, unknown>;
  "Planning Time": number;
  "Execution Time": number;
}

const preparedOn = new WeakMap<PoolClient, Set<string>>();

/**
 * A Queryable that runs each statement a store function makes under EXPLAIN (ANALYZE) and hands
 * its report to `onStatement`, answering one `{ count: 0 }` row. Unnamed statements run on
 * `ordinary`; a named one is prepared once on `prepared` (a connection like the one the service
 * runs it on) and explained as an EXECUTE, so the plan is the one the service's connection would
 * use. EXECUTE takes no bind parameters: the values travel as literals.
 */
export function explaining(ordinary: Queryable, prepared: PoolClient, onStatement: (report: ExplainedStatement) => void): Queryable {
  const names = preparedOn.get(prepared) ?? new Set<string>();
  preparedOn.set(prepared, names);
  const explain = async (db: Queryable, statement: string, values?: unknown[]) => {
    const { rows } = await db.query(`EXPLAIN (ANALYZE, SUMMARY ON, FORMAT JSON) ${statement}`, values);
    onStatement(rows[0]["QUERY PLAN"][0] as ExplainedStatement);
  };
  const query = async (statement: string | { name?: string; text: string; values?: unknown[] }, values?: unknown[]) => {
    if (typeof statement === "string" || statement.name === undefined) {
      await explain(ordinary, typeof statement === "string" ? statement : statement.text, typeof statement === "string" ? values : statement.values);
    } else {
      // A name of its own: pg prepares the statement's real name on this connection when a test
      // runs it directly.
      const name = `explained ${statement.name}`;
      if (!names.has(name)) {
        await prepared.query(`PREPARE "${name}" AS ${statement.text}`);
        names.add(name);
      }
      const literals = (statement.values ?? []).map((value) => {
        const text = pgUtils.prepareValue(value);
        return text === null ? "NULL" : prepared.escapeLiteral(String(text));
      });
      await explain(prepared, `EXECUTE "${name}"(${literals.join(", ")})`);
    }
    return { rows: [{ count: 0 }], rowCount: 0 };
  };
  return { query: query as Queryable["query"] };
}
