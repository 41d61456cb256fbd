import { camelCase, kebabCase, pascalCase, snakeCase } from "change-case";
import deepmerge from "deepmerge";
import { objectOf } from "./overrides.js";

/** A case of field names. */
export type FieldCase = "camel" | "snake" | "pascal" | "kebab";

/**
 * How a provider's API spells its fields: a case, and the names that case does not give (Mailgun's
 * `o:tag`, say), by what the case makes of them. The known fields of a trigger's provider overrides
 * are respelled so before they are merged, as Novu respells them for each provider.
 */
export type Spelling = FieldCase | { case: FieldCase; names: Readonly<Record<string, string>> };

const CASES: Record<FieldCase, (name: string) => string> = { camel: camelCase, snake: snakeCase, pascal: pascalCase, kebab: kebabCase };

/** Every key of a JSON value, at any depth, respelled. */
function respelled(value: unknown, spell: (name: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => respelled(item, spell));
  const object = objectOf(value);
  if (!object) return value;
  return Object.fromEntries(Object.entries(object).map(([name, item]) => [spell(name), respelled(item, spell)]));
}

function spellerOf(spelling: Spelling): (name: string) => string {
  if (typeof spelling === "string") return CASES[spelling];
  const inCase = CASES[spelling.case];
  return (name) => {
    const cased = inCase(name);
    return Object.hasOwn(spelling.names, cased) ? spelling.names[cased]! : cased;
  };
}

/** What of a provider's request a trigger's provider overrides reach. */
export interface ProviderRequest<B extends object> {
  url: string;
  body: B;
  headers: Record<string, string>;
}

/** A header name as RFC 9110 and RFC 5322 allow it: a token. */
export const isHeaderName = (name: string) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name);
/**
 * A header value as HTTP clients send it: tabs, visible characters and Latin-1 only. A line break
 * would start a header of the caller's choosing; other control characters make the client refuse
 * the whole request.
 */
export const isHeaderValue = (value: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
/** Headers the HTTP client owns: a request that set them would be refused or framed wrong. */
const CLIENT_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "upgrade",
  "http2-settings",
  "expect",
  "te",
  "trailer",
]);

/** `_passthrough.headers` as a request can carry them: string or number values, under names the client does not own. */
function passthroughHeaders(given: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(objectOf(given) ?? {})) {
    if (!isHeaderName(name) || CLIENT_HEADERS.has(name.toLowerCase())) continue;
    if (typeof value !== "string" && typeof value !== "number") continue;
    const text = String(value);
    if (isHeaderValue(text)) headers[name.toLowerCase()] = text;
  }
  return headers;
}

/** The provider's headers with those given over them, whatever the case of either's names. */
function headersOver(own: Readonly<Record<string, string>>, given: Readonly<Record<string, string>>): Record<string, string> {
  const kept = Object.entries(own).filter(([name]) => !Object.hasOwn(given, name.toLowerCase()));
  return { ...Object.fromEntries(kept), ...given };
}

/** `url` with `_passthrough.query`'s string, number and boolean values set on it (left as it is when it is no URL: the call refuses it). */
function withQuery(url: string, given: unknown): string {
  const query = Object.entries(objectOf(given) ?? {}).filter(([, value]) => ["string", "number", "boolean"].includes(typeof value));
  if (query.length === 0 || !URL.canParse(url)) return url;
  const parsed = new URL(url);
  for (const [name, value] of query) parsed.searchParams.set(name, String(value));
  return parsed.toString();
}

/** Objects and arrays as JSON has them merge; anything else (a Buffer of an attachment, say) is taken whole. */
function isPlainData(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
}

/**
 * The body's fields under those a trigger's provider overrides add, as Novu merges them: the
 * known fields, respelled as the API spells them, then `_passthrough.body` over both. Nested
 * objects merge and arrays are joined, as Novu's merge does.
 */
export function mergedBody<B extends object>(body: B, providerData: Readonly<Record<string, unknown>> | undefined, spelling: Spelling): B {
  if (!providerData) return body;
  const { _passthrough, ...known } = providerData;
  const passthroughBody = objectOf(objectOf(_passthrough)?.["body"]) ?? {};
  return mergedLevels([body, respelled(known, spellerOf(spelling)) as object, passthroughBody]) as B;
}

/** Objects merged deeply, later over earlier, arrays joined: as Novu's providers merge overrides into their request. */
const mergedLevels = (levels: readonly object[]): Record<string, unknown> =>
  deepmerge.all(levels as object[], { isMergeableObject: isPlainData }) as Record<string, unknown>;

/**
 * Objects merged deeply, later over earlier, arrays item by item (lodash's merge): as Novu
 * merges the levels of a trigger's provider overrides (`overrides.providers.<id>`, then
 * `overrides.steps.<stepId>.providers.<id>`).
 */
export const mergedOverrideLevels = (levels: readonly object[]): Record<string, unknown> =>
  deepmerge.all(levels as object[], {
    isMergeableObject: isPlainData,
    arrayMerge: (target, source, options) => {
      const merged = [...target];
      source.forEach((item, index) => {
        const under = merged[index];
        merged[index] = index < target.length && isPlainData(under) && isPlainData(item) ? deepmerge(under, item, options) : item;
      });
      return merged;
    },
  }) as Record<string, unknown>;

/**
 * A provider's request with the trigger's provider overrides for it (`overrides.providers.<id>`,
 * then `overrides.steps.<stepId>.providers.<id>`): the body merged as `mergedBody` merges it,
 * `_passthrough.headers` over the provider's own headers and `_passthrough.query` added to its URL.
 */
export function withProviderData<B extends object>(
  request: ProviderRequest<B>,
  providerData: Readonly<Record<string, unknown>> | undefined,
  spelling: Spelling,
): ProviderRequest<B> {
  if (!providerData) return request;
  const passthrough = objectOf(providerData["_passthrough"]);
  return {
    url: withQuery(request.url, passthrough?.["query"]),
    body: mergedBody(request.body, providerData, spelling),
    headers: headersOver(request.headers, passthroughHeaders(passthrough?.["headers"])),
  };
}

/**
 * Form fields of a body whose values may be anything a merge left there: arrays repeat their
 * field, objects go as JSON, and absent values are left out.
 */
export function formFields(body: Readonly<Record<string, unknown>>): [string, string][] {
  const field = (name: string, value: unknown): [string, string][] => {
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value.flatMap((item) => field(name, item));
    return [[name, typeof value === "object" ? JSON.stringify(value) : String(value)]];
  };
  return Object.entries(body).flatMap(([name, value]) => field(name, value));
}
