import type { FieldErrors } from "@notify/runtime";
import type { JsonValue } from "@bufbuild/protobuf";
import { z } from "zod";
import { validationError } from "./errors.js";

/** `steps[1].metadata.unit` from zod's ["steps", 1, "metadata", "unit"]. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "general";
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

/** Parses `input` or throws a 422 whose `errors` name every failing field with its value. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = fieldPath(issue.path);
    const value = valueAt(input, issue.path);
    const entry = (errors[field] ??= value === undefined ? { messages: [] } : { messages: [], value: value as JsonValue });
    entry.messages.push(issue.message);
  }
  throw validationError(errors);
}

/** A JSON object (not an array, not null). */
export const jsonObject = z.record(z.string(), z.unknown(), { error: "must be an object" });

/** A key or id: a non-empty string of at most 255 characters, with messages that name the field. */
export const keyString = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .min(1, `${name} should not be empty`)
    .max(255, `${name} must be shorter than or equal to 255 characters`);

/** A query-string integer. */
export const queryInt = (fallback: number, min: number, max: number) =>
  z.coerce
    .number({ error: "must be a number" })
    .int("must be an integer")
    // Each check names its own message: zod gives a check without one the type's ("must be a number").
    .min(min, `must not be less than ${min}`)
    .max(max, `must not be greater than ${max}`)
    .default(fallback);

/** A query-string boolean: "true"/"false" only. */
export const queryBool = z.enum(["true", "false"], { error: "must be true or false" }).transform((value) => value === "true");
