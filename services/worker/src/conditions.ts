import jsonLogic, { type RulesLogic } from "json-logic-js";

/**
 * Novu's step conditions (the `skip` control of v2 steps): a JSON Logic rule over `payload`,
 * `subscriber` and `steps`; the step runs only when the rule holds. The operators are JSON Logic's
 * with the ones Novu's dashboard writes added and the comparisons made as Novu makes them: two
 * booleans (or "true"/"false") compare as booleans, two numbers (or numeric texts) as numbers, two
 * dates as instants; anything else is not ordered and only equal to itself.
 */

type Comparable = number | string | boolean;

const asBoolean = (value: unknown): boolean | undefined =>
  typeof value === "boolean" ? value : value === "true" ? true : value === "false" ? false : undefined;

/** The two values as Novu compares them, or undefined when they cannot be compared. */
function comparable(a: unknown, b: unknown): [Comparable, Comparable] | undefined {
  const [booleanA, booleanB] = [asBoolean(a), asBoolean(b)];
  if (booleanA !== undefined && booleanB !== undefined) return [booleanA, booleanB];
  const [numberA, numberB] = [Number(a), Number(b)];
  if (!Number.isNaN(numberA) && !Number.isNaN(numberB)) return [numberA, numberB];
  if (typeof a === "string" && typeof b === "string") {
    const [timeA, timeB] = [Date.parse(a), Date.parse(b)];
    if (!Number.isNaN(timeA) && !Number.isNaN(timeB)) return [timeA, timeB];
  }
  return undefined;
}

/** Equal as compared values, else the same value. */
function equal(a: unknown, b: unknown): boolean {
  const pair = comparable(a, b);
  return pair ? pair[0] === pair[1] : a === b;
}

const ordered = (holds: (a: Comparable, b: Comparable) => boolean) => (a: unknown, b: unknown) => {
  const pair = comparable(a, b);
  return pair !== undefined && holds(pair[0], pair[1]);
};

const textual = (holds: (input: string, value: string) => boolean) => (input: unknown, value: unknown) =>
  typeof input === "string" && typeof value === "string" && holds(input, value);

const range = (holds: (input: number, min: number, max: number) => boolean) => (input: unknown, bounds: unknown) =>
  typeof input === "number" && Array.isArray(bounds) && typeof bounds[0] === "number" && typeof bounds[1] === "number" && holds(input, bounds[0], bounds[1]);

const UNITS = ["minutes", "hours", "days", "weeks", "months", "years"] as const;
type Unit = (typeof UNITS)[number];

/** `{amount, unit}` before now, by the calendar (months and years as the calendar has them). */
function ago(relative: unknown, now: Date): Date | undefined {
  if (relative === null || typeof relative !== "object") return undefined;
  const { amount, unit } = relative as { amount?: unknown; unit?: unknown };
  if (typeof amount !== "number" || amount <= 0 || !UNITS.includes(unit as Unit)) return undefined;
  const date = new Date(now);
  if (unit === "minutes") date.setMinutes(date.getMinutes() - amount);
  if (unit === "hours") date.setHours(date.getHours() - amount);
  if (unit === "days") date.setDate(date.getDate() - amount);
  if (unit === "weeks") date.setDate(date.getDate() - amount * 7);
  if (unit === "months") date.setMonth(date.getMonth() - amount);
  if (unit === "years") date.setFullYear(date.getFullYear() - amount);
  return date;
}

const DAY_MS = 86_400_000;
/** How near `exactlyXAgo` has to be: a minute for minutes, an hour for hours, a week for years, else a day. */
const TOLERANCE_MS: Record<Unit, number> = { minutes: 60_000, hours: 3_600_000, days: DAY_MS, weeks: DAY_MS, months: DAY_MS, years: 7 * DAY_MS };

/** A relative-date operator: the input date against `{amount, unit}` ago (false when either is not one). */
const relative = (holds: (input: number, target: number, now: number, unit: Unit) => boolean) => (input: unknown, value: unknown) => {
  const now = new Date();
  const target = ago(value, now);
  const time = typeof input === "string" || typeof input === "number" ? new Date(input).getTime() : Number.NaN;
  return target !== undefined && !Number.isNaN(time) && holds(time, target.getTime(), now.getTime(), (value as { unit: Unit }).unit);
};

for (const name of ["<", ">", "<=", ">=", "==", "!="]) jsonLogic.rm_operation(name);
const OPERATIONS: Record<string, (...args: never[]) => boolean> = {
  "<": ordered((a, b) => a < b),
  ">": ordered((a, b) => a > b),
  // The three-argument form is "between": a <= b <= c.
  "<=": (a: unknown, b: unknown, c?: unknown) =>
    c === undefined ? ordered((x, y) => x <= y)(a, b) : ordered((x, y) => x <= y)(a, b) && ordered((x, y) => x <= y)(b, c),
  ">=": ordered((a, b) => a >= b),
  "==": equal,
  "!=": (a: unknown, b: unknown) => !equal(a, b),
  "=": equal,
  startsWith: textual((input, value) => input.startsWith(value)),
  endsWith: textual((input, value) => input.endsWith(value)),
  contains: textual((input, value) => input.includes(value)),
  doesNotContain: textual((input, value) => !input.includes(value)),
  doesNotBeginWith: textual((input, value) => !input.startsWith(value)),
  doesNotEndWith: textual((input, value) => !input.endsWith(value)),
  null: (input: unknown) => input === null,
  notNull: (input: unknown) => input !== null,
  notIn: (input: unknown, list: unknown) => Array.isArray(list) && !list.includes(input),
  between: range((input, min, max) => input >= min && input <= max),
  notBetween: range((input, min, max) => input < min || input > max),
  moreThanXAgo: relative((input, target) => input < target),
  lessThanXAgo: relative((input, target) => input >= target),
  withinLast: relative((input, target, now) => input >= target && input <= now),
  notWithinLast: relative((input, target) => input < target),
  exactlyXAgo: relative((input, target, _now, unit) => Math.abs(input - target) <= TOLERANCE_MS[unit]),
};
// JSON Logic's `log` prints its value to the console and answers it: a tenant's rule would write
// payload and subscriber data to the worker's output, outside its structured log. It only answers it.
jsonLogic.add_operation("log", (value: unknown) => value);
for (const [name, operation] of Object.entries(OPERATIONS)) jsonLogic.add_operation(name, operation);

/** What a step's conditions read. */
export interface ConditionData {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
  steps: Record<string, unknown>;
  env: Record<string, unknown>;
}

/** Whether a step with these conditions runs: no conditions, or a rule that holds (truthy, as JSON Logic reads it). */
export function conditionsHold(conditions: Record<string, unknown> | undefined, data: ConditionData): boolean {
  if (!conditions || Object.keys(conditions).length === 0) return true;
  return jsonLogic.truthy(jsonLogic.apply(conditions as RulesLogic, data));
}

/**
 * Whether a topic subscription's condition lets a workflow reach its subscriber: Novu reads only
 * `true` as yes, any other answer as no.
 */
export function subscriptionConditionHolds(condition: Record<string, unknown>, data: Record<string, unknown>): boolean {
  return jsonLogic.apply(condition as RulesLogic, data) === true;
}
