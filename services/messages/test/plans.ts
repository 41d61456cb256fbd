import type { Queryable } from "@notify/runtime";
import { explaining } from "@notify/testing";
import type { Fixture } from "./fixtures.js";

/** A node of an EXPLAIN (FORMAT JSON) plan, with the fields these checks read. */
export interface PlanNode {
  [field: string]: unknown;
  "Node Type": string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

/**
 * The plan of one store call, as Postgres ran it (a prepared read as on the service's
 * prepared-read pool); a call of several statements answers the last one's.
 */
export function planner(fixture: Fixture) {
  return async (call: (db: Queryable) => Promise<unknown>): Promise<{ plan: PlanNode }> => {
    let plan: PlanNode | undefined;
    const client = await fixture.preparedReads.connect();
    try {
      await call(explaining(fixture.pool, client, (report) => (plan = report.Plan as PlanNode)));
    } finally {
      client.release();
    }
    return { plan: plan! };
  };
}

const SCANS = new Set(["Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan"]);

/** Rows a plan read from tables or indexes, including those it read and then filtered out. */
export function rowsRead(plan: PlanNode): number {
  const children = plan.Plans ?? [];
  const own = SCANS.has(plan["Node Type"]) ? plan["Actual Rows"] * plan["Actual Loops"] + (plan["Rows Removed by Filter"] ?? 0) : 0;
  return own + children.reduce((sum, child) => sum + rowsRead(child), 0);
}

/** The first node of a type, depth first. */
export const nodeOf = (plan: PlanNode, type: string): PlanNode | undefined =>
  plan["Node Type"] === type ? plan : (plan.Plans ?? []).map((child) => nodeOf(child, type)).find(Boolean);

export const hasSort = (plan: PlanNode): boolean => plan["Node Type"] === "Sort" || (plan.Plans ?? []).some(hasSort);
