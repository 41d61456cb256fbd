import { valueAtPath } from "@notify/templates";

/**
 * Step filters (the spec's StepFilter / FieldFilterPart). A step runs when it has no filters or
 * when any of its filters passes; a filter combines its children with AND / OR and may be negated.
 * Unlike Novu, every operator of the spec is implemented and `isNegated` is honoured.
 */

export type FilterOperator =
  | "LARGER"
  | "SMALLER"
  | "LARGER_EQUAL"
  | "SMALLER_EQUAL"
  | "EQUAL"
  | "NOT_EQUAL"
  | "ALL_IN"
  | "ANY_IN"
  | "NOT_IN"
  | "BETWEEN"
  | "NOT_BETWEEN"
  | "LIKE"
  | "NOT_LIKE"
  | "IN";

export interface FieldFilterPart {
  field: string;
  value: string;
  operator: FilterOperator;
  on: "subscriber" | "payload" | "tenant";
}

export interface StepFilter {
  isNegated: boolean;
  type: string;
  value: "AND" | "OR";
  children: FieldFilterPart[];
}

/** What filters read: `subscriber.<field>`, `payload.<field>`, and for integration conditions `tenant.<field>`. */
export interface FilterContext {
  subscriber: Record<string, unknown>;
  payload: Record<string, unknown>;
  tenant?: Record<string, unknown> | undefined;
}

/** A list operand: a JSON array, or comma-separated items. */
function listOf(value: string): string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed.map(String);
    } catch {
      // not JSON: fall through to the comma form
    }
  }
  return trimmed
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

const itemsOf = (actual: unknown): string[] => (Array.isArray(actual) ? actual.map(String) : actual === undefined || actual === null ? [] : [String(actual)]);

/** A number, or a date's epoch milliseconds, so that ordering works on both. */
function comparable(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value === "boolean" || value === null || value === undefined || value === "") return undefined;
  const text = String(value).trim();
  const number = Number(text);
  if (!Number.isNaN(number)) return number;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : date;
}

/** The filter value read as the actual value's type (Novu coerces the same way). */
function equalTo(actual: unknown, value: string): boolean {
  if (typeof actual === "number") return actual === Number(value);
  if (typeof actual === "boolean") return actual === (value.trim().toLowerCase() === "true");
  if (actual === null || actual === undefined) return false;
  if (typeof actual === "object") return JSON.stringify(actual) === value;
  return String(actual) === value;
}

function compare(actual: unknown, value: string, test: (a: number, b: number) => boolean): boolean {
  const a = comparable(actual);
  const b = comparable(value);
  return a !== undefined && b !== undefined && test(a, b);
}

function between(actual: unknown, value: string): boolean {
  const [low, high] = listOf(value);
  if (low === undefined || high === undefined) return false;
  return compare(actual, low, (a, b) => a >= b) && compare(actual, high, (a, b) => a <= b);
}

/** SQL-style pattern: % any run, _ one character, case-insensitive; no wildcard means "contains". */
function like(actual: unknown, pattern: string): boolean {
  if (actual === null || actual === undefined || typeof actual === "object") return false;
  const text = String(actual);
  if (!/[%_]/.test(pattern)) return text.toLowerCase().includes(pattern.toLowerCase());
  const source = pattern
    .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    .replace(/%/g, ".*")
    .replace(/_/g, ".");
  return new RegExp(`^${source}$`, "is").test(text);
}

/** IN, as Novu defines it: the actual value (a list or a text) contains the filter value. */
function contains(actual: unknown, value: string): boolean {
  if (Array.isArray(actual)) return actual.some((item) => equalTo(item, value));
  if (typeof actual === "string") return actual.includes(value);
  return false;
}

export function evaluatePart(part: FieldFilterPart, context: FilterContext): boolean {
  const actual = valueAtPath(context[part.on], part.field);
  const { value } = part;
  switch (part.operator) {
    case "EQUAL":
      return equalTo(actual, value);
    case "NOT_EQUAL":
      return !equalTo(actual, value);
    case "LARGER":
      return compare(actual, value, (a, b) => a > b);
    case "SMALLER":
      return compare(actual, value, (a, b) => a < b);
    case "LARGER_EQUAL":
      return compare(actual, value, (a, b) => a >= b);
    case "SMALLER_EQUAL":
      return compare(actual, value, (a, b) => a <= b);
    case "IN":
      return contains(actual, value);
    case "NOT_IN":
      return !contains(actual, value);
    case "ANY_IN": {
      const items = new Set(itemsOf(actual));
      return listOf(value).some((item) => items.has(item));
    }
    case "ALL_IN": {
      const items = new Set(itemsOf(actual));
      const wanted = listOf(value);
      return wanted.length > 0 && wanted.every((item) => items.has(item));
    }
    case "BETWEEN":
      return between(actual, value);
    case "NOT_BETWEEN":
      return comparable(actual) !== undefined && !between(actual, value);
    case "LIKE":
      return like(actual, value);
    case "NOT_LIKE":
      return !like(actual, value);
  }
}

export function evaluateFilter(filter: StepFilter, context: FilterContext): boolean {
  const results = filter.children.map((part) => evaluatePart(part, context));
  const passed = results.length === 0 || (filter.value === "OR" ? results.some(Boolean) : results.every(Boolean));
  return filter.isNegated ? !passed : passed;
}

/** A step with no filters runs; otherwise it runs when any of its filters passes. */
export function stepPasses(filters: readonly StepFilter[] | undefined, context: FilterContext): boolean {
  return !filters || filters.length === 0 || filters.some((filter) => evaluateFilter(filter, context));
}
