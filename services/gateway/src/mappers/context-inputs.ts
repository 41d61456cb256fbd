import { create, type JsonObject } from "@bufbuild/protobuf";
import { contextsV1 } from "@notify/proto";
import { z } from "zod";
import { jsonObject } from "../validation.js";

/** A context's type or id: Novu's pattern and length. */
export const contextName = (name: string) =>
  z.string({ error: `${name} must be a string` }).regex(/^[a-zA-Z0-9_-]{1,100}$/, `${name} must be 1 to 100 letters, digits, _ or -`);

/** A context key as the API names one: "<type>:<id>". */
export const contextKey = z.string().regex(/^[a-zA-Z0-9_-]{1,100}:[a-zA-Z0-9_-]{1,100}$/, "a context key is <type>:<id>");

const MAX_CONTEXT_DATA_BYTES = 64 * 1024;
export const MAX_CONTEXTS = 5;

/** A context's data: an object of at most 64 KiB as JSON. */
export const contextData = jsonObject.refine(
  (value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_CONTEXT_DATA_BYTES,
  `data must be at most ${MAX_CONTEXT_DATA_BYTES / 1024} KiB`,
);

/**
 * A trigger's or an Inbox session's `context`: up to five entries by type, each an id or
 * `{id, data?}` (the data is used only when the context is new). Other fields of an entry are
 * kept, unused: a session's contextHash signs the context as the client sent it.
 */
export const contextBody = z
  .record(
    contextName("a context type"),
    z.union([contextName("a context id"), z.looseObject({ id: contextName("id"), data: contextData.optional() })], {
      error: "each context is an id, or an object {id, data} whose data is an object of at most 64 KiB",
    }),
    {
      error: "context must be an object",
    },
  )
  .refine((value) => Object.keys(value).length <= MAX_CONTEXTS, `context names at most ${MAX_CONTEXTS} contexts`);

export type ContextBody = z.infer<typeof contextBody>;

/** The contexts a `context` names, as the services take them. */
export function contextInputsOf(context: ContextBody): contextsV1.ContextInput[] {
  return Object.entries(context).map(([type, value]) => {
    const input = create(contextsV1.ContextInputSchema, { type, id: typeof value === "string" ? value : value.id });
    if (typeof value !== "string" && value.data) input.data = value.data as JsonObject;
    return input;
  });
}
