import { create, type JsonObject } from "@bufbuild/protobuf";
import { contextsV1 } from "@notify/proto";
import { CONTEXT_KEY, CONTEXT_NAME, MAX_CONTEXT_DATA_BYTES, MAX_CONTEXTS } from "@notify/runtime";
import { z } from "zod";
import { jsonObject } from "../validation.js";

/** A context's type or id: Novu's pattern and length. */
export const contextName = (name: string) =>
  z.string({ error: `${name} must be a string` }).regex(CONTEXT_NAME, `${name} must be 1 to 100 letters, digits, _ or -`);

/** Context keys as the API names them ("<type>:<id>"), at most as many as a trigger may name. */
export const contextKeys = z
  .array(z.string().regex(CONTEXT_KEY, "a context key is <type>:<id>"))
  .max(MAX_CONTEXTS, `contextKeys must contain no more than ${MAX_CONTEXTS} elements`);

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
