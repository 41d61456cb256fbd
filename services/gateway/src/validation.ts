import { writtenHostRefusal, writtenUrlRefusal, type NamePolicy } from "@notify/providers";
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

/** The longest string a field error shows as the value it refuses. */
const MAX_ECHOED_LENGTH = 256;

/**
 * What a field error shows of a refused value: a number, boolean, null or short string as sent;
 * nothing of a longer string, an array or an object, whose size and depth are the client's to
 * choose (an error must not cost more to answer than the request cost to send).
 */
function echoed(value: unknown): JsonValue | undefined {
  if (typeof value === "string") return value.length <= MAX_ECHOED_LENGTH ? value : undefined;
  if (typeof value === "number" || typeof value === "boolean" || value === null) return value;
  return undefined;
}

/** A field error: its messages, and the refused value where it is shown (echoed). */
function fieldError(value: unknown, messages: string[] = []): FieldErrors[string] {
  const shown = echoed(value);
  return shown === undefined ? { messages } : { messages, value: shown };
}

/** A query key written with brackets, as clients send a list (`tags[]=a&tags[]=b`); a group's index (`tags[0][]`) is not. */
const LIST_KEY = /^([^[\]]+)\[\]$/;

/**
 * The query as Novu's server reads it: `name[]` values join `name`'s in one list, as Express
 * parses them, where Node's parser keeps "name[]" as a key of its own. SDKs send lists either way
 * (axios brackets them: @novu/node's `transactionId[]`).
 */
export function listsJoined(query: Record<string, unknown>): Record<string, unknown> {
  // No prototype, as Node's parser makes the query: a key named __proto__ is only a key.
  const joined: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(query)) {
    const name = LIST_KEY.exec(key)?.[1] ?? key;
    const values = Array.isArray(value) ? value : [value];
    const before = joined[name];
    joined[name] = before === undefined ? (name === key ? value : values) : [...(Array.isArray(before) ? before : [before]), ...values];
  }
  return joined;
}

/** Parses `input` or throws a 422 whose `errors` name every failing field, with its value when short (echoed). */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = fieldPath(issue.path);
    const entry = (errors[field] ??= fieldError(valueAt(input, issue.path)));
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

/** An `_id` (24 hex characters, as Novu's Mongo ids are), with a message that names the field. */
export const objectIdString = (name: string) => z.string({ error: `${name} must be a string` }).regex(/^[0-9a-f]{24}$/, `${name} must be a mongodb id`);

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

/** What a user-set destination is: a URL the system will call, or a host it will connect to. */
type OutboundKind = "url" | "host";

/** The body fields that name a destination, found in route schemas by `outboundCheck`. */
const outboundFields = z.registry<{ kind: OutboundKind }>();

/** A URL the system will call (a webhook, a provider's base URL): vetted when written (`outboundCheck`). */
export const outboundUrl = (name: string) => z.string({ error: `${name} must be a string` }).register(outboundFields, { kind: "url" });

/** A host the system will connect to (an SMTP server): vetted when written (`outboundCheck`). */
export const outboundHost = (name: string) => z.string({ error: `${name} must be a string` }).register(outboundFields, { kind: "host" });

const EACH = Symbol("each");
type Step = string | typeof EACH;
interface OutboundPath {
  steps: Step[];
  kind: OutboundKind;
}

/** Where `schema` holds destination fields, array items as EACH; unions contribute every option's paths. */
function outboundPaths(schema: z.ZodType, steps: Step[]): OutboundPath[] {
  const marked = outboundFields.get(schema);
  if (marked) return [{ steps, kind: marked.kind }];
  if (schema instanceof z.ZodObject) return Object.entries(schema.shape).flatMap(([key, child]) => outboundPaths(child, [...steps, key]));
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault)
    return outboundPaths(schema.unwrap() as z.ZodType, steps);
  if (schema instanceof z.ZodArray) return outboundPaths(schema.element as z.ZodType, [...steps, EACH]);
  if (schema instanceof z.ZodUnion) return schema.options.flatMap((option) => outboundPaths(option as z.ZodType, steps));
  if (schema instanceof z.ZodPipe && outboundPaths(schema.in as z.ZodType, steps).length > 0) {
    // The parsed body is the transform's output: paths read from its input could miss a field.
    throw new Error(`destination fields under a transform (${fieldPath(steps.map(String))}) cannot be vetted`);
  }
  return [];
}

interface Destination {
  path: PropertyKey[];
  kind: OutboundKind;
  value: string;
}

/** The destination values present in a parsed body. */
function destinationsAt(value: unknown, { steps, kind }: OutboundPath, path: PropertyKey[] = [], found: Destination[] = []): Destination[] {
  const [step, ...rest] = steps;
  if (step === undefined) {
    // An empty value sets no destination (clients send "" for a field left blank).
    if (typeof value === "string" && value !== "") found.push({ path, kind, value });
  } else if (step === EACH) {
    if (Array.isArray(value)) for (const [index, item] of value.entries()) destinationsAt(item, { steps: rest, kind }, [...path, index], found);
  } else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    destinationsAt((value as Record<string, unknown>)[step], { steps: rest, kind }, [...path, step], found);
  }
  return found;
}

/** How long a write waits for a name to resolve; a name not resolved by then is vetted when called. */
const RESOLVE_TIMEOUT_MS = 2_000;

/**
 * The check of a route's destination fields (outboundUrl, outboundHost) against the outbound
 * policy, or undefined when its body has none. A destination the guard would refuse when called
 * (a literal forbidden address in any notation, or a name resolving to one) is a 422 naming the
 * field, before anything is written; a name that does not resolve passes, and is vetted when called.
 */
export function outboundCheck(body: z.ZodType): ((parsed: unknown, policy: NamePolicy) => Promise<void> | undefined) | undefined {
  const unique = new Map(outboundPaths(body, []).map((path) => [`${path.kind}:${path.steps.map(String).join("/")}`, path]));
  const paths = [...unique.values()];
  if (paths.length === 0) return undefined;
  // Synchronous when the body sets no destination: a trigger naming its recipients by id waits for nothing.
  return (parsed, policy) => {
    const destinations = paths.flatMap((path) => destinationsAt(parsed, path));
    return destinations.length === 0 ? undefined : vet(destinations, policy);
  };
}

async function vet(destinations: Destination[], policy: NamePolicy): Promise<void> {
  // One check per distinct destination: a trigger may repeat a webhook URL for each of its recipients.
  const checks = new Map<string, Promise<string | undefined>>();
  const refusals = await Promise.all(
    destinations.map(({ kind, value }) => {
      const key = `${kind} ${value}`;
      let check = checks.get(key);
      if (!check) {
        check = kind === "url" ? writtenUrlRefusal(value, policy, RESOLVE_TIMEOUT_MS) : writtenHostRefusal(value, policy, RESOLVE_TIMEOUT_MS);
        checks.set(key, check);
      }
      return check;
    }),
  );
  const errors: FieldErrors = {};
  destinations.forEach(({ path, value }, index) => {
    const refusal = refusals[index];
    if (refusal) errors[fieldPath(path)] = fieldError(value, [`${String(path.at(-1))} ${refusal}`]);
  });
  if (Object.keys(errors).length > 0) throw validationError(errors);
}
