import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { messagesV1 } from "@notify/proto";
import { contextScopeOf, holdsNul, invalidField, severityName, type Severity, type SeverityName } from "@notify/runtime";
import type { InboxFilter } from "./store.js";

export const MAX_TAG_GROUPS = 30;
export const MAX_TAGS_PER_GROUP = 30;
/** Values a data filter may compare, all keys together: each is a containment test per message. */
export const MAX_DATA_VALUES = 50;
/** Nested objects in a data filter: Novu's one level below the top, and one more to spare. */
const MAX_DATA_DEPTH = 3;
const MAX_TAG_LENGTH = 255;

/** Keys Novu refuses in a data filter: Mongo operators, paths, and what reaches a prototype. */
const REFUSED_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const refusedKey = (key: string) => key.startsWith("$") || key.startsWith(".") || REFUSED_KEYS.has(key) || holdsNul(key);

type Scalar = string | number | boolean | null;
const isScalar = (value: JsonValue): value is Scalar => value === null || typeof value !== "object";
const isObject = (value: JsonValue | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** `value` at `path` of an object, as JSON text: the document a message's data must contain. */
function nestedDocument(path: readonly string[], value: JsonValue): string {
  let document: JsonValue = value;
  for (let index = path.length - 1; index >= 0; index -= 1) document = { [path[index]!]: document };
  return JSON.stringify(document);
}

/**
 * A data filter as groups of documents: a message matches when, for every group, its data
 * contains one of the group's documents. A scalar matches equal values and arrays holding it,
 * so each scalar is two documents.
 */
export function dataGroups(filter: JsonObject): string[][] {
  const groups: string[][] = [];
  let values = 0;
  const alternatives = (field: string, path: readonly string[], options: readonly JsonValue[]): string[] =>
    options.flatMap((option) => {
      if (!isScalar(option)) throw invalidField(field, "data filter values must be strings, numbers, booleans or null", JSON.stringify(option));
      if (typeof option === "string" && holdsNul(option)) throw invalidField(field, "data filter values must not contain a NUL character (\\u0000)", option);
      values += 1;
      return [nestedDocument(path, option), nestedDocument(path, [option])];
    });
  const walk = (object: JsonObject, path: readonly string[]) => {
    for (const [key, value] of Object.entries(object)) {
      const at = [...path, key];
      const field = `data.${at.join(".")}`;
      if (refusedKey(key)) throw invalidField(field, "data filter keys must not start with $ or . nor name a prototype", key);
      if (Array.isArray(value)) groups.push(alternatives(field, at, value));
      else if (isObject(value) && Array.isArray(value["or"])) groups.push(alternatives(field, at, value["or"]));
      else if (isObject(value) && Array.isArray(value["and"])) {
        for (const group of value["and"]) {
          if (!isObject(group) || !Array.isArray(group["or"])) throw invalidField(field, "and must list {or: [...]} groups", JSON.stringify(group));
          groups.push(alternatives(field, at, group["or"]));
        }
      } else if (isObject(value)) {
        if (at.length >= MAX_DATA_DEPTH) throw invalidField(field, `data filters nest at most ${MAX_DATA_DEPTH} levels`, JSON.stringify(value));
        walk(value, at);
      } else groups.push(alternatives(field, at, [value]));
      if (values > MAX_DATA_VALUES) throw invalidField("data", `a data filter compares at most ${MAX_DATA_VALUES} values`, values);
    }
  };
  walk(filter, []);
  return groups;
}

function checkTags(groups: readonly messagesV1.TagGroup[]): string[][] {
  if (groups.length > MAX_TAG_GROUPS) throw invalidField("tags", `at most ${MAX_TAG_GROUPS} tag groups`, groups.length);
  return groups.map((group, index) => {
    if (group.anyOf.length === 0 || group.anyOf.length > MAX_TAGS_PER_GROUP) {
      throw invalidField(`tags.${index}`, `a tag group names between 1 and ${MAX_TAGS_PER_GROUP} tags`, group.anyOf.length);
    }
    const bad = group.anyOf.find((tag) => tag.length === 0 || tag.length > MAX_TAG_LENGTH || holdsNul(tag));
    if (bad !== undefined) throw invalidField(`tags.${index}`, `tags are 1 to ${MAX_TAG_LENGTH} characters without NUL`, bad);
    return [...group.anyOf];
  });
}

function checkSeverities(severities: readonly Severity[]): SeverityName[] | null {
  if (severities.length === 0) return null;
  return severities.map((severity) => {
    const name = severityName(severity);
    if (!name) throw invalidField("severity", "severity must be one of high, medium, low, none", severity);
    return name;
  });
}

/** An Inbox filter checked and ready for the store; an unset filter matches every message of a session without contexts. */
export function checkInboxFilter(filter: messagesV1.InboxFilter | undefined): InboxFilter {
  return {
    tagGroups: checkTags(filter?.tags ?? []),
    read: filter?.read ?? null,
    seen: filter?.seen ?? null,
    archived: filter?.archived ?? null,
    snoozed: filter?.snoozed ?? null,
    severities: checkSeverities(filter?.severities ?? []),
    dataGroups: filter?.data ? dataGroups(filter.data) : [],
    createdGte: filter?.createdGte ? timestampDate(filter.createdGte) : null,
    createdLte: filter?.createdLte ? timestampDate(filter.createdLte) : null,
    contextKeys: contextScopeOf({ contextKeys: filter?.contextKeys ?? [], anyContext: filter?.anyContext ?? false }),
    feedId: filter?.feedId ?? null,
  };
}
