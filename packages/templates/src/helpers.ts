import { UTCDate } from "@date-fns/utc";
import { format } from "date-fns";
import type Handlebars from "handlebars";

/**
 * Novu's handlebars helpers (libs/application-generic compile-template), with Novu's output for every
 * input Novu renders. Where Novu's own code misbehaves we do what it evidently meant, named at each
 * helper: blocks render in the caller's context, payload arrays are never reordered, and no helper
 * reads inherited properties (templates cannot either). Where Novu throws on a value of the wrong type
 * (`uppercase 42`, a null item in `groupBy`) the helpers render instead; where the template itself is
 * wrong (`equals` outside a block, a bad date-fns pattern) rendering throws and the step fails, as in
 * Novu. `i18n` is not here: Novu registers it only with its enterprise translations, which notify has
 * not, so a template using it fails as it does on Novu without them.
 */

type Options = Handlebars.HelperOptions;
type Body = (this: unknown, params: unknown[], options: Options) => unknown;

/** Handlebars passes its options last, after however many arguments the template gave: a missing
 * argument is then undefined, never the options object. */
function helper(body: Body): Handlebars.HelperDelegate {
  return function (this: unknown, ...args: unknown[]) {
    return body.call(this, args.slice(0, -1), args[args.length - 1] as Options);
  };
}

/** Only a block (`{{#gt a b}}…{{/gt}}`) has a body; inline and as a subexpression there is none. */
const isBlock = (options: Options) => typeof options.fn === "function";

/** The comparisons render their body or `{{else}}` as blocks, and are the boolean inline. Novu hands the
 * block a module-level `this`, which renders every variable inside it empty; the caller's context is
 * what a block means. */
function choose(context: unknown, condition: boolean, options: Options): unknown {
  if (!isBlock(options)) return condition;
  return condition ? options.fn(context) : options.inverse(context);
}

/** Template values under JavaScript's relational operators, as Novu's helpers apply them: two strings
 * compare by code units, anything else as numbers (so a missing value is never greater, smaller or
 * equal). The type is only for the compiler; the comparison is the operator's own. */
const operand = (value: unknown) => value as number;

/** An own property, the only kind templates may read. */
export const field = (item: unknown, key: unknown): unknown =>
  item !== null && typeof item === "object" && typeof key === "string" && Object.hasOwn(item, key) ? (item as Record<string, unknown>)[key] : undefined;

/** The case helpers' input: nothing for a missing value, as in Novu; other non-strings (on which Novu
 * throws) by their text. */
const text = (value: unknown) => (typeof value === "string" ? value : value === undefined || value === null ? "" : String(value));

export const novuHelpers: Record<string, Handlebars.HelperDelegate> = {
  json: helper(([value]) => JSON.stringify(value)),

  /** Loose equality (`5` equals `"5"`; `eq` is the strict one), and only as a block, as in Novu. */
  equals: helper(function (this: unknown, [a, b], options) {
    if (!isBlock(options)) throw new Error("equals is a block helper: {{#equals a b}}…{{else}}…{{/equals}}");
    // biome-ignore lint/suspicious/noDoubleEquals: Novu's equals is loose on purpose (eq is the strict one)
    return a == b ? options.fn(this) : options.inverse(this);
  }),

  /** Words are what lies between single spaces, as in Novu. */
  titlecase: helper(([value]) =>
    text(value)
      .split(" ")
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
      .join(" "),
  ),
  uppercase: helper(([value]) => text(value).toUpperCase()),
  lowercase: helper(([value]) => text(value).toLowerCase()),

  /** The word alone (templates print the count themselves); singular only for the number 1 itself. */
  pluralize: helper(([count, singular, plural]) => (count === 1 ? singular : plural)),

  /** date-fns patterns, printed in UTC whatever the server's zone (Novu prints in its server's zone).
   * Values are read as JavaScript reads them (a date-time without an offset in the server's zone).
   * A value Date.parse cannot read renders as given; a number is epoch milliseconds only when its
   * digits also parse (Novu's check), so timestamps render as given too. */
  dateFormat: helper(([date, pattern]) => {
    if (!date || !pattern || Number.isNaN(Date.parse(String(date)))) return date;
    return format(new UTCDate(typeof date === "number" ? date : String(date)), String(pattern));
  }),

  /** `{key, items}` per value of the property, in the order of an object's keys (integer-like keys
   * first), as Novu builds it; items whose value is missing or falsy are left out. */
  groupBy: helper(([list, property]) => {
    if (!Array.isArray(list)) return [];
    const groups = Object.create(null) as Record<string, unknown[]>;
    for (const item of list) {
      const key = field(item, property);
      if (key) (groups[String(key)] ??= []).push(item);
    }
    return Object.entries(groups).map(([key, items]) => ({ key, items }));
  }),

  /** The property's distinct values in first-seen order; missing or falsy ones become one undefined. */
  unique: helper(([list, property]) => {
    if (!Array.isArray(list)) return "";
    return [...new Set(list.map((item) => field(item, property) || undefined))];
  }),

  /** A sorted copy: Novu sorts the payload's own array, which would reorder it for every later
   * render of the same data. Without a property, JavaScript's default (string) order. */
  sortBy: helper(([list, property]) => {
    if (!Array.isArray(list)) return "";
    if (!property) return [...list].sort();
    return [...list].sort((a, b) => {
      const x = operand(field(a, property));
      const y = operand(field(b, property));
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }),

  /**
   * Novu's formatter: `decimalLength` (default 2, and 2 for 0 since Novu takes `||`; `"0"` gives none),
   * `thousandsSep` (`,`) and `decimalSep` (`.`). A value that is not a number renders as given, as
   * Novu's tests require (a lint fix to Number.isNaN made it print "NaN").
   */
  numberFormat: helper(([value], options) => {
    const parsed = Number.parseFloat(String(value));
    if (Number.isNaN(Number(value)) || Number.isNaN(parsed)) return value;
    const hash: Record<string, unknown> = options.hash;
    const decimalLength = hash["decimalLength"] || 2;
    const thousandsSep = String(hash["thousandsSep"] || ",");
    const decimalSep = String(hash["decimalSep"] || ".");
    const fixed = parsed.toFixed(Math.max(0, Number(decimalLength) | 0));
    const thousands = new RegExp(`\\d(?=(\\d{3})+${Number(decimalLength) > 0 ? "\\D" : "$"})`, "g");
    return fixed.replace(".", decimalSep).replace(thousands, `$&${thousandsSep}`);
  }),

  gt: helper(function (this: unknown, [a, b], options) {
    return choose(this, operand(a) > operand(b), options);
  }),
  gte: helper(function (this: unknown, [a, b], options) {
    return choose(this, operand(a) >= operand(b), options);
  }),
  lt: helper(function (this: unknown, [a, b], options) {
    return choose(this, operand(a) < operand(b), options);
  }),
  lte: helper(function (this: unknown, [a, b], options) {
    return choose(this, operand(a) <= operand(b), options);
  }),
  eq: helper(function (this: unknown, [a, b], options) {
    return choose(this, a === b, options);
  }),
  ne: helper(function (this: unknown, [a, b], options) {
    return choose(this, a !== b, options);
  }),
};
