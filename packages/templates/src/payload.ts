import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { commonV1 } from "@notify/proto";

/** Reads a dotted path (`address.city`, `tags.0`) without touching prototypes. */
export function valueAtPath(source: unknown, path: string): unknown {
  let current = source;
  for (const key of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/**
 * The date a scheduled delay waits for: the payload's value at `delayPath`, a date text or a
 * time in milliseconds; undefined when it is missing or no date. The trigger is refused without
 * one, and the worker waits until it.
 */
export function scheduledDate(payload: unknown, delayPath: string | undefined): Date | undefined {
  const value = delayPath ? valueAtPath(payload, delayPath) : undefined;
  const at = typeof value === "string" || typeof value === "number" ? new Date(value) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
}

/** What the engine gives a v1 template itself: a variable under one is never asked of the payload (Novu's list). */
const SYSTEM_ROOTS = new Set(["subscriber", "step", "branding", "tenant", "preheader", "actor"]);
const isSystemVariable = (name: string) => SYSTEM_ROOTS.has(name.split(".")[0]!);

/** How Novu names the value a variable of each type asks for, in its refusal. */
const ASKED_AS: Record<string, string> = { String: "Value", Array: "Array", Boolean: "Boolean" };

function holdsType(type: string, value: unknown): boolean {
  if (type === "Array") return Array.isArray(value);
  if (type === "Boolean") return typeof value === "boolean";
  if (type === "String") return typeof value === "string" || typeof value === "number";
  return value !== undefined && value !== null;
}

/**
 * The required variables the payload lacks, or holds as another kind of value than their type
 * asks (a String takes a text or a number), each named as Novu's refusal names it: `path (Value)`.
 * Defaults do not stand in here: a required variable is one the caller must give, as in Novu.
 */
export function missingRequiredVariables(variables: readonly commonV1.TemplateVariable[], payloadAt: (path: string) => unknown): string[] {
  return variables.flatMap((variable) =>
    variable.required && !isSystemVariable(variable.name) && !holdsType(variable.type, payloadAt(variable.name))
      ? [`${variable.name} (${ASKED_AS[variable.type] ?? variable.type})`]
      : [],
  );
}

/** Novu's refusal of a payload without the variables its templates require. */
export const missingVariablesMessage = (missing: readonly string[]) => `payload is missing required key(s) and type(s): ${missing.join(", ")}`;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Sets an own key, `__proto__` included, as JSON.parse would. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The payload the variables' default values make, their dotted names nested (`order.id` sets
 * `{order: {id}}`); an empty text or null is no default, as in Novu.
 */
export function variableDefaults(variables: readonly commonV1.TemplateVariable[]): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const { name, defaultValue: given } of variables) {
    const defaultValue = given && toJson(ValueSchema, given);
    if (defaultValue === undefined || defaultValue === null || defaultValue === "" || isSystemVariable(name)) continue;
    const keys = name.split(".");
    let target = defaults;
    for (const key of keys.slice(0, -1)) {
      const next = Object.hasOwn(target, key) ? target[key] : undefined;
      if (isPlainObject(next)) target = next;
      else {
        const created: Record<string, unknown> = {};
        setOwn(target, key, created);
        target = created;
      }
    }
    setOwn(target, keys.at(-1)!, defaultValue);
  }
  return defaults;
}

/** The payload with the defaults where it has no value, objects merged key by key; what the payload holds wins. */
export function withDefaults(defaults: Record<string, unknown>, payload: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) setOwn(merged, key, value);
  for (const [key, value] of Object.entries(payload)) {
    const fallback = Object.hasOwn(merged, key) ? merged[key] : undefined;
    setOwn(merged, key, isPlainObject(fallback) && isPlainObject(value) ? withDefaults(fallback, value) : value);
  }
  return merged;
}
