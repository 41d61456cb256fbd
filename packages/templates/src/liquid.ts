import { Liquid } from "liquidjs";
import plural from "pluralize";
import { cachedParser } from "./cache.js";
import { field } from "./helpers.js";
import { boundedOutput } from "./limits.js";
import type { RenderContext } from "./render.js";

/**
 * Template rendering as Novu does it for workflows written through its v2 API and dashboard:
 * LiquidJS with Novu's four filters on top of Liquid's own, over `payload`, `subscriber`, `steps`
 * (what earlier steps produced, by stepId), `context` (the trigger's contexts by type) and `env`
 * (the environment's variables). Values print as they are (no HTML escaping);
 * objects and arrays print as JSON with single quotes, as Novu prints them. Unknown filters are
 * skipped and unknown variables print nothing, as with Novu's engine settings.
 */

/** A value as Novu prints an object or array: JSON with `'` for `"`, newlines escaped. */
function singleQuotedJson(value: unknown, spaces = 0): string {
  if (value === undefined || value === null) return "";
  if (typeof value !== "object") return String(value);
  return JSON.stringify(value, null, spaces).replace(/"/g, "'").replace(/\n/g, "\\n");
}

/** The text at a dotted path of an item (own properties only): objects as JSON, nothing for a missing value or `{}`. */
function textAt(item: unknown, keyPath: string): string {
  const value = keyPath.split(".").reduce<unknown>(field, item);
  if (value === undefined || value === null) return "";
  if (typeof value === "object") {
    const json = JSON.stringify(value);
    return json === "{}" ? "" : json;
  }
  return String(value);
}

/** The items of a list filter's input, each read at `keyPath` when one is given; none when it is not a list. */
const listed = (array: unknown, keyPath: string | undefined): unknown[] =>
  Array.isArray(array) ? (keyPath ? array.map((item) => (item !== null && typeof item === "object" ? textAt(item, keyPath) : "")) : array) : [];

/**
 * `{{ names | digest: 2, "name", ", " }}`: "A", "A and B" (two are always both named, as Novu
 * names them), "A, B and C" when all fit, else "A, B and 2 others".
 */
function digest(array: unknown, maxNames = 2, keyPath?: string, separator = ", "): string {
  const values = listed(array, keyPath);
  if (values.length === 0) return "";
  if (values.length === 1) return String(values[0]);
  if (maxNames >= values.length || values.length === 2) return `${values.slice(0, -1).join(separator)} and ${values.at(-1)}`;
  const others = values.length - maxNames;
  return `${values.slice(0, maxNames).join(separator)} and ${others} ${others === 1 ? "other" : "others"}`;
}

/** `{{ names | toSentence: "name", 2, "other" }}`: "A and B", "A, B, and C" when all fit, else "A, B, and 2 others". */
function toSentence(
  array: unknown,
  keyPath = "",
  limit = 2,
  overflowSuffix = "other",
  wordsConnector = ", ",
  twoWordsConnector = " and ",
  lastWordConnector = ", and ",
): string {
  const values = listed(array, keyPath);
  if (values.length === 0) return "";
  if (values.length === 1) return String(values[0]);
  if (values.length === 2) return `${values[0]}${twoWordsConnector}${values[1]}`;
  if (limit >= values.length) return `${values.slice(0, -1).join(wordsConnector)}${lastWordConnector}${values.at(-1)}`;
  const more = values.length - limit;
  // One name before the overflow reads "A and 3 others", not "A, and 3 others".
  const connector = limit === 1 ? twoWordsConnector : lastWordConnector;
  return `${values.slice(0, limit).join(wordsConnector)}${connector}${more} ${plural(overflowSuffix, more)}`;
}

/**
 * `{{ items | pluralize: "item" }}`: the count (of a list, an object's keys, or a number) and the
 * word in its number; nothing when there is nothing to count. Only the text "true" shows the count
 * once `showCount` is given: Novu compares with that text, so a Liquid `true` hides it too.
 */
function pluralize(item: unknown, singular = "", pluralForm = "", showCount: unknown = "true"): string {
  if (item === undefined || item === null) return "";
  let count: number;
  if (Array.isArray(item)) count = item.length;
  else if (typeof item === "object") count = Object.keys(item).length;
  else count = Number(item);
  if (Number.isNaN(count) || count <= 0) return "";
  const word = pluralForm ? (count === 1 ? singular : pluralForm) : plural(singular, count);
  return showCount === "true" ? `${count} ${word}` : word;
}

const liquid = new Liquid({
  outputEscape: (value: unknown) => singleQuotedJson(value),
  ownPropertyOnly: true,
  // A template is short, but a loop over a range can run long or grow large: both end the render
  // (its time limit is the caller's, from the job's rendering budget).
  memoryLimit: 10_000_000,
  // Partials come from these templates only, and there are none: by default `include`, `render`
  // and `layout` read files below the process's working directory, which would let whoever
  // writes a template (or a payload naming a partial) read the server's files.
  templates: {},
});
liquid.registerFilter("json", (value: unknown, spaces?: number) => singleQuotedJson(value, spaces));
liquid.registerFilter("digest", digest);
liquid.registerFilter("toSentence", toSentence);
liquid.registerFilter("pluralize", pluralize);

export function liquidData(context: RenderContext): Record<string, unknown> {
  return {
    payload: context.payload,
    subscriber: context.subscriber,
    steps: context.steps ?? {},
    env: context.env ?? {},
    ...(context.context ? { context: context.context } : {}),
  };
}

const parse = cachedParser((template) => liquid.parse(template));

/** Renders one template within `limitMs`; a template that does not parse, or renders too long or too much, throws (the step then fails). */
export function renderLiquid(template: string, data: Record<string, unknown>, limitMs: number): string {
  return template.includes("{") ? boundedOutput(liquid.renderSync(parse(template), data, { renderLimit: limitMs }) as string) : template;
}

/** The variables a template reads from outside it (not those it assigns or loops over), as dotted paths. */
export function liquidVariables(template: string): string[] {
  return liquid.globalVariableSegmentsSync(parse(template)).map((segments) => segments.join("."));
}
