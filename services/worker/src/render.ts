import Handlebars from "handlebars";

/**
 * Template rendering for v1 workflows, as Novu does it: payload keys at the top level
 * (`{{firstName}}`) and, unlike Novu, also under `payload.` (`{{payload.firstName}}`), next to
 * `subscriber`, `actor`, `tenant` and `step`, which win over payload keys of the same name.
 * Handlebars ≥ 4.6 refuses prototype access unless allowed; we never allow it.
 */
const handlebars = Handlebars.create();

const asDate = (value: unknown) => new Date(typeof value === "number" || typeof value === "string" ? value : String(value));
const pad = (value: number, size = 2) => String(value).padStart(size, "0");

/** A small date formatter for the tokens templates use: yyyy MM dd HH mm ss (UTC). */
function formatDate(value: unknown, format: unknown): string {
  const date = asDate(value);
  if (Number.isNaN(date.getTime())) return "";
  if (typeof format !== "string") return date.toISOString();
  return format.replace(/yyyy|MM|dd|HH|mm|ss/g, (token) => {
    switch (token) {
      case "yyyy":
        return String(date.getUTCFullYear());
      case "MM":
        return pad(date.getUTCMonth() + 1);
      case "dd":
        return pad(date.getUTCDate());
      case "HH":
        return pad(date.getUTCHours());
      case "mm":
        return pad(date.getUTCMinutes());
      default:
        return pad(date.getUTCSeconds());
    }
  });
}

const titlecase = (value: unknown) => String(value ?? "").toLowerCase().replace(/(^|\s)\S/g, (letter) => letter.toUpperCase());
const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const field = (item: unknown, key: unknown) => (item !== null && typeof item === "object" && typeof key === "string" && Object.hasOwn(item, key) ? (item as Record<string, unknown>)[key] : undefined);

const helpers: Record<string, Handlebars.HelperDelegate> = {
  json: (value: unknown) => JSON.stringify(value),
  equals(this: unknown, a: unknown, b: unknown, options: Handlebars.HelperOptions) {
    return a === b ? options.fn(this) : options.inverse(this);
  },
  titlecase,
  uppercase: (value: unknown) => String(value ?? "").toUpperCase(),
  lowercase: (value: unknown) => String(value ?? "").toLowerCase(),
  pluralize: (count: unknown, singular: unknown, plural: unknown) => `${String(count)} ${Number(count) === 1 ? String(singular) : String(plural)}`,
  dateFormat: formatDate,
  unique: (list: unknown, key: unknown) => [...new Set(arrayOf(list).map((item) => (typeof key === "string" ? field(item, key) : item)))],
  groupBy: (list: unknown, key: unknown) => {
    const groups = new Map<unknown, unknown[]>();
    for (const item of arrayOf(list)) groups.set(field(item, key), [...(groups.get(field(item, key)) ?? []), item]);
    return [...groups].map(([groupKey, items]) => ({ key: groupKey, items }));
  },
  sortBy: (list: unknown, key: unknown) =>
    [...arrayOf(list)].sort((a, b) => String(field(a, key) ?? "").localeCompare(String(field(b, key) ?? ""))),
  numberFormat: (value: unknown, decimals: unknown) =>
    Number(value).toLocaleString("en-US", typeof decimals === "number" ? { minimumFractionDigits: decimals, maximumFractionDigits: decimals } : {}),
  gt: (a: unknown, b: unknown) => Number(a) > Number(b),
  gte: (a: unknown, b: unknown) => Number(a) >= Number(b),
  lt: (a: unknown, b: unknown) => Number(a) < Number(b),
  lte: (a: unknown, b: unknown) => Number(a) <= Number(b),
  eq: (a: unknown, b: unknown) => a === b,
  ne: (a: unknown, b: unknown) => a !== b,
};
for (const [name, helper] of Object.entries(helpers)) handlebars.registerHelper(name, helper);

export interface RenderContext {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
  actor?: Record<string, unknown> | undefined;
  tenant?: Record<string, unknown> | undefined;
  step?: Record<string, unknown> | undefined;
}

export function templateData(context: RenderContext): Record<string, unknown> {
  return {
    ...context.payload,
    payload: context.payload,
    subscriber: context.subscriber,
    ...(context.actor ? { actor: context.actor } : {}),
    ...(context.tenant ? { tenant: context.tenant } : {}),
    ...(context.step ? { step: context.step } : {}),
  };
}

const compiled = new Map<string, HandlebarsTemplateDelegate>();
const MAX_CACHED = 1_000;

function compile(template: string): HandlebarsTemplateDelegate {
  const cached = compiled.get(template);
  if (cached) return cached;
  const delegate = handlebars.compile(template, { strict: false });
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(template, delegate);
  return delegate;
}

/** Renders one template; a template that does not compile throws (the step then fails). */
export function render(template: string, data: Record<string, unknown>): string {
  if (!template.includes("{{")) return template;
  return compile(template)(data).replace(/&#x27;/g, "'");
}
