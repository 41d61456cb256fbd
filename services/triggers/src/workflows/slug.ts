import { isObjectId } from "@notify/runtime";
import slugifyText from "@sindresorhus/slugify";

const BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** What kind of resource a slug's id is of, as Novu marks it. */
const SLUG_MARKS = { workflow: "_wf_", layout: "_lt_" } as const;
export type SlugKind = keyof typeof SLUG_MARKS;
const MAX_ID = (1n << 96n) - 1n;

/**
 * Novu's trigger-identifier slug, made by the library Novu's own is taken from: transliterated
 * ("Straße" → "strasse", Cyrillic, emoji), "&" as "and", camelCase split, contractions joined
 * ("User's" → "users"), lowercase words joined by "-". Empty (a name of only symbols) becomes "workflow".
 */
export const slugify = (name: string): string => slugifyText(name) || "workflow";

function encodeBase62(value: bigint): string {
  let out = "";
  for (let rest = value; rest > 0n; rest /= 62n) out = BASE62[Number(rest % 62n)] + out;
  return out || "0";
}

function decodeBase62(text: string): bigint | undefined {
  let value = 0n;
  for (const char of text) {
    const digit = BASE62.indexOf(char);
    if (digit < 0) return undefined;
    value = value * 62n + BigInt(digit);
    if (value > MAX_ID) return undefined;
  }
  return value;
}

/** `<slugified-name>_wf_<base62 of the 12 id bytes>` (`_lt_` for a layout): readable, yet it carries the id. */
export function resourceSlug(kind: SlugKind, name: string, id: string): string {
  return `${slugify(name)}${SLUG_MARKS[kind]}${encodeBase62(BigInt(`0x${id}`))}`;
}

export const workflowSlug = (name: string, id: string) => resourceSlug("workflow", name, id);

/** The id a slug of that kind of resource carries; undefined when `value` is not such a slug. */
export function idFromSlug(value: string, kind: SlugKind = "workflow"): string | undefined {
  const mark = value.lastIndexOf(SLUG_MARKS[kind]);
  if (mark < 0) return undefined;
  const encoded = value.slice(mark + SLUG_MARKS[kind].length);
  const decoded = encoded ? decodeBase62(encoded) : undefined;
  if (decoded === undefined) return undefined;
  const id = decoded.toString(16).padStart(24, "0");
  return isObjectId(id) ? id : undefined;
}

/** Where REST's {workflowId} may point: an internal id, a trigger identifier or a slug. */
export function workflowKeyOf(workflowId: string) {
  return { id: isObjectId(workflowId) ? workflowId : undefined, identifier: workflowId, slugId: idFromSlug(workflowId) };
}
